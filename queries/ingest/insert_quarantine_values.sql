-- The values of the run's quarantined records (`_ing_out` outcome quarantine or conflict,
-- typed in `_ing_typed`) that can be read as mapped, each NULL unless it passes its own
-- check: ts (parsed), prompt_tokens (an integer >= 0), status (an integer that fits, as
-- given: a missing status stays NULL here, not the default), request_id, account_id, model
-- and prefill_node (non-empty text; request_id derived as loaded when the mapping maps
-- none). A record that could not be parsed has none.
INSERT INTO quarantine_values
SELECT
    $sources[o.source_row // $stride - $base + 1],
    o.source_row % $stride,
    t.request_id,
    t.ts,
    t.account_id,
    t.model,
    CASE WHEN t.prompt_tokens >= 0 THEN t.prompt_tokens END,
    TRY_CAST(coalesce(t.n_status, _ing_int(t.v_status)) AS INTEGER),
    t.prefill_node
FROM _ing_out AS o
JOIN _ing_typed AS t ON t.source_row = o.source_row
WHERE o.outcome IN ('quarantine', 'conflict', 'unicode')
