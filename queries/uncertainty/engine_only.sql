-- Category engine_only (direction max): bootstrap_rooms with the bug's signature in the
-- engine logs (`engine_signature`) that no exposed gateway request carries, and that no
-- gateway request with that bootstrap_room explains: an excluded account, or a status not in
-- success_status (the response was not delivered). What is left (no gateway record, a
-- gateway record outside the window or models, or one the bands do not call exposed) could
-- be an exposed response the gateway count misses. Rows name the room, and the gateway
-- request_id where there is one (the smallest, if several).
WITH sig AS (
    SELECT DISTINCT bootstrap_room AS room FROM engine_signature
),
hits AS (
    SELECT
        r.request_id,
        try_cast(r.extra ->> 'bootstrap_room' AS BIGINT) AS room,
        r.account_id,
        coalesce(r.status, $default_status) AS status
    FROM case_requests AS r
    WHERE try_cast(r.extra ->> 'bootstrap_room' AS BIGINT) IN (SELECT room FROM sig)
),
per_room AS (
    SELECT
        g.room,
        min(h.request_id) AS request_id,
        bool_or(e.request_id IS NOT NULL) AS matched,
        bool_or(x.account_id IS NOT NULL OR (h.request_id IS NOT NULL AND s.status IS NULL))
            AS explained
    FROM sig AS g
    LEFT JOIN hits AS h ON h.room = g.room
    LEFT JOIN (SELECT request_id FROM bands WHERE band = 'exposed') AS e
      ON e.request_id = h.request_id
    LEFT JOIN case_exclusions AS x ON x.account_id = h.account_id
    LEFT JOIN (SELECT DISTINCT status FROM case_success_status) AS s ON s.status = h.status
    GROUP BY g.room
)
SELECT
    'engine_only' AS category,
    'max' AS direction,
    request_id,
    CAST(NULL AS VARCHAR) AS source,
    CAST(NULL AS BIGINT) AS row,
    room AS bootstrap_room
FROM per_room
WHERE NOT coalesce(matched, FALSE) AND NOT coalesce(explained, FALSE)
