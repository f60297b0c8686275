-- Category conflicting: a loaded request whose quarantined conflicting duplicate (same
-- request_id, other content; `range_quarantine`) would put it in the other exposure outcome
-- (direction min when the loaded record is exposed, max when it is not). The duplicate's
-- outcome is judged as bands.sql judges a request: a model of the case, ts in the window,
-- a success status (the default when it gave none), an account not excluded, a prompt
-- within the context window and above the prefill capacity in force for its node and model
-- at its ts.
-- Rows name the loaded request_id and the duplicate's source and row.
WITH conflicts AS (
    SELECT
        request_id, source, row, ts, account_id, model, prompt_tokens, prefill_node,
        coalesce(status, $default_status) AS status
    FROM range_quarantine
    WHERE reason = 'conflicting duplicate' AND request_id IS NOT NULL
),
first_match AS (
    SELECT q.source, q.row, min(c.ordinal) AS ordinal
    FROM conflicts AS q
    JOIN case_capacity AS c
      ON c.role = 'prefill'
     AND (c.nodes = '*' OR q.prefill_node GLOB c.nodes_glob)
     AND (c.models_glob IS NULL OR q.model GLOB c.models_glob)
     AND c.start_ts <= q.ts
     AND (c.end_ts IS NULL OR q.ts < c.end_ts)
    GROUP BY q.source, q.row
),
judged AS (
    SELECT
        q.request_id,
        q.source,
        q.row,
        coalesce(
            m.model IS NOT NULL
            AND q.ts >= $window_start
            AND q.ts < $window_end
            AND s.status IS NOT NULL
            AND x.account_id IS NULL
            AND q.prompt_tokens <= $context_window
            AND q.prompt_tokens >= coalesce(c.reject_from, c.tokens + 1),
            FALSE
        ) AS exposed_if,
        e.request_id IS NOT NULL AS exposed_now
    FROM conflicts AS q
    LEFT JOIN first_match AS f ON f.source = q.source AND f.row = q.row
    LEFT JOIN case_capacity AS c ON c.ordinal = f.ordinal
    LEFT JOIN (SELECT DISTINCT model FROM case_models) AS m ON m.model = q.model
    LEFT JOIN (SELECT DISTINCT status FROM case_success_status) AS s ON s.status = q.status
    LEFT JOIN case_exclusions AS x ON x.account_id = q.account_id
    LEFT JOIN (SELECT request_id FROM bands WHERE band = 'exposed') AS e
      ON e.request_id = q.request_id
)
SELECT
    'conflicting' AS category,
    CASE WHEN exposed_now THEN 'min' ELSE 'max' END AS direction,
    request_id,
    source,
    row,
    CAST(NULL AS BIGINT) AS bootstrap_room
FROM judged
WHERE exposed_if <> exposed_now
