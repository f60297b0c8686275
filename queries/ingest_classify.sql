-- Each record of one input -> outcome: load | duplicate | conflict | quarantine.
-- Content = every loaded column but provenance. The first occurrence (lowest row) of a
-- request_id is loaded; later identical ones are duplicates, later differing ones conflicts.
-- A request_id already in `requests` (earlier inputs) makes every record of it a duplicate
-- (same content) or a conflict.
WITH t AS (
    SELECT
        *,
        md5(to_json(struct_pack(
            request_id, ts, account_id, model, prompt_tokens, completion_tokens, status,
            prefill_node, decode_node, ts_end, extra := extra::VARCHAR
        ))) AS content
    FROM _ing_typed
),
firsts AS (
    SELECT request_id, min(source_row) AS first_row, arg_min(content, source_row) AS first_content
    FROM t
    WHERE reason IS NULL
    GROUP BY request_id
),
existing AS (
    SELECT
        r.request_id,
        md5(to_json(struct_pack(
            r.request_id, r.ts, r.account_id, r.model, r.prompt_tokens, r.completion_tokens,
            r.status, r.prefill_node, r.decode_node, r.ts_end, extra := r.extra::VARCHAR
        ))) AS content
    FROM requests AS r
    SEMI JOIN firsts ON r.request_id = firsts.request_id
)
SELECT
    t.* EXCLUDE (content),
    CASE
        WHEN t.reason IS NOT NULL THEN 'quarantine'
        WHEN e.request_id IS NOT NULL AND e.content = t.content THEN 'duplicate'
        WHEN e.request_id IS NOT NULL THEN 'conflict'
        WHEN t.source_row = f.first_row THEN 'load'
        WHEN t.content = f.first_content THEN 'duplicate'
        ELSE 'conflict'
    END AS outcome
FROM t
LEFT JOIN firsts AS f ON t.request_id = f.request_id AND t.reason IS NULL
LEFT JOIN existing AS e ON t.request_id = e.request_id AND t.reason IS NULL
