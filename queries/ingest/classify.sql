-- Outcomes of the valid records of one input whose request_id needs a content comparison
-- (`_ing_typed`: the records whose id hash is in `_ing_keys`, typed before the direct load):
-- the id repeats within the input or is already in `requests`. Content = every loaded column
-- but provenance. The first occurrence (lowest row) of a request_id is loaded; later
-- identical ones are duplicates, later differing ones conflicts. A request_id already in
-- `requests` makes every record of it a duplicate (same content) or a conflict.
WITH t AS (
    SELECT
        source_row,
        request_id,
        md5(to_json(struct_pack(
            request_id, ts, account_id, model, prompt_tokens, completion_tokens, status,
            prefill_node, decode_node, ts_end, extra := extra::VARCHAR
        ))) AS content
    FROM _ing_typed
    WHERE failed IS NULL
),
existing AS (
    SELECT
        r.request_id,
        md5(to_json(struct_pack(
            r.request_id, r.ts, r.account_id, r.model, r.prompt_tokens, r.completion_tokens,
            r.status, r.prefill_node, r.decode_node, r.ts_end, extra := r.extra::VARCHAR
        ))) AS content
    FROM requests AS r
    WHERE r.request_id IN (SELECT request_id FROM t)
),
ranked AS (
    SELECT
        t.*,
        min(t.source_row) OVER w AS first_row,
        arg_min(t.content, t.source_row) OVER w AS first_content
    FROM t
    WINDOW w AS (PARTITION BY t.request_id)
)
SELECT
    t.source_row,
    CASE
        WHEN e.request_id IS NOT NULL AND e.content = t.content THEN 'duplicate'
        WHEN e.request_id IS NOT NULL THEN 'conflict'
        WHEN t.source_row = t.first_row THEN 'load'
        WHEN t.content = t.first_content THEN 'duplicate'
        ELSE 'conflict'
    END AS outcome
FROM ranked AS t
LEFT JOIN existing AS e ON t.request_id = e.request_id
