-- One SGLang server log (or metrics export) -> one row per line that is engine evidence.
-- Lines are read whole (_engine_log_lines), numbered from 1.
-- Spellings of SGLang 0.4.10 .. 0.5.23 (docs/engine-logs.md has the version table):
--   envelope   [YYYY-MM-DD HH:MM:SS{.mmm}{ DP0 PP0 ATTN_CP0 MOE_DP0 TP0 EP0}] message
--   kv_alloc   {Full |SWA |}KV Cache is allocated. {dtype: D, }#tokens: N, ...;
--              KV Cache VA upper bound. ... (not a capacity); Post-capture KV sizing: {draft }KV
--              cache allocated. dtype: D, #tokens: N, ...
--   swa_pool   Use {S|s}liding window memory pool. full_layer_tokens=F, swa_layer_tokens=S;
--              SWAKVPool {mem usage|VA upper bound}: ..., swa size: S, full size: F
--   pool       max_total_num_tokens=N, ..., context_len=C, ...
--   engine_preflight  KV pool holds N tokens, fewer than --context-length C. ... (0.5.23)
--   server_args  server_args=ServerArgs(k=v, ...) (<= 0.5.18) or server_args={'k': v, ...}
--   time_stats ReqTimeStats(rid=R{, bootstrap_room=B}, input_len=N, ..., type=T) and the
--              0.4.10/0.5.5 spelling Req Time Stats(rid=R, ..., input len=N, output len=M, ...)
--   input_length  Input length (N tokens) exceeds the maximum allowed length (M tokens). ...,
--              self.rid='R' (scheduler intake); truncated: the --allow-auto-truncate warning
--   kv_capacity   Request R exceeds the maximum number of tokens: N > M (disaggregation queue)
--   context_length  [http_server] Error: The input (N tokens) is longer than the model's
--              context length (C tokens). (tokenizer)
--   transfer_failed  Decode transfer failed for request rank=K decode_req.req.rid='R'
--              decode_req.req.bootstrap_room=B with exception ...
--   http_repeat   [http_server] Error: <an abort message already logged by the scheduler or
--              the Finish line>: counted as a duplicate record, never as a second abort
--   receive / finish  Receive: / Receive OpenAI: / Finish: obj=...(Python repr) and the JSON
--              request log events request.received(.openai) / request.finished
--   metrics    {"request_parameters": "<JSON string>", <meta_info>} (--export-metrics-to-file)
-- Python repr request lines are read with every string literal blanked first (short plain
-- tokens such as rids kept between \x01..\x02), so text inside a prompt or a response can
-- never pose as a field (a prompt holding "bootstrap_room=5" stays inside its literal).
-- `reason` is NULL for a well-formed line, else why it is quarantined. `raw` (cut at 2 KB) is
-- kept only for lines that carry no prompt/response text (never for request or metrics lines).
-- The last line of a file that no newline ends ($torn_row, else 0) is cut when its last figure
-- ends the line (`open_end`): that figure may be incomplete (a file that ends mid-number).
-- Params: $path, $torn_row.
WITH torn AS (
    SELECT CAST($torn_row AS BIGINT) AS torn_row
),
env AS (
    SELECT
        source_row,
        line,
        regexp_extract(
            line,
            '^\[(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?)((?: [A-Za-z_]+(?:\d+|\[\d+\])?)*)\] ?(.*)$',
            ['ts', 'tags', 'msg']
        ) AS e
    FROM _engine_log_lines(CAST($path AS VARCHAR))
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
            WHEN starts_with(msg, 'Receive: ') OR starts_with(msg, 'Receive OpenAI: ')
                THEN 'receive'
            WHEN starts_with(msg, 'Finish: ') THEN 'finish'
            WHEN starts_with(msg, '{"request_parameters"') THEN 'metrics'
            WHEN starts_with(msg, '{') AND contains(msg, '"request.') THEN 'request_json'
            WHEN regexp_matches(msg, '^(?:\S.{0,80}? )?KV Cache (?:is allocated|VA upper bound)\.')
                OR regexp_matches(msg, '^Post-capture KV sizing: (?:draft )?KV cache allocated\.')
                THEN 'kv_alloc'
            WHEN regexp_matches(msg, '^Use [Ss]liding window memory pool\. ')
                OR regexp_matches(msg, '^SWAKVPool (?:mem usage|VA upper bound): ')
                THEN 'swa_pool'
            WHEN starts_with(msg, 'max_total_num_tokens=') THEN 'pool'
            WHEN starts_with(msg, 'KV pool holds ') THEN 'engine_preflight'
            WHEN starts_with(msg, 'server_args=') THEN 'server_args'
            WHEN starts_with(msg, 'ReqTimeStats(') OR starts_with(msg, 'Req Time Stats(')
                THEN 'time_stats'
            WHEN starts_with(msg, 'Input length (') THEN 'input_length'
            WHEN starts_with(msg, 'Request length is longer than the KV cache pool size')
                THEN 'truncated'
            WHEN starts_with(msg, 'Request ') AND contains(msg, ' exceeds the maximum number of tokens')
                THEN 'kv_capacity'
            WHEN starts_with(msg, 'Decode transfer failed for request ') THEN 'transfer_failed'
            WHEN regexp_matches(msg, '^(?:\[http_server\] Error: )?The input \(')
                AND contains(msg, 'is longer than the model''s context length')
                THEN 'context_length'
            WHEN starts_with(msg, '[http_server] Error: Input length (')
                OR (starts_with(msg, '[http_server] Error: Request ')
                    AND contains(msg, ' exceeds the maximum number of tokens'))
                THEN 'http_repeat'
        END AS kind
    FROM msg
),
fields AS (
    SELECT
        source_row,
        kind,
        tags,
        ts_text,
        msg,
        CASE WHEN kind IN ('receive', 'finish', 'request_json', 'metrics') THEN NULL
             ELSE left(line, 2048) END AS raw,
        -- Python repr request lines with every string literal blanked (short plain ones kept
        -- as \x01token\x02)
        CASE WHEN kind IN ('receive', 'finish') THEN regexp_replace(
            msg,
            '''([^''"\\\s,(){}\[\]=]{0,256})''|''(?:[^''\\]|\\.)*''|"(?:[^"\\]|\\.)*"',
            chr(1) || '\1' || chr(2),
            'g'
        ) END AS tok,
        CASE WHEN kind IN ('request_json', 'metrics') THEN json_valid(msg) END AS json_ok
    FROM kinded
    WHERE kind IS NOT NULL
),
parts AS (
    SELECT
        *,
        CASE WHEN json_ok THEN msg::JSON END AS j,
        regexp_extract(tok, '^.*\x01meta_info\x02: \{(.*)$', 1) AS mi,
        -- per-request stats (old and new spellings): only the text inside the parentheses
        regexp_extract(msg, '^(?:ReqTimeStats|Req Time Stats)\(([^)]*)\)', 1) AS st
    FROM fields
),
extracted AS (
    SELECT
        source_row,
        kind,
        tags,
        raw,
        ts_text,
        json_ok,
        st,
        left(msg, 32) AS msg_head,
        CASE WHEN kind = 'request_json' THEN j ->> '$.event' END AS event,
        CASE WHEN kind = 'metrics' AND json_valid(j ->> '$.request_parameters')
            THEN json(j ->> '$.request_parameters') END AS rp,
        CASE kind
            WHEN 'kv_alloc' THEN regexp_extract(msg, '#tokens: (\d+)', 1)
            WHEN 'swa_pool' THEN regexp_extract(msg, '(?:full_layer_tokens=|full size: )(\d+)', 1)
            WHEN 'pool' THEN regexp_extract(msg, '^max_total_num_tokens=(\d+)', 1)
            WHEN 'engine_preflight' THEN regexp_extract(msg, '^KV pool holds (\d+) tokens', 1)
        END AS tokens_text,
        CASE kind
            WHEN 'pool' THEN regexp_extract(msg, '(?:^|[ ,])context_len=(\d+)', 1)
            WHEN 'engine_preflight' THEN regexp_extract(msg, 'fewer than --context-length (\d+)', 1)
        END AS ctx_text,
        CASE
            WHEN kind <> 'kv_alloc' THEN NULL
            WHEN contains(msg, 'KV Cache VA upper bound.') THEN 'va_upper_bound'
            WHEN starts_with(msg, 'Post-capture KV sizing: draft ') THEN 'post_capture_draft'
            WHEN starts_with(msg, 'Post-capture KV sizing: ') THEN 'post_capture'
            WHEN starts_with(msg, 'KV Cache is allocated.') THEN 'main'
            WHEN starts_with(msg, 'Full KV Cache is allocated.') THEN 'full'
            WHEN starts_with(msg, 'SWA KV Cache is allocated.') THEN 'swa'
            ELSE 'labelled'
        END AS pool_kind,
        CASE kind
            WHEN 'swa_pool' THEN CASE WHEN starts_with(msg, 'SWAKVPool') THEN 'swa_summary'
                                      ELSE 'swa_split' END
        END AS swa_kind,
        -- server_args (ServerArgs(k=v, ...) or {'k': v, ...}): role and the setups whose
        -- admission limit the plain-pool formula does not give
        CASE WHEN kind = 'server_args' THEN regexp_extract(
            msg, '[ ({,](?:disaggregation_mode=|''disaggregation_mode'': )''(\w+)''', 1
        ) END AS mode,
        CASE WHEN kind = 'server_args' THEN concat_ws(
            '; ',
            CASE WHEN try_cast(regexp_extract(
                msg, '[ ({,](?:dcp_size=|''dcp_size'': )(\d+)', 1) AS BIGINT) > 1
                THEN 'dcp_size=' || regexp_extract(
                    msg, '[ ({,](?:dcp_size=|''dcp_size'': )(\d+)', 1) END,
            CASE WHEN regexp_matches(msg, '[ ({,](?:enable_kv_cache_sharding=|''enable_kv_cache_sharding'': )True')
                THEN 'enable_kv_cache_sharding' END,
            CASE WHEN regexp_matches(msg, '[ ({,](?:enable_hisparse=|''enable_hisparse'': )True')
                THEN 'enable_hisparse' END,
            CASE WHEN regexp_matches(msg, '[ ({,](?:dllm_algorithm=|''dllm_algorithm'': )''')
                THEN 'dllm_algorithm' END
        ) END AS setup,
        CASE WHEN kind = 'server_args' THEN regexp_extract(
            msg, '[ ({,](?:page_size=|''page_size'': )(\d+)[,)}]', 1
        ) END AS page_size_text,
        -- a figure is whole when the separator that follows it in SGLang's format string is
        -- there: the name of the first figure without it (a line cut mid-field, or run into by
        -- another line); a server_args line is whole when it ends its ServerArgs(...) or {...}
        CASE
            -- another line's [time] inside this one: two lines run together (a line cut off
            -- by the next one a process wrote)
            WHEN kind IN ('server_args', 'kv_alloc', 'swa_pool', 'pool', 'engine_preflight',
                          'input_length', 'truncated', 'kv_capacity')
                AND regexp_matches(msg, '\[\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}')
                THEN 'run-in'
            WHEN kind = 'pool' AND NOT regexp_matches(msg, '^max_total_num_tokens=\d+, ')
                THEN 'max_total_num_tokens'
            WHEN kind = 'pool' AND regexp_matches(msg, '(?:^|[ ,])context_len=\d')
                AND NOT regexp_matches(msg, '(?:^|[ ,])context_len=\d+, ') THEN 'context_len'
            WHEN kind = 'kv_alloc' AND NOT regexp_matches(msg, '#tokens: \d+, ') THEN '#tokens'
            WHEN kind = 'swa_pool' AND starts_with(msg, 'Use ')
                AND NOT regexp_matches(msg, 'full_layer_tokens=\d+, ') THEN 'full_layer_tokens'
            WHEN kind = 'swa_pool' AND starts_with(msg, 'SWAKVPool')
                AND NOT regexp_matches(msg, 'full size: \d+\s*$') THEN 'full size'
            WHEN kind = 'engine_preflight'
                AND NOT regexp_matches(msg, 'fewer than --context-length \d+\.')
                THEN '--context-length'
            WHEN kind = 'truncated' AND NOT regexp_matches(msg, 'max_req_input_len=\d+\.')
                THEN 'max_req_input_len'
            WHEN kind = 'kv_capacity'
                AND NOT regexp_matches(msg, 'maximum number of tokens: \d+ > \d+\s*$')
                THEN 'the token limit'
            WHEN kind = 'server_args' AND NOT regexp_matches(msg, '[)}]\s*$') THEN 'server_args'
        END AS cut_field,
        -- its last figure ends the line: whole only if the line is ended by a newline (ingest
        -- checks that for the file's last line)
        kind = 'kv_capacity' OR (kind = 'swa_pool' AND starts_with(msg, 'SWAKVPool')) AS open_end,
        -- rid
        CASE kind
            WHEN 'time_stats' THEN nullif(trim(regexp_extract(st, '(?:^|[ ,])rid=([^,]*)', 1), ' ''"'), '')
            WHEN 'input_length' THEN nullif(regexp_extract(msg, ', self\.rid=''([^'']*)''', 1), '')
            WHEN 'kv_capacity' THEN nullif(regexp_extract(msg, '^Request (\S+) exceeds', 1), '')
            WHEN 'transfer_failed' THEN nullif(regexp_extract(msg, 'decode_req\.req\.rid=''([^'']*)''', 1), '')
            WHEN 'request_json' THEN coalesce(j ->> '$.rid', j ->> '$.out.meta_info.id')
            WHEN 'finish' THEN coalesce(
                nullif(regexp_extract(mi, '^\s*\x01id\x02: \x01([^\x02]*)\x02', 1), ''),
                nullif(regexp_extract(tok, '[(, ]rid=\x01([^\x02]*)\x02', 1), ''))
            WHEN 'receive' THEN nullif(regexp_extract(tok, '[(, ]rid=\x01([^\x02]*)\x02', 1), '')
        END AS rid,
        CASE kind
            WHEN 'time_stats' THEN regexp_extract(st, '(?:^|[ ,])bootstrap_room=(\d+|None)', 1)
            WHEN 'transfer_failed'
                THEN regexp_extract(msg, 'decode_req\.req\.bootstrap_room=(\d+|None)', 1)
            WHEN 'request_json' THEN coalesce(j ->> '$.obj.bootstrap_room', 'None')
            WHEN 'finish' THEN regexp_extract(tok, '[(, ]bootstrap_room=(\d+|None)', 1)
            WHEN 'receive' THEN regexp_extract(tok, '[(, ]bootstrap_room=(\d+|None)', 1)
        END AS room_text,
        CASE kind
            WHEN 'time_stats' THEN regexp_extract(st, '(?:^|[ ,])input[_ ]len=(\d+)', 1)
            WHEN 'finish' THEN regexp_extract(mi, '\x01prompt_tokens\x02: (\d+)', 1)
            WHEN 'request_json' THEN coalesce(j ->> '$.out.meta_info.prompt_tokens', '')
            WHEN 'kv_capacity' THEN regexp_extract(msg, 'maximum number of tokens: (\d+) > (\d+)', 1)
            WHEN 'input_length' THEN regexp_extract(msg, '^Input length \((\d+) tokens\) exceeds the maximum allowed length \((\d+) tokens\)', 1)
            WHEN 'truncated' THEN regexp_extract(msg, 'len\(req\.origin_input_ids\)=(\d+), max_req_input_len=(\d+)', 1)
            WHEN 'context_length' THEN regexp_extract(msg, 'The input \((\d+) tokens\) is longer than the model''s context length \((\d+) tokens\)', 1)
        END AS n_in,
        CASE kind
            WHEN 'time_stats' THEN regexp_extract(st, '(?:^|[ ,])output[_ ]len=(\d+)', 1)
            WHEN 'finish' THEN regexp_extract(mi, '\x01completion_tokens\x02: (\d+)', 1)
            WHEN 'request_json' THEN coalesce(j ->> '$.out.meta_info.completion_tokens', '')
        END AS n_out,
        CASE kind
            WHEN 'kv_capacity' THEN regexp_extract(msg, 'maximum number of tokens: (\d+) > (\d+)', 2)
            WHEN 'input_length' THEN regexp_extract(msg, '^Input length \((\d+) tokens\) exceeds the maximum allowed length \((\d+) tokens\)', 2)
            WHEN 'truncated' THEN regexp_extract(msg, 'len\(req\.origin_input_ids\)=(\d+), max_req_input_len=(\d+)', 2)
            WHEN 'context_length' THEN regexp_extract(msg, 'The input \((\d+) tokens\) is longer than the model''s context length \((\d+) tokens\)', 2)
        END AS n_max,
        CASE kind
            WHEN 'time_stats' THEN regexp_extract(st, '(?:^|[ ,])type=(\w+)', 1)
        END AS type_text,
        CASE kind
            WHEN 'finish' THEN nullif(regexp_extract(mi, '\x01finish_reason\x02: \{\x01type\x02: \x01(\w+)\x02', 1), '')
            WHEN 'request_json' THEN j ->> '$.out.meta_info.finish_reason.type'
        END AS finish_reason,
        CASE kind
            WHEN 'request_json' THEN j ->> '$.timestamp'
        END AS json_ts,
        j
    FROM parts
),
-- the metrics export: its fields sit in the record and in the request_parameters string
metrics AS (
    SELECT
        * REPLACE (
            CASE WHEN kind = 'metrics' THEN coalesce(rp ->> '$.rid', j ->> '$.id')
                 ELSE rid END AS rid,
            CASE WHEN kind = 'metrics' THEN coalesce(rp ->> '$.bootstrap_room', 'None')
                 ELSE room_text END AS room_text,
            CASE WHEN kind = 'metrics' THEN coalesce(j ->> '$.prompt_tokens', '')
                 ELSE n_in END AS n_in,
            CASE WHEN kind = 'metrics' THEN coalesce(j ->> '$.completion_tokens', '')
                 ELSE n_out END AS n_out,
            CASE WHEN kind = 'metrics' THEN j ->> '$.finish_reason.type'
                 ELSE finish_reason END AS finish_reason
        ),
        CASE WHEN kind = 'metrics' THEN j ->> '$.response_sent_to_client_ts' END AS sent_ts
    FROM extracted
),
typed AS (
    SELECT
        *,
        coalesce(
            try_cast(replace(ts_text, ',', '.') AS TIMESTAMP) AT TIME ZONE 'UTC',
            CASE WHEN regexp_matches(json_ts, '(?:[Zz]|[+-]\d{2}:?\d{2})$')
                 THEN try_cast(json_ts AS TIMESTAMPTZ)
                 ELSE try_cast(json_ts AS TIMESTAMP) AT TIME ZONE 'UTC' END,
            to_timestamp(try_cast(json_ts AS DOUBLE)),
            to_timestamp(try_cast(sent_ts AS DOUBLE))
        ) AS ts,
        CASE WHEN kind = 'request_json' AND json_ok AND event = 'request.finished' THEN 'finish'
             WHEN kind = 'request_json' AND json_ok
                 AND event IN ('request.received', 'request.received.openai') THEN 'receive'
             ELSE kind END AS line_kind,
        -- a number written in the line but outside BIGINT is quarantined, never loaded as NULL
        _out_of_range(
            [
                tokens_text, ctx_text,
                CASE WHEN regexp_matches(room_text, '^\d+$') THEN room_text END, n_in, n_out, n_max
            ],
            [
                '#tokens', 'context length', 'bootstrap_room', 'input tokens', 'output tokens',
                'token limit'
            ]
        ) AS out_of_range
    FROM metrics
)
SELECT
    source_row,
    line_kind AS kind,
    tags,
    raw,
    ts,
    rid,
    try_cast(nullif(nullif(room_text, ''), 'None') AS BIGINT) AS bootstrap_room,
    try_cast(nullif(n_in, '') AS BIGINT) AS input_len,
    try_cast(nullif(n_out, '') AS BIGINT) AS output_len,
    try_cast(nullif(n_max, '') AS BIGINT) AS max_tokens,
    CASE
        WHEN kind = 'time_stats' AND type_text IN ('prefill', 'decode') THEN type_text
        WHEN kind = 'server_args' AND mode IN ('prefill', 'decode') THEN mode
    END AS leg,
    finish_reason,
    try_cast(nullif(tokens_text, '') AS BIGINT) AS tokens,
    try_cast(nullif(ctx_text, '') AS BIGINT) AS context_len,
    coalesce(pool_kind, swa_kind) AS pool,
    setup,
    try_cast(nullif(page_size_text, '') AS BIGINT) AS page_size,
    CAST(NULL AS DOUBLE) AS usage_pct,
    CASE
        WHEN kind = 'request_json' AND NOT json_ok THEN 'request log line is not valid JSON'
        WHEN kind = 'request_json'
            AND event NOT IN ('request.received', 'request.received.openai', 'request.finished')
            THEN 'request log JSON with unknown event'
        WHEN kind = 'metrics' AND NOT json_ok THEN 'metrics export line is not valid JSON'
        WHEN kind = 'metrics' AND rp IS NULL
            THEN 'metrics export record without a request_parameters JSON string'
        WHEN kind = 'metrics' AND ts IS NULL
            THEN 'metrics export record without response_sent_to_client_ts'
        WHEN ts IS NULL THEN 'no [YYYY-MM-DD HH:MM:SS] time on an engine evidence line'
        WHEN len(out_of_range) > 0
            THEN 'number out of range (' || array_to_string(out_of_range, ', ') || ')'
        WHEN kind = 'kv_alloc' AND tokens_text = '' THEN 'KV Cache line without #tokens'
        WHEN kind = 'swa_pool' AND tokens_text = '' THEN 'sliding-window pool line without the full pool size'
        WHEN kind = 'pool' AND tokens_text = '' THEN 'max_total_num_tokens line without a number'
        WHEN kind = 'engine_preflight' AND (tokens_text = '' OR ctx_text = '')
            THEN 'KV pool pre-flight line without token counts'
        WHEN kind = 'time_stats' AND st = '' THEN 'ReqTimeStats line without (fields)'
        WHEN kind = 'time_stats' AND rid IS NULL THEN 'ReqTimeStats line without rid'
        WHEN kind = 'time_stats' AND n_in = '' THEN 'ReqTimeStats line without input_len'
        WHEN kind = 'time_stats' AND n_out = '' THEN 'ReqTimeStats line without output_len'
        WHEN kind = 'time_stats' AND type_text = '' THEN 'ReqTimeStats line without type'
        WHEN kind = 'kv_capacity' AND (rid IS NULL OR n_in = '')
            THEN 'capacity abort line without rid and token counts'
        WHEN kind = 'input_length' AND n_in = '' THEN 'input length abort without token counts'
        WHEN kind = 'truncated' AND n_in = '' THEN 'truncation warning without token counts'
        WHEN kind = 'context_length' AND n_in = ''
            THEN 'context length abort without token counts'
        WHEN kind = 'transfer_failed' AND rid IS NULL AND room_text = ''
            THEN 'decode transfer failure without rid and bootstrap_room'
        WHEN line_kind = 'finish' AND rid IS NULL THEN 'request log line without rid'
        WHEN line_kind = 'receive' AND rid IS NULL AND NOT starts_with(msg_head, 'Receive OpenAI: ')
            AND coalesce(event, '') <> 'request.received.openai'
            THEN 'request log line without rid'
        WHEN line_kind = 'finish' AND coalesce(finish_reason, '') <> 'abort'
            AND (n_in = '' OR n_out = '')
            THEN 'Finish line without prompt_tokens/completion_tokens'
        WHEN cut_field = 'run-in'
            THEN 'two lines run together: another line''s [time] inside this one'
        WHEN cut_field = 'server_args'
            THEN 'server_args line cut: it does not end with its closing ) or }'
        WHEN cut_field IS NOT NULL
            THEN 'line cut mid-field: ' || cut_field || ' is not followed by its separator'
        WHEN kind = 'pool' AND ctx_text = '' THEN 'max_total_num_tokens line without context_len'
        -- figures SGLang never starts with: a pool of 0 (model_runner raises "Not enough
        -- memory"), an admission limit min(context_len - 1, pool - 1) - 5 below 1 (tp_worker
        -- asserts "Memory pool size is too small"), a token limit of 0
        WHEN kind IN ('kv_alloc', 'swa_pool', 'pool', 'engine_preflight')
            AND try_cast(tokens_text AS BIGINT) = 0
            THEN 'impossible figure: a KV pool of 0 tokens (SGLang does not start with one)'
        WHEN kind IN ('pool', 'engine_preflight') AND try_cast(ctx_text AS BIGINT) = 0
            THEN 'impossible figure: a context length of 0 tokens'
        WHEN kind = 'pool' AND least(
            try_cast(ctx_text AS BIGINT) - 1, try_cast(tokens_text AS BIGINT) - 1) - 5 < 1
            THEN 'impossible figures: the admission limit min(context_len - 1, '
                || 'max_total_num_tokens - 1) - 5 = ' || (least(
                    try_cast(ctx_text AS BIGINT) - 1, try_cast(tokens_text AS BIGINT) - 1) - 5)
                || ' admits no prompt (SGLang does not start: Memory pool size is too small)'
        WHEN kind IN ('input_length', 'truncated', 'kv_capacity', 'context_length')
            AND try_cast(n_max AS BIGINT) = 0
            THEN 'impossible figure: a token limit of 0'
        WHEN open_end AND source_row = (SELECT torn_row FROM torn)
            THEN 'line cut at the end of the file (no newline after it): its last figure may '
                || 'be incomplete'
    END AS reason
FROM typed
