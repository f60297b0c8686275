-- Whether any request in scope (of the case's models in the window: the rows of `bands`) may
-- keep a field the probing tests read from `extra` (max_tokens, prefix_hash, hash_ids): a
-- text search of the JSON, far cheaper than parsing it, so classify/fields.sql (which parses
-- it for those requests) runs only then. A match inside another value only means the exact
-- query runs. (Only the requests in scope are searched: those outside it are never read.)
SELECT count(*) > 0 AS present
FROM (
    SELECT 1
    FROM case_requests
    WHERE model IN (SELECT model FROM case_models)
      AND ts >= $window_start
      AND ts < $window_end
      AND (
          contains(CAST(extra AS VARCHAR), '"max_tokens"')
          OR contains(CAST(extra AS VARCHAR), '"prefix_hash"')
          OR contains(CAST(extra AS VARCHAR), '"hash_ids"')
      )
    LIMIT 1
)
