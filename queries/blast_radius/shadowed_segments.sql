-- The segments of `capacity_in_force` (exposure/capacity_in_force.sql) in which a later
-- prefill [[capacity]] entry than the one that decides also holds (its `nodes` glob matches
-- the node, a NULL node only "*"; its `models` glob, if any, the model; its [start, end) the
-- segment) and whose pool counts more prompts as over it (its smallest prompt over it,
-- reject_from else tokens + 1, is lower): the first in file order decides, and the later one,
-- which would count more requests as exposed, is shadowed there. (A later entry with the
-- larger pool is the usual override: a specific entry before a broader one.) Same-glob
-- overlaps with different tokens are refused when the case file is read.
SELECT
    f.prefill_node,
    f.model,
    f.seg_start,
    f.seg_end,
    f.ordinal AS decides,
    c.ordinal AS shadowed
FROM capacity_in_force AS f
JOIN case_capacity AS d ON d.ordinal = f.ordinal
JOIN case_capacity AS c
  ON c.role = 'prefill'
 AND c.ordinal > f.ordinal
 AND (c.nodes = '*' OR f.prefill_node GLOB c.nodes_glob)
 AND (c.models_glob IS NULL OR f.model GLOB c.models_glob)
 AND c.start_ts <= f.seg_start
 AND (c.end_ts IS NULL OR (f.seg_end IS NOT NULL AND f.seg_end <= c.end_ts))
WHERE coalesce(c.reject_from, c.tokens + 1) < coalesce(d.reject_from, d.tokens + 1)
