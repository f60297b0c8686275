-- Engine server log lines consistent with a gateway log (for the bundled case), in the exact
-- spellings of SGLang 0.5.18 (the last release with the bug) run in disaggregated mode with
-- --enable-request-time-stats-logging (no request logs, SGLANG_LOG_MS unset): one row per
-- (node, ts, ord, line).
-- Startup, per node and server start: the server_args line (41 s before the pools; an
-- abbreviated ServerArgs(...): real ones list all 472 fields), one `KV Cache is allocated.
-- dtype: ...` line per rank (8 ranks, MLA: `KV size`), and the max_total_num_tokens line of
-- rank 0 30 s after the pools. Prefill nodes start at $boot (TP8) and again at $switch (DP8
-- TP8 EP8 with DP attention, pool $new_tokens); decode nodes start at $boot (TP8).
-- Per request, for long requests (prompt > $min_tokens) of $model that reached the engine
-- (routed by the gateway, or refused by the tokenizer with 400), on both legs:
--   prompt > $context_window: the tokenizer's `[http_server] Error: The input (N tokens) is
--     longer than the model's context length (C tokens).` on prefill and decode
--   prompt >= reject_from = min(C - 1, pool - 1) - 5 (tp_worker.py max_req_input_len): the
--     scheduler's `Input length (N tokens) exceeds the maximum allowed length (M tokens). ...,
--     self.rid='R'` (logged by global rank 0 only) and the prefill ReqTimeStats of the
--     one-token placeholder it bootstrapped (input_len=1, output_len=1)
--   else the prefill ReqTimeStats with the prompt
--   and the decode ReqTimeStats at the response's end with the full prompt and the gateway's
--   completion tokens (output_len=0: the decode produced nothing).
-- With DP attention each DP rank logs the ReqTimeStats of its own requests (DP rank: the
-- bootstrap_room mod 8). Durations are plausible figures derived from the request, not
-- measurements. Deterministic: no random draws.
-- Params: $gateway, $model, $min_tokens, $context_window, $prefill_nodes (list), $decode_nodes
-- (list), $boot (TIMESTAMPTZ), $switch (TIMESTAMPTZ), $old_tokens, $new_tokens, $decode_tokens.
WITH raw AS (
    SELECT DISTINCT
        id,
        try_cast("timestamp" AS TIMESTAMPTZ) AS ts,
        model,
        try_cast(usage.prompt_tokens AS BIGINT) AS prompt,
        try_cast(usage.completion_tokens AS BIGINT) AS completion,
        try_cast(latency_ms AS BIGINT) AS latency_ms,
        try_cast(status AS BIGINT) AS status,
        route.prefill AS prefill,
        route.decode AS decode,
        try_cast(route.bootstrap_room AS BIGINT) AS room
    FROM read_json(
        $gateway, format = 'newline_delimited', ignore_errors = true,
        columns = {
            'id': 'VARCHAR', 'timestamp': 'VARCHAR', 'model': 'VARCHAR',
            'usage': 'STRUCT(prompt_tokens VARCHAR, completion_tokens VARCHAR)',
            'latency_ms': 'VARCHAR', 'status': 'VARCHAR',
            'route': 'STRUCT(prefill VARCHAR, decode VARCHAR, bootstrap_room VARCHAR)'
        }
    )
),
req AS (
    SELECT
        *,
        coalesce(prefill, list_extract($prefill_nodes, 1 + CAST(room % len($prefill_nodes) AS INTEGER))) AS p_node,
        coalesce(decode, list_extract($decode_nodes, 1 + CAST(room % len($decode_nodes) AS INTEGER))) AS d_node,
        'p' || left(md5(id), 16) AS p_rid,
        'd' || left(md5(id), 16) AS d_rid,
        CASE WHEN ts < $switch THEN $old_tokens ELSE $new_tokens END AS pool,
        least($context_window - 1, (CASE WHEN ts < $switch THEN $old_tokens ELSE $new_tokens END) - 1) - 5
            AS reject_from,
        CASE WHEN ts < $switch THEN 'TP0'
             ELSE 'DP' || (room % 8) || ' TP' || (room % 8) || ' EP' || (room % 8) END AS p_tags,
        CASE WHEN ts < $switch THEN 'TP0' ELSE 'DP0 TP0 EP0' END AS p_rank0,
        ts + to_milliseconds(coalesce(latency_ms, 0)) AS ts_end,
        -- plausible durations (ms): bootstrap 4-9 ms, prefill at ~30k tokens/s, KV transfer
        -- of ~67 KB per token at ~21 GB/s, the rest of the latency decoding
        4.0 + (room % 500) / 100.0 AS boot_ms,
        epoch(ts) AS entry
    FROM raw
    WHERE model = $model AND prompt > $min_tokens AND ts IS NOT NULL AND room IS NOT NULL
        AND ts >= $boot AND (prefill IS NOT NULL OR (status = 400 AND prompt > $context_window))
),
ranks AS (
    SELECT unnest(generate_series(0, 7)) AS r
),
startup AS (
    -- prefill nodes: TP8 at $boot
    SELECT n AS node, $boot - INTERVAL 41 SECOND AS ts, 0 AS ord,
        'server_args=ServerArgs(model_path=''zai-org/GLM-5.3'', tokenizer_path=''zai-org/GLM-5.3'', trust_remote_code=True, context_length=' || $context_window || ', mem_fraction_static=0.85, page_size=64, tp_size=8, dcp_size=1, dp_size=1, enable_dp_attention=False, host=''0.0.0.0'', port=30000, served_model_name=''@cf/zai-org/glm-5.3'', allow_auto_truncate=False, log_requests=False, enable_request_time_stats_logging=True, ep_size=1, disaggregation_mode=''prefill'', disaggregation_transfer_backend=''mooncake'')' AS line
    FROM (SELECT unnest($prefill_nodes) AS n)
    UNION ALL
    SELECT n, $boot, 1 + r, '[TP' || r || '] KV Cache is allocated. dtype: torch.bfloat16, #tokens: ' || $old_tokens || ', KV size: 44.59 GB'
    FROM (SELECT unnest($prefill_nodes) AS n), ranks
    UNION ALL
    SELECT n, $boot + INTERVAL 30 SECOND, 9, '[TP0] max_total_num_tokens=' || $old_tokens || ', chunked_prefill_size=16384, max_prefill_tokens=16384, max_running_requests=64, context_len=' || $context_window || ', available_gpu_mem=6.20 GB'
    FROM (SELECT unnest($prefill_nodes) AS n)
    -- prefill nodes again at $switch: the corrected configuration, DP attention over 8 ranks
    UNION ALL
    SELECT n, $switch - INTERVAL 41 SECOND, 0,
        'server_args=ServerArgs(model_path=''zai-org/GLM-5.3'', tokenizer_path=''zai-org/GLM-5.3'', trust_remote_code=True, context_length=' || $context_window || ', mem_fraction_static=0.85, page_size=64, tp_size=8, dcp_size=1, dp_size=8, enable_dp_attention=True, host=''0.0.0.0'', port=30000, served_model_name=''@cf/zai-org/glm-5.3'', allow_auto_truncate=False, log_requests=False, enable_request_time_stats_logging=True, ep_size=8, disaggregation_mode=''prefill'', disaggregation_transfer_backend=''mooncake'')'
    FROM (SELECT unnest($prefill_nodes) AS n)
    UNION ALL
    SELECT n, $switch, 1 + r, '[DP' || r || ' TP' || r || ' EP' || r || '] KV Cache is allocated. dtype: torch.bfloat16, #tokens: ' || $new_tokens || ', KV size: 133.58 GB'
    FROM (SELECT unnest($prefill_nodes) AS n), ranks
    UNION ALL
    SELECT n, $switch + INTERVAL 30 SECOND, 9, '[DP0 TP0 EP0] max_total_num_tokens=' || $new_tokens || ', chunked_prefill_size=16384, max_prefill_tokens=16384, max_running_requests=512, context_len=' || $context_window || ', available_gpu_mem=5.10 GB'
    FROM (SELECT unnest($prefill_nodes) AS n)
    -- decode nodes: TP8 at $boot
    UNION ALL
    SELECT n, $boot - INTERVAL 41 SECOND, 0,
        'server_args=ServerArgs(model_path=''zai-org/GLM-5.3'', tokenizer_path=''zai-org/GLM-5.3'', trust_remote_code=True, context_length=' || $context_window || ', mem_fraction_static=0.85, page_size=64, tp_size=8, dcp_size=1, dp_size=1, enable_dp_attention=False, host=''0.0.0.0'', port=30000, served_model_name=''@cf/zai-org/glm-5.3'', allow_auto_truncate=False, log_requests=False, enable_request_time_stats_logging=True, ep_size=1, disaggregation_mode=''decode'', disaggregation_transfer_backend=''mooncake'')'
    FROM (SELECT unnest($decode_nodes) AS n)
    UNION ALL
    SELECT n, $boot, 1 + r, '[TP' || r || '] KV Cache is allocated. dtype: torch.bfloat16, #tokens: ' || $decode_tokens || ', KV size: 85.26 GB'
    FROM (SELECT unnest($decode_nodes) AS n), ranks
    UNION ALL
    SELECT n, $boot + INTERVAL 30 SECOND, 9, '[TP0] max_total_num_tokens=' || $decode_tokens || ', chunked_prefill_size=-1, max_prefill_tokens=16384, max_running_requests=256, context_len=' || $context_window || ', available_gpu_mem=7.00 GB'
    FROM (SELECT unnest($decode_nodes) AS n)
),
per_request AS (
    -- the tokenizer's refusal, logged by the API server of both legs (no rank prefix)
    SELECT p_node AS node, ts, 10 AS ord,
        'The input (' || prompt || ' tokens) is longer than the model''s context length (' || $context_window || ' tokens).' AS line
    FROM req WHERE prompt > $context_window
    UNION ALL
    SELECT d_node, ts, 10,
        'The input (' || prompt || ' tokens) is longer than the model''s context length (' || $context_window || ' tokens).'
    FROM req WHERE prompt > $context_window
    UNION ALL
    SELECT p_node, ts + to_milliseconds(2), 11,
        '[' || p_rank0 || '] Input length (' || prompt || ' tokens) exceeds the maximum allowed length (' || reject_from || ' tokens). Use a shorter input or enable --allow-auto-truncate., self.rid=''' || p_rid || ''''
    FROM req WHERE prompt >= reject_from AND prompt <= $context_window
    UNION ALL
    SELECT p_node, ts + to_milliseconds(CAST(boot_ms + 40 AS BIGINT)), 12,
        '[' || p_tags || '] ReqTimeStats(rid=' || p_rid || ', bootstrap_room=' || room || ', input_len=' || prompt
        || ', cached_input_len=0, output_len=1, attempts=0, type=prefill): '
        || printf('bootstrap_duration=%.2fms, queue_duration=0.44ms, forward_duration=%.2fms, entry_time=%.3f, transfer_speed=21.37 GB/s, transfer_total=%.2f MB',
                  boot_ms, prompt / 30.0, entry, prompt * 0.067)
    FROM req WHERE prompt < reject_from
    UNION ALL
    SELECT p_node, ts + to_milliseconds(CAST(boot_ms + 40 AS BIGINT)), 12,
        '[' || p_tags || '] ReqTimeStats(rid=' || p_rid || ', bootstrap_room=' || room
        || ', input_len=1, cached_input_len=0, output_len=1, attempts=0, type=prefill): '
        || printf('bootstrap_duration=%.2fms, queue_duration=0.44ms, forward_duration=39.87ms, entry_time=%.3f, transfer_speed=0.01 GB/s, transfer_total=0.07 MB',
                  boot_ms, entry)
    FROM req WHERE prompt >= reject_from AND prompt <= $context_window
    UNION ALL
    SELECT d_node, ts_end, 13,
        '[TP0] ReqTimeStats(rid=' || d_rid || ', bootstrap_room=' || room || ', input_len=' || prompt
        || ', cached_input_len=0, output_len=' || coalesce(completion, 0)
        || ', attempts=0, type=decode): '
        || printf('bootstrap_duration=%.2fms, alloc_wait_duration=1.48ms, transfer_duration=%.2fms, queue_duration=0.90ms, forward_duration=%.2fms, entry_time=%.3f',
                  boot_ms + 1.0,
                  CASE WHEN prompt >= reject_from THEN 0.03 ELSE prompt * 0.067 / 21.37 END,
                  greatest(coalesce(latency_ms, 0) - boot_ms - 1.0 - 0.90, 0.0), entry)
    FROM req WHERE prompt <= $context_window
)
SELECT node, ts, ord,
    '[' || strftime(ts, '%Y-%m-%d %H:%M:%S')
    || CASE WHEN starts_with(line, '[') THEN ' ' || substr(line, 2, strpos(line, ']') - 2) || '] ' || substr(line, strpos(line, ']') + 2)
            WHEN starts_with(line, 'The input (') THEN '] [http_server] Error: ' || line
            ELSE '] ' || line END AS line
FROM (SELECT * FROM startup UNION ALL SELECT * FROM per_request)
ORDER BY node, ts, ord, line
