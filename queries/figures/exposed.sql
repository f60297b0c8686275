-- Every exposed response for the timeline: time (ISO UTC), account, prompt size; sorted.
SELECT strftime(ts AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') AS ts,
       account_id,
       prompt_tokens
FROM bands
WHERE band = 'exposed'
ORDER BY bands.ts, request_id
