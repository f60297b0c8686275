-- Per input (requests.source) and UTC hour of the window [$window_start, $window_end) (`hour`:
-- whole hours since the epoch): the loaded records (any model: a gap in a log is a gap
-- whatever it served), those of the case's models (in scope), and the in-scope ones without
-- a prefill node, a decode node, an end time or a completion token count. One scan of
-- `requests`, grouped by input, hour and model; the models are matched on that small result.
-- (Hours as integers from whole epoch seconds: date_trunc on a TIMESTAMPTZ costs several
-- times more per row.)
WITH per_model AS (
    SELECT
        source,
        hour,
        model,
        count(*) AS records,
        count(*) FILTER (WHERE prefill_node IS NULL) AS no_prefill_node,
        count(*) FILTER (WHERE decode_node IS NULL) AS no_decode_node,
        count(*) FILTER (WHERE ts_end IS NULL) AS no_ts_end,
        count(*) FILTER (WHERE completion_tokens IS NULL) AS no_completion_tokens
    FROM (
        SELECT
            r.source, CAST(floor(epoch(r.ts)) AS BIGINT) // 3600 AS hour, r.model,
            r.prefill_node, r.decode_node, r.ts_end, r.completion_tokens
        FROM requests AS r
        WHERE r.ts >= $window_start AND r.ts < $window_end
    ) AS w
    GROUP BY source, hour, model
)
SELECT
    p.source,
    p.hour,
    CAST(sum(p.records) AS BIGINT) AS records,
    CAST(coalesce(sum(CASE WHEN m.model IS NOT NULL THEN p.records END), 0) AS BIGINT) AS in_scope,
    CAST(coalesce(sum(CASE WHEN m.model IS NOT NULL THEN p.no_prefill_node END), 0) AS BIGINT)
        AS no_prefill_node,
    CAST(coalesce(sum(CASE WHEN m.model IS NOT NULL THEN p.no_decode_node END), 0) AS BIGINT)
        AS no_decode_node,
    CAST(coalesce(sum(CASE WHEN m.model IS NOT NULL THEN p.no_ts_end END), 0) AS BIGINT)
        AS no_ts_end,
    CAST(coalesce(sum(CASE WHEN m.model IS NOT NULL THEN p.no_completion_tokens END), 0) AS BIGINT)
        AS no_completion_tokens
FROM per_model AS p
LEFT JOIN (SELECT DISTINCT model FROM case_models) AS m ON m.model = p.model
GROUP BY p.source, p.hour
ORDER BY p.source, p.hour
