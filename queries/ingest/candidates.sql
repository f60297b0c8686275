-- The rows of one input whose request_id needs a content comparison (ingest_classify): the
-- id is on more than one of its records (valid or not), or already in `requests`. They are
-- typed (these only) and compared before the direct load, which takes every other record as
-- it is. Over `_ing_mapped` (the caller's CTE): only request_id is computed, hashed once
-- (for JSON lines, one parse; no WHERE on it, which DuckDB would evaluate as a second
-- extraction). Repeats are hashes equal to their predecessor in sorted order (a sort of
-- integers: cheaper than grouping millions of distinct keys); a hash collision only adds a
-- candidate. EXISTS, a semi join, spills when `requests` is large.
WITH ids AS MATERIALIZED (
    SELECT __row, CASE WHEN v_request_id IS NOT NULL THEN hash(v_request_id) END AS h
    FROM _ing_mapped
),
keys AS (
    SELECT h
    FROM (SELECT h, lag(h) OVER (ORDER BY h) AS before FROM ids WHERE h IS NOT NULL)
    WHERE h = before
    UNION
    SELECT hash(r.request_id)
    FROM requests AS r
    WHERE EXISTS (SELECT 1 FROM ids AS i WHERE i.h = hash(r.request_id))
)
SELECT __row FROM ids WHERE h IN (SELECT h FROM keys)
