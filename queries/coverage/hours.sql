-- Per input (requests.source) and UTC hour of the window [$window_start, $window_end) (`hour`:
-- whole hours since the epoch; NULL for the records outside the window): the loaded records
-- (any model: a gap in a log is a gap whatever it served), their first and last ts, those of
-- the case's models inside the window (in scope), and the in-scope ones without a prefill
-- node, a decode node, an end time, a completion token count or a status. One scan of the
-- case's requests, grouped by input, hour and model; the models are matched on that small
-- result. (Hours as integers from whole epoch seconds: date_trunc on a TIMESTAMPTZ costs
-- several times more per row.)
WITH per_model AS (
    SELECT
        source,
        hour,
        model,
        count(*) AS records,
        min(ts) AS first_ts,
        max(ts) AS last_ts,
        count(*) FILTER (WHERE prefill_node IS NULL) AS no_prefill_node,
        count(*) FILTER (WHERE decode_node IS NULL) AS no_decode_node,
        count(*) FILTER (WHERE ts_end IS NULL) AS no_ts_end,
        count(*) FILTER (WHERE completion_tokens IS NULL) AS no_completion_tokens,
        count(*) FILTER (WHERE status IS NULL) AS no_status
    FROM (
        SELECT
            r.source,
            CASE
                WHEN r.ts >= $window_start AND r.ts < $window_end
                    THEN CAST(floor(epoch(r.ts)) AS BIGINT) // 3600
            END AS hour,
            r.ts, r.model, r.prefill_node, r.decode_node, r.ts_end, r.completion_tokens, r.status
        FROM case_requests AS r
    ) AS w
    GROUP BY source, hour, model
),
scoped AS (
    SELECT p.*, m.model IS NOT NULL AND p.hour IS NOT NULL AS counted
    FROM per_model AS p
    LEFT JOIN (SELECT DISTINCT model FROM case_models) AS m ON m.model = p.model
)
SELECT
    source,
    hour,
    CAST(sum(records) AS BIGINT) AS records,
    min(first_ts) AS first_ts,
    max(last_ts) AS last_ts,
    CAST(coalesce(sum(CASE WHEN counted THEN records END), 0) AS BIGINT) AS in_scope,
    CAST(coalesce(sum(CASE WHEN counted THEN no_prefill_node END), 0) AS BIGINT)
        AS no_prefill_node,
    CAST(coalesce(sum(CASE WHEN counted THEN no_decode_node END), 0) AS BIGINT)
        AS no_decode_node,
    CAST(coalesce(sum(CASE WHEN counted THEN no_ts_end END), 0) AS BIGINT) AS no_ts_end,
    CAST(coalesce(sum(CASE WHEN counted THEN no_completion_tokens END), 0) AS BIGINT)
        AS no_completion_tokens,
    CAST(coalesce(sum(CASE WHEN counted THEN no_status END), 0) AS BIGINT) AS no_status
FROM scoped
GROUP BY source, hour
ORDER BY source, hour NULLS FIRST
