-- The regulator summary's exposed responses by what reached the client, by the notices' rule:
-- delivered (completion_tokens > 0 and a status the logs record), not_recorded (content
-- generated, but the logs record no status: the range's `status_unknown`, delivery assumed,
-- never claimed), empty (= 0: nothing was generated), unknown (NULL: the log gives no count).
-- The four sum to the exposure count.
WITH unrecorded AS (
    SELECT DISTINCT request_id
    FROM notify_range
    WHERE category = 'status_unknown' AND direction = 'min' AND request_id IS NOT NULL
)
SELECT
    count(CASE WHEN b.completion_tokens > 0 AND u.request_id IS NULL THEN 1 END) AS delivered,
    count(CASE WHEN b.completion_tokens > 0 AND u.request_id IS NOT NULL THEN 1 END)
        AS not_recorded,
    count(CASE WHEN b.completion_tokens = 0 THEN 1 END) AS empty,
    count(CASE WHEN b.completion_tokens IS NULL THEN 1 END) AS unknown
FROM bands AS b
LEFT JOIN unrecorded AS u ON u.request_id = b.request_id
WHERE b.band = 'exposed'
