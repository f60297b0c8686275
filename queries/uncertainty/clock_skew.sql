-- Category clock_skew: requests of the case's models whose exposure would differ at some
-- time t within [ts - $skew, ts + $skew] (direction min for the exposed, max for the others),
-- requests just outside the window included. Exposed at t: t in the window, a prefill
-- [[capacity]] entry in force for the node (and model) at t (the first match in file order, as in
-- exposure/bands.sql) and the prompt above it; a success status, an account not excluded
-- and a prompt within the context window do not depend on t.
-- The outcome changes only at an edge (a prefill entry's start or end, the window's start
-- or end), so only requests with an edge in (ts - skew, ts + skew] can change (`near`: found
-- by an equality join on $bucket_seconds-wide buckets of whole epoch seconds, each edge in
-- its own and the two neighbouring buckets, then the exact test), and for them the outcome
-- at ts - skew and at each such edge covers every time in the interval.
WITH edges AS (
    SELECT start_ts AS edge FROM case_capacity WHERE role = 'prefill'
    UNION
    SELECT end_ts AS edge FROM case_capacity WHERE role = 'prefill' AND end_ts IS NOT NULL
    UNION
    SELECT CAST($window_start AS TIMESTAMPTZ) AS edge
    UNION
    SELECT CAST($window_end AS TIMESTAMPTZ) AS edge
),
edge_buckets AS (
    SELECT edge, CAST(floor(epoch(edge)) AS BIGINT) // $bucket_seconds + k AS bucket
    FROM edges
    CROSS JOIN (SELECT unnest([-1, 0, 1]) AS k) AS neighbours
),
scoped AS (
    SELECT r.request_id, r.ts, r.prompt_tokens, r.prefill_node, r.model
    FROM requests AS r
    WHERE r.model IN (SELECT model FROM case_models)
      AND r.ts >= $lo
      AND r.ts < $hi
      AND coalesce(r.status, $default_status) IN (SELECT status FROM case_success_status)
      AND r.account_id NOT IN (SELECT account_id FROM case_exclusions)
      AND r.prompt_tokens <= $context_window
),
near AS (
    SELECT DISTINCT s.request_id, s.ts, s.prompt_tokens, s.prefill_node, s.model
    FROM scoped AS s
    JOIN edge_buckets AS e
      ON e.bucket = CAST(floor(epoch(s.ts)) AS BIGINT) // $bucket_seconds
    WHERE e.edge > s.ts - $skew AND e.edge <= s.ts + $skew
),
probes AS (
    SELECT request_id, prompt_tokens, prefill_node, model, ts AS t, TRUE AS at_ts FROM near
    UNION ALL
    SELECT request_id, prompt_tokens, prefill_node, model, ts - $skew AS t, FALSE AS at_ts
    FROM near
    UNION ALL
    SELECT n.request_id, n.prompt_tokens, n.prefill_node, n.model, e.edge AS t, FALSE AS at_ts
    FROM near AS n
    JOIN edges AS e ON e.edge > n.ts - $skew AND e.edge <= n.ts + $skew
),
first_match AS (
    SELECT p.request_id, p.t, p.at_ts, p.prompt_tokens, min(c.ordinal) AS ordinal
    FROM probes AS p
    LEFT JOIN case_capacity AS c
      ON c.role = 'prefill'
     AND (c.nodes = '*' OR p.prefill_node GLOB c.nodes_glob)
     AND (c.models_glob IS NULL OR p.model GLOB c.models_glob)
     AND c.start_ts <= p.t
     AND (c.end_ts IS NULL OR p.t < c.end_ts)
    GROUP BY p.request_id, p.t, p.at_ts, p.prompt_tokens
),
outcomes AS (
    SELECT
        f.request_id,
        f.at_ts,
        coalesce(
            f.t >= $window_start
            AND f.t < $window_end
            AND f.prompt_tokens >= coalesce(c.reject_from, c.tokens + 1),
            FALSE
        ) AS exposed
    FROM first_match AS f
    LEFT JOIN case_capacity AS c ON c.ordinal = f.ordinal
),
judged AS (
    SELECT
        request_id,
        bool_or(exposed AND at_ts) AS exposed_at_ts,
        bool_or(exposed) AS ever_exposed,
        bool_or(NOT exposed) AS ever_not
    FROM outcomes
    GROUP BY request_id
)
SELECT
    'clock_skew' AS category,
    CASE WHEN exposed_at_ts THEN 'min' ELSE 'max' END AS direction,
    request_id,
    CAST(NULL AS VARCHAR) AS source,
    CAST(NULL AS BIGINT) AS row,
    CAST(NULL AS BIGINT) AS bootstrap_room
FROM judged
WHERE (exposed_at_ts AND ever_not) OR (NOT exposed_at_ts AND ever_exposed)
