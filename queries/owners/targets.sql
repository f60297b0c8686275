-- The over-capacity responses to attribute, each with its band (`exposed_band`): band
-- exposed, and band excluded (an excluded account's over-capacity response, answered from
-- the same stale pages: set aside from the count, but the data it could carry was still at
-- risk). With the decode pool capacity in force for its decode node at its ts (first
-- [[capacity]] entry with role decode whose glob matches the node, whose `models` glob, if
-- any, matches the model and whose [start, end) holds ts; NULL when none, or when the
-- request has no decode node).
-- (`targets` is read twice: DuckDB keeps its few rows, where the view would scan `bands` twice)
WITH targets AS (
    SELECT request_id, account_id, ts, decode_node, model, band
    FROM bands
    WHERE band IN ('exposed', 'excluded')
),
first_match AS (
    SELECT e.request_id, min(c.ordinal) AS ordinal
    FROM targets AS e
    JOIN case_capacity AS c
      ON c.role = 'decode'
     AND (c.nodes = '*' OR e.decode_node GLOB c.nodes_glob)
     AND (c.models_glob IS NULL OR e.model GLOB c.models_glob)
     AND e.ts >= c.start_ts
     AND (c.end_ts IS NULL OR e.ts < c.end_ts)
    GROUP BY e.request_id
)
SELECT
    e.request_id AS exposed_request_id,
    e.account_id AS exposed_account_id,
    e.ts AS exposed_ts,
    e.decode_node,
    CAST(c.tokens AS BIGINT) AS decode_capacity,
    e.band AS exposed_band
FROM targets AS e
LEFT JOIN first_match AS f ON f.request_id = e.request_id
LEFT JOIN case_capacity AS c ON c.ordinal = f.ordinal
