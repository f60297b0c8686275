-- Pre-flight findings: every capacity span whose pool is smaller than the context window
-- ($context_window, or the span's own context_len when that is NULL). The danger band is the
-- prompts the tokenizer passes and the scheduler refuses: from reject_from (tokens + 1 when
-- the logs do not give it) to the context length - 1 (the smaller of the window and the
-- logged context_len: the tokenizer refuses from context_len).
WITH spans AS (
    SELECT
        *,
        coalesce(CAST($context_window AS BIGINT), context_len) AS context_window
    FROM engine_capacity
)
SELECT
    node, role, tokens, context_window,
    coalesce(reject_from, tokens + 1) AS danger_from,
    least(context_window, coalesce(context_len, context_window)) - 1 AS danger_to,
    coalesce(engine_warned, false) AS engine_warned,
    start_ts, end_ts
FROM spans
WHERE tokens < context_window
ORDER BY role IS NULL, role = 'decode', role, node, start_ts
