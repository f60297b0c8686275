-- One capacity span per server start, from engine_startup.
-- A start groups the capacity lines of one node that follow each other within 60 s, and
-- within such a burst each rank (tags) and kind once (a rank logging again = a new start).
-- tokens: the smallest `#tokens` of its KV Cache lines, else its max_total_num_tokens;
-- start_ts: its first KV Cache line (else first line); end_ts: the node's next start.
WITH ordered AS (
    SELECT *, lag(ts) OVER (PARTITION BY node ORDER BY ts, source, source_row) AS prev_ts
    FROM engine_startup
),
bursts AS (
    SELECT
        *,
        sum(CASE WHEN prev_ts IS NULL OR ts - prev_ts > INTERVAL 60 SECOND THEN 1 ELSE 0 END)
            OVER (PARTITION BY node ORDER BY ts, source, source_row ROWS UNBOUNDED PRECEDING)
            AS burst
    FROM ordered
),
numbered AS (
    SELECT
        *,
        row_number() OVER (
            PARTITION BY node, burst, kind, coalesce(tags, '') ORDER BY ts, source, source_row
        ) AS occ
    FROM bursts
),
starts AS (
    SELECT
        node,
        min(role) AS role,
        min(tokens) FILTER (WHERE kind = 'kv_alloc') AS kv_tokens,
        min(tokens) FILTER (WHERE kind = 'pool') AS pool_tokens,
        max(context_len) AS context_len,
        coalesce(min(ts) FILTER (WHERE kind = 'kv_alloc'), min(ts)) AS start_ts,
        arg_min(source, (kind <> 'kv_alloc', ts, source, source_row)) AS source,
        arg_min(source_row, (kind <> 'kv_alloc', ts, source, source_row)) AS source_row
    FROM numbered
    GROUP BY node, burst, occ
)
SELECT
    node,
    role,
    coalesce(kv_tokens, pool_tokens) AS tokens,
    context_len,
    start_ts,
    lead(start_ts) OVER (PARTITION BY node ORDER BY start_ts, source, source_row) AS end_ts,
    source,
    source_row
FROM starts
