-- Whether any request of the logs may keep a field the probing tests read from `extra`
-- (max_tokens, prefix_hash, hash_ids): a text search of the JSON, far cheaper than parsing
-- it, so classify/fields.sql (which parses it for the requests in scope) runs only then. A
-- match inside another value only means the exact query runs.
SELECT count(*) > 0 AS present
FROM (
    SELECT 1
    FROM case_requests
    WHERE contains(CAST(extra AS VARCHAR), '"max_tokens"')
       OR contains(CAST(extra AS VARCHAR), '"prefix_hash"')
       OR contains(CAST(extra AS VARCHAR), '"hash_ids"')
    LIMIT 1
)
