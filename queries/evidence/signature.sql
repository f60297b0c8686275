-- The bug's own signature, one row per bootstrap_room: the prefill leg was refused at intake
-- and bootstrapped a one-token placeholder (SGLang up to 0.5.18) while the decode leg with the
-- same bootstrap_room decoded the full prompt and finished normally.
-- Prefill side, any of: an input_length / kv_capacity rejection on a prefill node (its room
-- taken from the rid's request lines), a prefill ReqTimeStats with input_len = 1 that ran
-- (output_len > 0), or a prefill Finish / metrics record with prompt_tokens = 1 that did not
-- abort. From 0.5.21 the prefill retires the request instead (abort, prompt_tokens 1,
-- output_len 0) and the decode never finishes: evidence/refused.sql counts those.
-- Decode side: a ReqTimeStats, Finish or metrics record of the decode leg with more than one
-- prompt token, output_len > 0 and a finish reason other than abort.
WITH rejected AS (
    SELECT bootstrap_room, node, rid, requested_tokens, ts
    FROM case_engine_aborts
    WHERE role = 'prefill' AND kind IN ('kv_capacity', 'input_length')
        AND bootstrap_room IS NOT NULL
    UNION ALL
    SELECT bootstrap_room, node, rid, CAST(NULL AS BIGINT), ts
    FROM case_engine_requests
    WHERE role = 'prefill' AND input_len = 1 AND bootstrap_room IS NOT NULL
        AND (
            (kind = 'time_stats' AND output_len > 0)
            OR (kind IN ('finish', 'metrics') AND coalesce(finish_reason, '') <> 'abort')
        )
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
    FROM case_engine_requests
    WHERE role = 'decode' AND kind IN ('time_stats', 'finish', 'metrics') AND output_len > 0
        AND input_len > 1 AND coalesce(finish_reason, '') <> 'abort'
        AND bootstrap_room IS NOT NULL
    GROUP BY bootstrap_room
)
SELECT
    bootstrap_room, prefill_node, prefill_rid, requested_tokens, prefill_ts, decode_node,
    decode_rid, output_len, decode_ts
FROM prefill
JOIN decode USING (bootstrap_room)
