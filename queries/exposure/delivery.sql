-- Exposed responses by what reached the client (summary.json `exposed_by_delivery`):
-- delivered (completion_tokens > 0), empty (= 0: nothing was generated) or unknown (NULL:
-- the mapping names no completion_tokens, or the record gave none; never read as 0).
SELECT
    count(CASE WHEN completion_tokens > 0 THEN 1 END) AS delivered,
    count(CASE WHEN completion_tokens = 0 THEN 1 END) AS empty,
    count(CASE WHEN completion_tokens IS NULL THEN 1 END) AS unknown
FROM bands
WHERE band = 'exposed'
