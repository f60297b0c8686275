-- Engine signature (engine_signature) against the gateway's exposed requests (bands), joined
-- on bootstrap_room (requests.extra ->> 'bootstrap_room'). One row per (side, reason).
-- side: matched | gateway_only (exposed, not confirmed) | engine_only (confirmed, not exposed)
-- A gateway-only request the engine refused without a transfer (engine_refused) says so.
-- engine_only reasons name why the gateway does not count it as exposed: the excluded
-- account's reason, the gateway status of an undelivered response, or the band.
WITH gateway AS (
    SELECT
        r.request_id, try_cast(r.extra ->> 'bootstrap_room' AS BIGINT) AS room, b.band,
        b.status, b.exclusion_reason
    FROM case_requests AS r
    LEFT JOIN bands AS b USING (request_id)
),
exposed AS (
    SELECT request_id, room FROM gateway WHERE band = 'exposed'
),
legs AS (
    SELECT
        bootstrap_room AS room,
        bool_or(role = 'prefill') AS has_prefill,
        bool_or(role = 'decode') AS has_decode
    FROM (
        SELECT bootstrap_room, role FROM case_engine_requests WHERE bootstrap_room IS NOT NULL
        UNION ALL
        SELECT bootstrap_room, role FROM case_engine_aborts WHERE bootstrap_room IS NOT NULL
    )
    GROUP BY bootstrap_room
),
sig AS (
    SELECT DISTINCT bootstrap_room AS room FROM engine_signature
),
refused AS (
    SELECT DISTINCT bootstrap_room AS room FROM engine_refused
),
gateway_side AS (
    SELECT
        CASE WHEN s.room IS NOT NULL THEN 'matched' ELSE 'gateway_only' END AS side,
        CASE
            WHEN s.room IS NOT NULL THEN 'exposed and engine-confirmed'
            WHEN e.room IS NULL THEN 'gateway record has no bootstrap_room'
            WHEN l.room IS NULL THEN 'no engine log line for this bootstrap_room'
            WHEN f.room IS NOT NULL
                THEN 'the engine refused it without a KV transfer (prefill retired it at intake, SGLang 0.5.21+): no exposure in the engine logs'
            WHEN NOT l.has_prefill THEN 'no prefill leg in the engine logs'
            WHEN NOT l.has_decode THEN 'no decode leg in the engine logs'
            ELSE 'engine legs present but not the signature (prefill not rejected for capacity, or decode did not finish normally)'
        END AS reason,
        e.request_id,
        e.room
    FROM exposed AS e
    LEFT JOIN sig AS s ON s.room = e.room
    LEFT JOIN legs AS l ON l.room = e.room
    LEFT JOIN refused AS f ON f.room = e.room
),
engine_side AS (
    SELECT
        'engine_only' AS side,
        CASE
            WHEN g.request_id IS NULL THEN 'no gateway request with this bootstrap_room'
            WHEN g.band IS NULL THEN 'gateway request outside the case window or models'
            WHEN g.band = 'excluded'
                THEN 'excluded account (' || coalesce(g.exclusion_reason, 'no reason') || ')'
            WHEN g.band = 'over_capacity_failed'
                THEN 'gateway status ' || coalesce(CAST(g.status AS VARCHAR), 'unknown')
                    || ': response not delivered to the client (band over_capacity_failed)'
            WHEN g.band = 'fits'
                THEN 'gateway band fits: prompt within the [[capacity]] in force (check the case capacity)'
            ELSE 'gateway band ' || g.band
        END AS reason,
        g.request_id,
        s.room
    FROM sig AS s
    LEFT JOIN gateway AS g ON g.room = s.room
    WHERE s.room NOT IN (SELECT room FROM exposed WHERE room IS NOT NULL)
)
SELECT
    side,
    reason,
    count(*) AS n,
    list(request_id ORDER BY request_id) FILTER (WHERE request_id IS NOT NULL) AS request_ids,
    list(CAST(room AS VARCHAR) ORDER BY room) FILTER (WHERE room IS NOT NULL) AS rooms
FROM (SELECT * FROM gateway_side UNION ALL SELECT * FROM engine_side)
GROUP BY side, reason
ORDER BY side, reason
