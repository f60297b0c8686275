-- The prompt-size chart above the mark threshold: requests per band, UTC hour and prompt-size
-- band of $step tokens (fits only from $min_prompt tokens); sorted.
SELECT strftime(date_trunc('hour', ts AT TIME ZONE 'UTC'), '%Y-%m-%dT%H:%M:%SZ') AS start,
       band,
       CAST(floor(prompt_tokens / $step) AS BIGINT) * $step AS prompt_from,
       count(*) AS requests
FROM bands
WHERE band <> 'fits' OR prompt_tokens >= $min_prompt
GROUP BY 1, 2, 3
ORDER BY 1, 2, 3
