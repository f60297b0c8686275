-- Engine server log lines consistent with a gateway log (for the bundled case): one row per
-- (node, ts, ord, line). Long requests (prompt > $min_tokens) of $model get per-request lines
-- on both legs; a prompt over the prefill pool in force gets the disaggregation abort and the
-- one-token placeholder (input_len=1) on prefill, its decode leg finishing with the gateway's
-- completion tokens; a prompt over $context_window gets the tokenizer's refusal.
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
        route.prefill AS prefill,
        route.decode AS decode,
        try_cast(route.bootstrap_room AS BIGINT) AS room
    FROM read_json(
        $gateway, format = 'newline_delimited', ignore_errors = true,
        columns = {
            'id': 'VARCHAR', 'timestamp': 'VARCHAR', 'model': 'VARCHAR',
            'usage': 'STRUCT(prompt_tokens VARCHAR, completion_tokens VARCHAR)',
            'latency_ms': 'VARCHAR',
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
        CASE WHEN ts < $switch THEN 'TP0' ELSE 'DP0 TP0 EP0' END AS tags,
        ts + to_milliseconds(coalesce(latency_ms, 0)) AS ts_end
    FROM raw
    WHERE model = $model AND prompt > $min_tokens AND ts IS NOT NULL AND room IS NOT NULL
        AND ts >= $boot
),
startup AS (
    SELECT n AS node, t AS ts, k AS ord, line FROM (
        SELECT unnest($prefill_nodes) AS n
    ), (
        SELECT $boot AS t, 0 AS k, 'server_args=ServerArgs(model_path=''zai-org/GLM-5.3'', tp_size=8, disaggregation_mode=''prefill'', context_length=' || $context_window || ')' AS line
        UNION ALL SELECT $boot, 1, 'KV Cache is allocated. #tokens: ' || $old_tokens || ', KV size: 20.11 GB'
        UNION ALL SELECT $boot, 2, 'max_total_num_tokens=' || $old_tokens || ', chunked_prefill_size=16384, max_prefill_tokens=16384, max_running_requests=64, context_len=' || $context_window || ', available_gpu_mem=6.20 GB'
        UNION ALL SELECT $switch, 1, 'KV Cache is allocated. #tokens: ' || $new_tokens || ', KV size: 60.22 GB'
        UNION ALL SELECT $switch, 2, 'max_total_num_tokens=' || $new_tokens || ', chunked_prefill_size=16384, max_prefill_tokens=16384, max_running_requests=64, context_len=' || $context_window || ', available_gpu_mem=5.10 GB'
    )
    UNION ALL
    SELECT n, t, k, line FROM (
        SELECT unnest($decode_nodes) AS n
    ), (
        SELECT $boot AS t, 0 AS k, 'server_args=ServerArgs(model_path=''zai-org/GLM-5.3'', tp_size=8, disaggregation_mode=''decode'', context_length=' || $context_window || ')' AS line
        UNION ALL SELECT $boot, 1, 'KV Cache is allocated. #tokens: ' || $decode_tokens || ', KV size: 38.44 GB'
        UNION ALL SELECT $boot, 2, 'max_total_num_tokens=' || $decode_tokens || ', chunked_prefill_size=-1, max_prefill_tokens=16384, max_running_requests=256, context_len=' || $context_window || ', available_gpu_mem=7.00 GB'
    )
),
per_request AS (
    SELECT p_node AS node, ts, 10 AS ord,
        'The input (' || prompt || ' tokens) is longer than the model''s context length (' || $context_window || ' tokens).' AS line
    FROM req WHERE prompt > $context_window
    UNION ALL
    SELECT p_node, ts, 11,
        'Request ' || p_rid || ' exceeds the maximum number of tokens: ' || prompt || ' > ' || pool
    FROM req WHERE prompt > pool AND prompt <= $context_window
    UNION ALL
    SELECT p_node, ts, 12,
        'ReqTimeStats(rid=' || p_rid || ', bootstrap_room=' || room || ', input_len='
        || CASE WHEN prompt > pool THEN 1 ELSE prompt END
        || ', cached_input_len=0, output_len=1, type=prefill): queue_duration=0.002s'
    FROM req WHERE prompt <= $context_window
    UNION ALL
    SELECT d_node, ts_end, 13,
        'ReqTimeStats(rid=' || d_rid || ', bootstrap_room=' || room || ', input_len=' || prompt
        || ', cached_input_len=0, output_len=' || coalesce(completion, 0)
        || ', type=decode): decode_duration=' || round(coalesce(latency_ms, 0) / 1000.0, 3) || 's'
    FROM req WHERE prompt <= $context_window
)
SELECT node, ts, ord,
    '[' || strftime(ts, '%Y-%m-%d %H:%M:%S') || CASE WHEN ord = 0 THEN '' WHEN ts < $switch THEN ' TP0' ELSE ' DP0 TP0 EP0' END || '] ' || line AS line
FROM (SELECT * FROM startup UNION ALL SELECT * FROM per_request)
ORDER BY node, ts, ord, line
