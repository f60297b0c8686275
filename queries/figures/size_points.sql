-- Requests for the prompt-size chart, one dot each (drawn only when they are few): every band
-- except `fits`, and `fits` from $min_prompt tokens (the long-context baseline); sorted.
SELECT strftime(ts AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') AS ts,
       account_id,
       prompt_tokens,
       band,
       CASE band WHEN 'fits' THEN 0 WHEN 'exposed' THEN 5 WHEN 'excluded' THEN 4 ELSE 2 END
           AS "order"
FROM bands
WHERE band <> 'fits' OR prompt_tokens >= $min_prompt
ORDER BY bands.ts, request_id
