-- The bug's own signature, one row per bootstrap_room: the prefill leg was rejected for
-- capacity (a kv_capacity / input_length abort on a prefill node, or a prefill ReqTimeStats
-- with input_len = 1, the one-token placeholder) while the decode leg with the same
-- bootstrap_room finished normally (output_len > 0, finish reason not abort).
WITH rejected AS (
    SELECT bootstrap_room, node, rid, requested_tokens, ts
    FROM engine_aborts
    WHERE role = 'prefill' AND kind IN ('kv_capacity', 'input_length')
        AND bootstrap_room IS NOT NULL
    UNION ALL
    SELECT bootstrap_room, node, rid, CAST(NULL AS BIGINT), ts
    FROM engine_requests
    WHERE role = 'prefill' AND kind = 'time_stats' AND input_len = 1
        AND bootstrap_room IS NOT NULL
),
prefill AS (
    SELECT
        bootstrap_room, min(node) AS prefill_node, min(rid) AS prefill_rid,
        max(requested_tokens) AS requested_tokens, min(ts) AS prefill_ts
    FROM rejected
    GROUP BY bootstrap_room
),
decode AS (
    SELECT
        bootstrap_room, min(node) AS decode_node, min(rid) AS decode_rid,
        max(output_len) AS output_len, max(ts) AS decode_ts
    FROM engine_requests
    WHERE role = 'decode' AND kind IN ('time_stats', 'finish') AND output_len > 0
        AND coalesce(finish_reason, '') <> 'abort' AND bootstrap_room IS NOT NULL
    GROUP BY bootstrap_room
)
SELECT
    bootstrap_room, prefill_node, prefill_rid, requested_tokens, prefill_ts, decode_node,
    decode_rid, output_len, decode_ts
FROM prefill
JOIN decode USING (bootstrap_room)
