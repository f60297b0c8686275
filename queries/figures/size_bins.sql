-- The prompt-size chart above the mark threshold: requests per band, UTC hour and prompt-size
-- band of $step tokens (fits only from $min_prompt tokens); sorted. The hour is formatted
-- once per cell, after counting.
SELECT strftime(hour, '%Y-%m-%dT%H:%M:%SZ') AS start, band, prompt_from, requests
FROM (
    SELECT date_trunc('hour', ts AT TIME ZONE 'UTC') AS hour,
           band,
           CAST(floor(prompt_tokens / $step) AS BIGINT) * $step AS prompt_from,
           count(*) AS requests
    FROM bands
    WHERE band <> 'fits' OR prompt_tokens >= $min_prompt
    GROUP BY 1, 2, 3
) AS cells
ORDER BY hour, band, prompt_from
