-- Exposed responses per UTC hour and prompt-size band of $step tokens (the timeline above the
-- mark threshold, more accounts than lanes); sorted. The hour is formatted once per cell.
SELECT strftime(hour, '%Y-%m-%dT%H:%M:%SZ') AS start, prompt_from, responses
FROM (
    SELECT date_trunc('hour', ts AT TIME ZONE 'UTC') AS hour,
           CAST(floor(prompt_tokens / $step) AS BIGINT) * $step AS prompt_from,
           count(*) AS responses
    FROM bands
    WHERE band = 'exposed'
    GROUP BY 1, 2
) AS cells
ORDER BY hour, prompt_from
