-- Outcomes of the valid records of one input whose request_id needs a content comparison
-- (`_ing_typed`: the records whose id hash is in `_ing_keys`, typed before the direct load):
-- the id repeats within the input or is already in `requests`. Content = every loaded column
-- but provenance. The first occurrence (lowest row) of a request_id is loaded; later
-- identical ones are duplicates, later differing ones conflicts. A request_id already in
-- `requests` makes every record of it a duplicate (same content) or a conflict. A missing
-- status compares as the default ($default_status) it is read as, and as a database
-- ingested before a missing status stayed NULL holds it: a copy that lacks the status is a
-- duplicate of one that gives the default, not a conflict. Ids are
-- compared in Unicode normal form C: a record whose id equals the first's (or a loaded one's)
-- only once normalized is `unicode`, quarantined: the same request spelled in another form,
-- or another request; either way not loaded twice, nor merged unseen. A duplicate names
-- what it duplicates: `of_source`, the loaded record's source (one loaded before), or
-- `of_row`, the run's first record of the id (its input: of_row // stride).
WITH t AS (
    SELECT
        source_row,
        request_id,
        nfc_normalize(request_id) AS id_key,
        md5(to_json(struct_pack(
            request_id, ts, account_id, model, prompt_tokens, completion_tokens,
            status := coalesce(status, $default_status), prefill_node, decode_node, ts_end,
            extra := extra::VARCHAR
        ))) AS content
    FROM _ing_typed
    WHERE failed IS NULL
),
existing AS (
    SELECT
        nfc_normalize(r.request_id) AS id_key,
        r.request_id,
        r.source,
        md5(to_json(struct_pack(
            r.request_id, r.ts, r.account_id, r.model, r.prompt_tokens, r.completion_tokens,
            status := coalesce(r.status, $default_status), r.prefill_node, r.decode_node,
            r.ts_end, extra := r.extra::VARCHAR
        ))) AS content
    FROM requests AS r
    WHERE nfc_normalize(r.request_id) IN (SELECT id_key FROM t)
),
ranked AS (
    SELECT
        t.*,
        min(t.source_row) OVER w AS first_row,
        arg_min(t.content, t.source_row) OVER w AS first_content,
        arg_min(t.request_id, t.source_row) OVER w AS first_id
    FROM t
    WINDOW w AS (PARTITION BY t.id_key)
)
SELECT
    t.source_row,
    CASE
        WHEN e.request_id IS NOT NULL AND e.content = t.content THEN 'duplicate'
        WHEN e.request_id IS NOT NULL THEN 'conflict'
        WHEN n.id_key IS NOT NULL THEN 'unicode'
        WHEN t.source_row = t.first_row THEN 'load'
        WHEN t.request_id <> t.first_id THEN 'unicode'
        WHEN t.content = t.first_content THEN 'duplicate'
        ELSE 'conflict'
    END AS outcome,
    CASE WHEN e.request_id IS NOT NULL AND e.content = t.content THEN e.source END AS of_source,
    CASE
        WHEN e.request_id IS NULL AND n.id_key IS NULL AND t.source_row <> t.first_row
            AND t.request_id = t.first_id AND t.content = t.first_content
        THEN t.first_row
    END AS of_row
FROM ranked AS t
LEFT JOIN existing AS e ON e.request_id = t.request_id
LEFT JOIN (SELECT DISTINCT id_key FROM existing) AS n ON n.id_key = t.id_key
