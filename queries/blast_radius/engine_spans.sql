-- The prefill capacity spans the engine logs show (engine_capacity), at most one in force per
-- node at any time: a span ends where the next span of its node starts (or at its own end,
-- when that is earlier); of two spans of a node starting at once, the smaller pool (the one
-- that counts more prompts as over it). A span without tokens or start says nothing here.
-- `context_len`: the server's own context limit (SGLang context_len, vLLM max_model_len),
-- NULL where its log gives none.
WITH spans AS (
    SELECT node, tokens, reject_from, context_len, start_ts, end_ts
    FROM engine_capacity
    WHERE role = 'prefill' AND node IS NOT NULL AND tokens IS NOT NULL AND start_ts IS NOT NULL
      AND source NOT IN (SELECT path FROM case_unnamed_inputs)  -- the case's own engine logs
    QUALIFY row_number() OVER (
        PARTITION BY node, start_ts ORDER BY tokens, coalesce(reject_from, tokens + 1)
    ) = 1
),
ordered AS (
    SELECT *, lead(start_ts) OVER (PARTITION BY node ORDER BY start_ts) AS next_start
    FROM spans
)
SELECT
    node,
    CAST(tokens AS BIGINT) AS tokens,
    CAST(reject_from AS BIGINT) AS reject_from,
    CAST(context_len AS BIGINT) AS context_len,
    start_ts,
    CASE
        WHEN next_start IS NULL THEN end_ts
        WHEN end_ts IS NULL OR next_start < end_ts THEN next_start
        ELSE end_ts
    END AS end_ts
FROM ordered
ORDER BY node, start_ts
