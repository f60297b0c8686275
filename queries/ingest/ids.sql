-- Each record of one input with the 64-bit hash of its mapped request_id (NULL when it has
-- none): what the duplicate checks group and join on, computed once (for JSON lines, one
-- parse; no WHERE, which DuckDB would evaluate as a second extraction). Over `_ing_mapped`
-- (the caller's CTE): only request_id is computed. Hashed in Unicode normal form C, so that
-- ids that differ only by normalization meet in ingest_classify.
SELECT
    __row,
    CASE WHEN v_request_id IS NOT NULL THEN hash(nfc_normalize(v_request_id)) END AS h
FROM _ing_mapped
