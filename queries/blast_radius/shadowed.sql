-- Per pair of prefill [[capacity]] entries (the one that decides, a later one it shadows:
-- `capacity_shadowed`, shadowed_segments.sql) the case's requests (any model, any time) in
-- their shared segments, by the entries' file order.
SELECT s.decides, s.shadowed, count(*) AS requests
FROM capacity_shadowed AS s
JOIN case_requests AS r
  ON r.prefill_node IS NOT DISTINCT FROM s.prefill_node
 AND r.model = s.model
 AND r.ts >= s.seg_start
 AND (s.seg_end IS NULL OR r.ts < s.seg_end)
GROUP BY s.decides, s.shadowed
ORDER BY s.decides, s.shadowed
