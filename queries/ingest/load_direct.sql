-- Load straight from the typed records (`_ing_all`: typed.sql over the caller's
-- `_ing_mapped`) every valid record that is not a duplicate or conflict (ingest_classify),
-- with the input's path bound as source: one pass, no staged copy of the records.
SELECT
    request_id, ts, account_id, model, prompt_tokens, completion_tokens, status,
    prefill_node, decode_node, ts_end, $source, source_row, extra
FROM _ing_all
WHERE failed IS NULL
    AND source_row NOT IN (SELECT source_row FROM _ing_special WHERE outcome <> 'load')
