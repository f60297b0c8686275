-- Exposed responses per UTC hour and account (the timeline above the mark threshold, at most
-- MAX_ACCOUNT_LANES accounts), with the smallest and largest prompt of each; sorted. The hour
-- is formatted once per cell, after counting.
SELECT strftime(hour, '%Y-%m-%dT%H:%M:%SZ') AS start, account_id, responses, smallest, largest
FROM (
    SELECT date_trunc('hour', ts AT TIME ZONE 'UTC') AS hour,
           account_id,
           count(*) AS responses,
           min(prompt_tokens) AS smallest,
           max(prompt_tokens) AS largest
    FROM bands
    WHERE band = 'exposed'
    GROUP BY 1, 2
) AS cells
ORDER BY hour, account_id
