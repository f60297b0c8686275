-- Per input (requests.source) and UTC hour of the window [$window_start, $window_end): the
-- loaded records (any model: a gap in a log is a gap whatever it served), those of the
-- case's models (in scope), and the in-scope ones without a prefill node, a decode node, an
-- end time or a completion token count. One scan of `requests`.
SELECT
    r.source,
    date_trunc('hour', r.ts) AS hour,
    count(*) AS records,
    count(m.model) AS in_scope,
    count(m.model) FILTER (WHERE r.prefill_node IS NULL) AS no_prefill_node,
    count(m.model) FILTER (WHERE r.decode_node IS NULL) AS no_decode_node,
    count(m.model) FILTER (WHERE r.ts_end IS NULL) AS no_ts_end,
    count(m.model) FILTER (WHERE r.completion_tokens IS NULL) AS no_completion_tokens
FROM requests AS r
LEFT JOIN (SELECT DISTINCT model FROM case_models) AS m ON m.model = r.model
WHERE r.ts >= $window_start AND r.ts < $window_end
GROUP BY r.source, date_trunc('hour', r.ts)
ORDER BY r.source, hour
