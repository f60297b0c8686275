-- Category clock_skew: requests of the case's models whose exposure would differ at some
-- time t within [ts - $skew, ts + $skew] other than ts, with some prompt length within
-- [p - $tolerance, p + $tolerance] there (direction min for the exposed, max for the others),
-- requests just outside the window included. Exposed at (t, p'): t in the window, a prefill
-- [[capacity]] entry in force for the node (and model) at t (the first match in file order,
-- as in exposure/bands.sql) and over_from <= p' <= the context window; a success status and an
-- account not excluded do not depend on t. Some p' makes it exposed at t when
-- [p - tolerance, p + tolerance] meets [over_from, context window], some p' not when
-- p - tolerance < over_from or p + tolerance > the context window (or t is outside the window,
-- or no entry is in force). A length the engine logs give (`engine_lengths`) is exact: no
-- tolerance. At ts, and at a time where the window and the entry in force are those of ts,
-- only the exact length is judged (the lengths there are token_count.sql's), so the category
-- holds the requests that another time changes, alone or with another length.
-- The outcome changes only at an edge (a prefill entry's start or end, the window's start
-- or end), so only requests with an edge in (ts - skew, ts + skew] can change (`near`: found
-- by an equality join on $bucket_seconds-wide buckets of whole epoch seconds, each edge in
-- its own and the two neighbouring buckets, then the exact test), and for them the outcomes
-- at ts - skew and at each such edge cover every time in the interval.
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
    SELECT
        r.request_id, r.ts, r.prefill_node, r.model,
        coalesce(l.engine_prompt_tokens, r.prompt_tokens) AS prompt_tokens,
        CASE WHEN l.engine_prompt_tokens IS NULL THEN $tolerance ELSE 0 END AS tolerance
    FROM case_requests AS r
    LEFT JOIN engine_lengths AS l ON l.request_id = r.request_id
    WHERE r.model IN (SELECT model FROM case_models)
      AND r.ts >= $lo
      AND r.ts < $hi
      AND coalesce(r.status, $default_status) IN (SELECT status FROM case_success_status)
      AND r.account_id NOT IN (SELECT account_id FROM case_exclusions)
      AND coalesce(l.engine_prompt_tokens, r.prompt_tokens - $tolerance) <= $context_window
),
near AS (
    SELECT DISTINCT s.request_id, s.ts, s.prompt_tokens, s.tolerance, s.prefill_node, s.model
    FROM scoped AS s
    JOIN edge_buckets AS e
      ON e.bucket = CAST(floor(epoch(s.ts)) AS BIGINT) // $bucket_seconds
    WHERE e.edge > s.ts - $skew AND e.edge <= s.ts + $skew
),
probes AS (
    SELECT request_id, prompt_tokens, tolerance, prefill_node, model, ts AS t, TRUE AS at_ts
    FROM near
    UNION ALL
    SELECT request_id, prompt_tokens, tolerance, prefill_node, model, ts - $skew AS t, FALSE AS at_ts
    FROM near
    UNION ALL
    SELECT
        n.request_id, n.prompt_tokens, n.tolerance, n.prefill_node, n.model, e.edge AS t,
        FALSE AS at_ts
    FROM near AS n
    JOIN edges AS e ON e.edge > n.ts - $skew AND e.edge <= n.ts + $skew
),
first_match AS (
    SELECT p.request_id, p.t, p.at_ts, p.prompt_tokens, p.tolerance, min(c.ordinal) AS ordinal
    FROM probes AS p
    LEFT JOIN case_capacity AS c
      ON c.role = 'prefill'
     AND (c.nodes = '*' OR p.prefill_node GLOB c.nodes_glob)
     AND (c.models_glob IS NULL OR p.model GLOB c.models_glob)
     AND c.start_ts <= p.t
     AND (c.end_ts IS NULL OR p.t < c.end_ts)
    GROUP BY p.request_id, p.t, p.at_ts, p.prompt_tokens, p.tolerance
),
bounds AS (
    -- per probe: whether the request can be exposed there at all (t in the window, an entry
    -- in force), the entry's smallest prompt over it, the request's length and tolerance
    SELECT
        f.request_id,
        f.at_ts,
        coalesce(f.t >= $window_start AND f.t < $window_end AND c.ordinal IS NOT NULL, FALSE)
            AS in_force,
        coalesce(c.reject_from, c.tokens + 1) AS over_from,
        f.prompt_tokens AS p,
        f.tolerance
    FROM first_match AS f
    LEFT JOIN case_capacity AS c ON c.ordinal = f.ordinal
),
lengths AS (
    -- the tolerance applies where the time changes the conditions: none at ts, nor at a
    -- time judged as ts is (what a length within the tolerance does there is token_count's)
    SELECT
        b.*,
        CASE
            WHEN b.at_ts THEN 0
            WHEN b.in_force = t.in_force AND b.over_from IS NOT DISTINCT FROM t.over_from THEN 0
            ELSE b.tolerance
        END AS tol
    FROM bounds AS b
    JOIN (SELECT request_id, in_force, over_from FROM bounds WHERE at_ts) AS t
      ON t.request_id = b.request_id
),
outcomes AS (
    SELECT
        request_id,
        at_ts,
        coalesce(
            in_force
            AND p + tol >= over_from
            AND p - tol <= $context_window
            AND over_from <= $context_window,
            FALSE
        ) AS can_be_exposed,
        coalesce(
            NOT in_force OR p - tol < over_from OR p + tol > $context_window,
            TRUE
        ) AS can_be_not
    FROM lengths
),
judged AS (
    SELECT
        request_id,
        bool_or(can_be_exposed AND at_ts) AS exposed_at_ts,
        bool_or(can_be_exposed AND NOT at_ts) AS ever_exposed,
        bool_or(can_be_not AND NOT at_ts) AS ever_not
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
