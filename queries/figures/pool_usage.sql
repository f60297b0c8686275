-- The engines' periodic KV pool usage lines (engine_pool_usage: vLLM's `KV cache usage: P%`)
-- inside the case window, per node and time, for the report's timeline.
SELECT node, ts, usage_pct
FROM engine_pool_usage
WHERE ts >= $window_start AND ts < $window_end AND usage_pct IS NOT NULL
ORDER BY node, ts
