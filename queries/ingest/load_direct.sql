-- Load straight from the typed records (`_ing_all`: typed.sql over the caller's
-- `_ing_mapped`) every valid record that is not a duplicate or conflict (ingest_classify):
-- one pass, no staged copy of the records. A record's source_row here is its input's index
-- times $stride plus its line (row): its input's path ($sources, the run's paths from input
-- $base on) and its row are stored.
SELECT
    request_id, ts, account_id, model, prompt_tokens, completion_tokens, status,
    prefill_node, decode_node, ts_end, $sources[source_row // $stride - $base + 1],
    source_row % $stride, extra
FROM _ing_all
WHERE failed IS NULL
    AND source_row NOT IN (SELECT source_row FROM _ing_special WHERE outcome <> 'load')
