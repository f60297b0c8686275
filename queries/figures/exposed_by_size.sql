-- Exposed responses per UTC hour and prompt-size band of $step tokens (the timeline above the
-- mark threshold, more accounts than lanes); sorted.
SELECT strftime(date_trunc('hour', ts AT TIME ZONE 'UTC'), '%Y-%m-%dT%H:%M:%SZ') AS start,
       CAST(floor(prompt_tokens / $step) AS BIGINT) * $step AS prompt_from,
       count(*) AS responses
FROM bands
WHERE band = 'exposed'
GROUP BY 1, 2
ORDER BY 1, 2
