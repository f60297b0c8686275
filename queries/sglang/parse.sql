-- One SGLang server log -> one row per line that looks like engine evidence, with its fields.
-- Lines are read whole (a delimiter that never occurs, no quoting), numbered from 1.
-- `reason` is NULL for a well-formed line, else why it is quarantined. `raw` (cut at 2 KB) is
-- kept only for lines that carry no prompt/response text (never for Receive/Finish lines).
-- Params: $path, $delim.
WITH raw AS (
    SELECT ordinality AS source_row, line
    FROM read_csv(
        $path, columns = {'line': 'VARCHAR'}, delim = $delim, quote = '', escape = '',
        header = false, auto_detect = false, strict_mode = false, max_line_size = 268435456,
        buffer_size = 268435456
    ) WITH ORDINALITY
),
env AS (
    SELECT
        source_row,
        line,
        regexp_extract(
            line,
            '^\[(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?)((?: [A-Za-z]+\d+)*)\] ?(.*)$',
            ['ts', 'tags', 'msg']
        ) AS e
    FROM raw
    WHERE line IS NOT NULL
),
msg AS (
    SELECT
        source_row,
        line,
        nullif(e.ts, '') AS ts_text,
        nullif(trim(e.tags), '') AS tags,
        CASE WHEN e.ts = '' THEN trim(line) ELSE e.msg END AS msg
    FROM env
),
kinded AS (
    SELECT
        *,
        CASE
            WHEN starts_with(msg, 'Receive: ') THEN 'receive'
            WHEN starts_with(msg, 'Finish: ') THEN 'finish'
            WHEN starts_with(msg, '{') AND contains(msg, '"request.') THEN 'request_json'
            WHEN starts_with(msg, 'KV Cache is allocated') THEN 'kv_alloc'
            WHEN starts_with(msg, 'max_total_num_tokens=') THEN 'pool'
            WHEN contains(msg, 'ReqTimeStats(') OR contains(msg, 'Req Time Stats(')
                THEN 'time_stats'
            WHEN contains(msg, 'exceeds the maximum number of tokens') THEN 'kv_capacity'
            WHEN contains(msg, 'exceeds the maximum allowed length') THEN 'input_length'
            WHEN contains(msg, 'is longer than the model''s context length') THEN 'context_length'
            WHEN contains(msg, 'disaggregation_mode=') THEN 'role_marker'
        END AS kind
    FROM msg
),
fields AS (
    SELECT
        source_row,
        kind,
        tags,
        ts_text,
        CASE WHEN kind IN ('receive', 'finish', 'request_json') THEN NULL
             ELSE left(line, 2048) END AS raw,
        -- capacity lines
        regexp_extract(msg, '#tokens: (\d+)', 1) AS kv_tokens,
        regexp_extract(msg, '^max_total_num_tokens=(\d+)', 1) AS pool_tokens,
        regexp_extract(msg, '(?:^|[ ,])context_len=(\d+)', 1) AS ctx,
        -- per-request stats (old and new spellings); only the text inside the parentheses
        regexp_extract(msg, '(?:ReqTimeStats|Req Time Stats)\(([^)]*)\)', 1) AS st,
        -- aborts
        regexp_extract(
            msg, 'Request (\S+) exceeds the maximum number of tokens: (\d+) > (\d+)',
            ['rid', 'n', 'max']
        ) AS ab,
        regexp_extract(
            msg, 'Input length \((\d+) tokens\) exceeds the maximum allowed length \((\d+) tokens\)',
            ['n', 'max']
        ) AS il,
        regexp_extract(
            msg, 'The input \((\d+) tokens\) is longer than the model''s context length \((\d+) tokens\)',
            ['n', 'max']
        ) AS cl,
        -- text request log lines (Python repr): the meta_info is the last one on the line
        regexp_extract(msg, '^(?:Receive|Finish): obj=\w+\((?:.*?[ (,])?rid=''([^'']*)''', 1)
            AS repr_rid,
        regexp_extract(msg, '(?:^|[ (,])bootstrap_room=(\d+|None)', 1) AS repr_room,
        regexp_extract(msg, '.*''meta_info'': \{(.*)$', 1) AS mi,
        CASE WHEN kind = 'request_json' THEN json_valid(msg) END AS json_ok,
        CASE WHEN kind = 'request_json' AND json_valid(msg) THEN msg::JSON END AS j,
        regexp_extract(msg, 'disaggregation_mode=''?(\w+)', 1) AS mode
    FROM kinded
    WHERE kind IS NOT NULL
),
typed AS (
    SELECT
        source_row,
        kind,
        tags,
        raw,
        coalesce(
            try_cast(replace(ts_text, ',', '.') AS TIMESTAMP) AT TIME ZONE 'UTC',
            try_cast(j ->> '$.timestamp' AS TIMESTAMPTZ),
            to_timestamp(try_cast(j ->> '$.timestamp' AS DOUBLE))
        ) AS ts,
        CASE kind
            WHEN 'time_stats' THEN nullif(trim(regexp_extract(st, '(?:^|[ ,])rid=([^,]*)', 1), ' ''"'), '')
            WHEN 'kv_capacity' THEN nullif(ab.rid, '')
            WHEN 'request_json' THEN j ->> '$.rid'
            WHEN 'finish' THEN coalesce(
                nullif(regexp_extract(mi, '^\s*''id'': ''([^'']*)''', 1), ''), nullif(repr_rid, ''))
            WHEN 'receive' THEN nullif(repr_rid, '')
        END AS rid,
        CASE kind
            WHEN 'time_stats' THEN regexp_extract(st, '(?:^|[ ,])bootstrap_room=(\d+|None)', 1)
            WHEN 'request_json' THEN coalesce(j ->> '$.obj.bootstrap_room', 'None')
            WHEN 'finish' THEN repr_room
            WHEN 'receive' THEN repr_room
        END AS room_text,
        CASE kind
            WHEN 'time_stats' THEN regexp_extract(st, '(?:^|[ ,])input[_ ]len=(\d+)', 1)
            WHEN 'finish' THEN regexp_extract(mi, '''prompt_tokens'': (\d+)', 1)
            WHEN 'request_json' THEN coalesce(j ->> '$.out.meta_info.prompt_tokens', '')
            WHEN 'kv_capacity' THEN ab.n
            WHEN 'input_length' THEN il.n
            WHEN 'context_length' THEN cl.n
        END AS n_in,
        CASE kind
            WHEN 'time_stats' THEN regexp_extract(st, '(?:^|[ ,])output[_ ]len=(\d+)', 1)
            WHEN 'finish' THEN regexp_extract(mi, '''completion_tokens'': (\d+)', 1)
            WHEN 'request_json' THEN coalesce(j ->> '$.out.meta_info.completion_tokens', '')
        END AS n_out,
        CASE kind
            WHEN 'kv_capacity' THEN ab.max
            WHEN 'input_length' THEN il.max
            WHEN 'context_length' THEN cl.max
        END AS n_max,
        CASE kind
            WHEN 'time_stats' THEN regexp_extract(st, '(?:^|[ ,])type=(\w+)', 1)
            WHEN 'role_marker' THEN mode
        END AS leg,
        CASE kind
            WHEN 'finish' THEN nullif(regexp_extract(mi, '''finish_reason'': \{''type'': ''(\w+)''', 1), '')
            WHEN 'request_json' THEN j ->> '$.out.meta_info.finish_reason.type'
        END AS finish_reason,
        CASE kind WHEN 'request_json' THEN j ->> '$.event' END AS event,
        st,
        kv_tokens,
        pool_tokens,
        ctx,
        json_ok
    FROM fields
)
SELECT
    source_row,
    CASE
        WHEN kind = 'request_json' AND json_ok AND event = 'request.finished' THEN 'finish'
        WHEN kind = 'request_json' AND json_ok AND event = 'request.received' THEN 'receive'
        ELSE kind
    END AS kind,
    tags,
    raw,
    ts,
    rid,
    try_cast(nullif(nullif(room_text, ''), 'None') AS BIGINT) AS bootstrap_room,
    try_cast(nullif(n_in, '') AS BIGINT) AS input_len,
    try_cast(nullif(n_out, '') AS BIGINT) AS output_len,
    try_cast(nullif(n_max, '') AS BIGINT) AS max_tokens,
    CASE WHEN leg IN ('prefill', 'decode') THEN leg END AS leg,
    finish_reason,
    try_cast(nullif(coalesce(nullif(kv_tokens, ''), pool_tokens), '') AS BIGINT) AS tokens,
    try_cast(nullif(ctx, '') AS BIGINT) AS context_len,
    CASE
        WHEN kind = 'role_marker' THEN NULL
        WHEN kind = 'request_json' AND NOT json_ok THEN 'request log line is not valid JSON'
        WHEN kind = 'request_json' AND event NOT IN ('request.received', 'request.finished')
            THEN 'request log JSON with unknown event'
        WHEN ts IS NULL THEN 'no [YYYY-MM-DD HH:MM:SS] time on an engine evidence line'
        WHEN kind = 'kv_alloc' AND kv_tokens = '' THEN 'KV Cache line without #tokens'
        WHEN kind = 'pool' AND pool_tokens = '' THEN 'max_total_num_tokens line without a number'
        WHEN kind = 'time_stats' AND st = '' THEN 'ReqTimeStats line without (fields)'
        WHEN kind = 'time_stats' AND rid IS NULL THEN 'ReqTimeStats line without rid'
        WHEN kind = 'time_stats' AND room_text = '' THEN 'ReqTimeStats line without bootstrap_room'
        WHEN kind = 'time_stats' AND n_in = '' THEN 'ReqTimeStats line without input_len'
        WHEN kind = 'time_stats' AND n_out = '' THEN 'ReqTimeStats line without output_len'
        WHEN kind = 'time_stats' AND leg = '' THEN 'ReqTimeStats line without type'
        WHEN kind = 'time_stats' AND leg NOT IN ('prefill', 'decode')
            THEN 'ReqTimeStats line with type other than prefill/decode'
        WHEN kind = 'kv_capacity' AND rid IS NULL
            THEN 'capacity abort line without rid and token counts'
        WHEN kind = 'input_length' AND n_in = '' THEN 'input length abort without token counts'
        WHEN kind = 'context_length' AND n_in = ''
            THEN 'context length abort without token counts'
        WHEN kind IN ('finish', 'receive', 'request_json') AND rid IS NULL
            THEN 'request log line without rid'
        WHEN kind = 'finish' AND (n_in = '' OR n_out = '')
            THEN 'Finish line without prompt_tokens/completion_tokens'
        WHEN kind = 'request_json' AND event = 'request.finished' AND (n_in = '' OR n_out = '')
            THEN 'Finish line without prompt_tokens/completion_tokens'
    END AS reason
FROM typed
