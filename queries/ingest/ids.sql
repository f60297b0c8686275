-- Each record of one input with the 64-bit hash of its mapped request_id (NULL when it has
-- none): what the duplicate checks group and join on, computed once (for JSON lines, one
-- parse; no WHERE, which DuckDB would evaluate as a second extraction). Over `_ing_mapped`
-- (the caller's CTE): only request_id is computed.
SELECT
    __row,
    CASE WHEN v_request_id IS NOT NULL THEN hash(v_request_id) END AS h
FROM _ing_mapped
