-- Requests for the prompt-size chart. Every band except `fits` is kept up to $cap rows per
-- band (exposed and excluded always in full); `fits` only from $min_prompt tokens (the
-- long-context baseline), capped at $cap. Sampling is deterministic (md5 of request_id).
WITH picked AS (
    SELECT ts, account_id, prompt_tokens, band, request_id,
           row_number() OVER (PARTITION BY band ORDER BY md5(request_id), request_id) AS pick
    FROM bands
    WHERE band <> 'fits' OR prompt_tokens >= $min_prompt
)
SELECT strftime(ts AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') AS ts,
       account_id,
       prompt_tokens,
       band,
       CASE band WHEN 'fits' THEN 0 WHEN 'exposed' THEN 5 WHEN 'excluded' THEN 4 ELSE 2 END
           AS "order"
FROM picked
WHERE pick <= $cap OR band IN ('exposed', 'excluded')
ORDER BY picked.ts, request_id
