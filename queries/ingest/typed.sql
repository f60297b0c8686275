-- Canonical typed records of one input (`_ing_mapped`: each mapped value as text v_F, and
-- for counts, status and times from a source column already of a fitting type, the value
-- itself n_F, then v_F is only set when n_F does not fit; t_F is the reading of the text
-- v_F of a count, status or time, NULL when none is given) and `failed`: the first check, if
-- any, a record fails (NULL: it can be loaded). ingest_reasons turns `failed` into the
-- reason text (from the values kept here), only when some record failed; the direct load
-- needs only `failed IS NULL`, so it never binds the _why macros. A missing status (absent,
-- null or "", or a mapping with none) stays NULL: the analysis reads it as the default (200)
-- and puts an exposed response without one on the range's minimum. The input's path (`source`) is not a column here: the inserts bind it, so the typed
-- table does not carry a copy of it per record. Bounds (docs "Trust model"): an id or other
-- text field longer than $max_text_bytes bytes, a token count of $max_tokens or more, and an
-- end before the start are refused; `__dup` (a mapped JSON key the record repeats; `__dups`
-- every one it repeats, which quarantine_values reads as unreadable) and
-- `__sqlerr` (a { sql } field whose expression failed on the record) come from the mapping.
-- The records may be of several inputs (a load run): source_row is the input's index *
-- $stride + its row; a record without a mapped request_id is named by its input's sha256
-- prefix ($id_prefixes, the run's from input $base on) and its row.
WITH typed AS (
    SELECT
        __row AS source_row,
        __raw AS raw,
        __err,
        __dup,
        __dups,
        __sqlerr,
        coalesce(
            v_request_id,
            CASE WHEN NOT $id_mapped
                THEN $id_prefixes[__row // $stride - $base + 1] || ':' || (__row % $stride) END
        )
            AS request_id,
        v_request_id,
        _ing_time_n(n_ts, t_ts) AS ts,
        v_ts,
        n_ts,
        n_ts_end,
        v_account_id AS account_id,
        v_model AS model,
        coalesce(n_prompt_tokens, t_prompt_tokens) AS prompt_tokens,
        v_prompt_tokens,
        n_prompt_tokens,
        coalesce(n_completion_tokens, t_completion_tokens)
            AS completion_tokens,
        v_completion_tokens,
        TRY_CAST(coalesce(n_status, t_status) AS INTEGER) AS status,
        v_status,
        n_status,
        v_prefill_node AS prefill_node,
        v_decode_node AS decode_node,
        _ing_time_n(n_ts_end, t_ts_end) AS ts_end,
        v_ts_end,
        extra
    FROM _ing_mapped
)
SELECT
    request_id, ts, account_id, model, prompt_tokens, completion_tokens,
    status, prefill_node, decode_node, ts_end,
    source_row, extra, raw, __err, __dup, __sqlerr, v_prompt_tokens, v_completion_tokens,
    v_ts, n_ts, v_ts_end, n_ts_end, v_status, n_status,
    __dups,
    CASE
        WHEN __err IS NOT NULL THEN 'record'
        WHEN __dup IS NOT NULL THEN 'duplicate key'
        -- a field whose { sql } failed (__sqlerr: the first, in field order) fails there
        WHEN __sqlerr = 'fields.request_id' THEN 'sql'
        WHEN request_id IS NULL THEN 'request_id missing'
        WHEN strlen(request_id) > $max_text_bytes THEN 'request_id long'
        WHEN __sqlerr = 'fields.ts' THEN 'sql'
        WHEN v_ts IS NULL AND n_ts IS NULL THEN 'ts missing'
        WHEN __sqlerr = 'fields.account_id' THEN 'sql'
        WHEN account_id IS NULL THEN 'account_id missing'
        WHEN strlen(account_id) > $max_text_bytes THEN 'account_id long'
        WHEN __sqlerr = 'fields.model' THEN 'sql'
        WHEN model IS NULL THEN 'model missing'
        WHEN strlen(model) > $max_text_bytes THEN 'model long'
        WHEN __sqlerr = 'fields.prompt_tokens' THEN 'sql'
        WHEN v_prompt_tokens IS NULL AND n_prompt_tokens IS NULL THEN 'prompt_tokens missing'
        WHEN prompt_tokens IS NULL THEN 'prompt_tokens'
        WHEN prompt_tokens < 0 THEN 'prompt_tokens negative'
        WHEN prompt_tokens >= $max_tokens THEN 'prompt_tokens implausible'
        WHEN __sqlerr = 'fields.completion_tokens' THEN 'sql'
        WHEN v_completion_tokens IS NOT NULL AND completion_tokens IS NULL
            THEN 'completion_tokens'
        WHEN completion_tokens < 0 THEN 'completion_tokens negative'
        WHEN completion_tokens >= $max_tokens THEN 'completion_tokens implausible'
        WHEN ts IS NULL THEN 'ts'
        WHEN __sqlerr = 'fields.prefill_node' THEN 'sql'
        WHEN strlen(prefill_node) > $max_text_bytes THEN 'prefill_node long'
        WHEN __sqlerr = 'fields.decode_node' THEN 'sql'
        WHEN strlen(decode_node) > $max_text_bytes THEN 'decode_node long'
        WHEN __sqlerr = 'fields.ts_end' THEN 'sql'
        WHEN (v_ts_end IS NOT NULL OR n_ts_end IS NOT NULL) AND ts_end IS NULL THEN 'ts_end'
        WHEN ts_end < ts THEN 'ts_end before ts'
        WHEN __sqlerr = 'fields.status' THEN 'sql'
        WHEN (v_status IS NOT NULL OR n_status IS NOT NULL) AND status IS NULL THEN 'status'
        WHEN __sqlerr IS NOT NULL THEN 'sql'  -- an [extra] { sql }
    END AS failed
FROM typed
