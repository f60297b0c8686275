-- Pre-flight findings: every capacity span whose pool is smaller than the context window
-- ($context_window, or the span's own context_len when that is NULL). The danger band is
-- prompts of tokens + 1 .. window tokens: accepted by validation, not held by the pool.
SELECT
    node, role, tokens, coalesce(CAST($context_window AS BIGINT), context_len) AS context_window,
    tokens + 1 AS danger_from, coalesce(CAST($context_window AS BIGINT), context_len) AS danger_to,
    start_ts, end_ts
FROM engine_capacity
WHERE tokens < coalesce(CAST($context_window AS BIGINT), context_len)
ORDER BY role IS NULL, role = 'decode', role, node, start_ts
