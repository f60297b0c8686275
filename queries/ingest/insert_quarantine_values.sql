-- The values of the run's quarantined records (`_ing_out` outcome quarantine or conflict,
-- typed in `_ing_typed`) that can be read as mapped, each NULL unless it passes its own
-- check: ts (parsed), prompt_tokens (an integer >= 0), status (an integer that fits, as
-- given: a missing status stays NULL here, not the default), request_id, account_id, model
-- and prefill_node (non-empty text; request_id derived as loaded when the mapping maps
-- none). A record that could not be parsed has none. A value whose JSON key, or an object on
-- its path, the record repeats is NULL too (`__dups`, the dotted keys it repeats, meets
-- $amb_<field>, the field's keys: compile._ambiguous_when): DuckDB read the first of the
-- repeats, most tools read the last, and neither may rule the record out.
WITH t AS (
    SELECT
        *,
        coalesce(list_has_any(__dups, CAST($amb_request_id AS VARCHAR[])), false) AS a_id,
        coalesce(list_has_any(__dups, CAST($amb_ts AS VARCHAR[])), false) AS a_ts,
        coalesce(list_has_any(__dups, CAST($amb_account_id AS VARCHAR[])), false) AS a_account,
        coalesce(list_has_any(__dups, CAST($amb_model AS VARCHAR[])), false) AS a_model,
        coalesce(list_has_any(__dups, CAST($amb_prompt_tokens AS VARCHAR[])), false) AS a_prompt,
        coalesce(list_has_any(__dups, CAST($amb_status AS VARCHAR[])), false) AS a_status,
        coalesce(list_has_any(__dups, CAST($amb_prefill_node AS VARCHAR[])), false) AS a_prefill
    FROM _ing_typed
)
INSERT INTO quarantine_values
SELECT
    $sources[o.source_row // $stride - $base + 1],
    o.source_row % $stride,
    CASE WHEN NOT t.a_id THEN t.request_id END,
    CASE WHEN NOT t.a_ts THEN t.ts END,
    CASE WHEN NOT t.a_account THEN t.account_id END,
    CASE WHEN NOT t.a_model THEN t.model END,
    CASE WHEN NOT t.a_prompt AND t.prompt_tokens >= 0 THEN t.prompt_tokens END,
    CASE WHEN NOT t.a_status THEN TRY_CAST(coalesce(t.n_status, _ing_int(t.v_status)) AS INTEGER) END,
    CASE WHEN NOT t.a_prefill THEN t.prefill_node END
FROM _ing_out AS o
JOIN t ON t.source_row = o.source_row
WHERE o.outcome IN ('quarantine', 'conflict', 'unicode')
