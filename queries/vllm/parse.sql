-- One vLLM server log -> one row per line that is engine evidence (docs/engine-logs.md,
-- "vLLM"). Lines are read whole (_engine_log_lines), numbered from 1, colour codes removed
-- first.
-- The line head, per version (vllm/logger.py _FORMAT, _DATE_FORMAT = "%m-%d %H:%M:%S"):
--   0.6 - 0.7    {prefix}LEVEL mm-dd HH:MM:SS file.py:N] message
--   0.8 - 0.30   {prefix}LEVEL mm-dd HH:MM:SS [file.py:N] message
--   0.31 +       {prefix}(ProcessName pid=N) LEVEL mm-dd HH:MM:SS [file.py:N] message
-- where an output wrapper (_add_prefix) writes `(WorkerName pid=N) ` before a worker
-- process's lines up to 0.30. The head names no year and no zone: the year of the first
-- headed line is $year (else the one of $anchor_year - 1 .. + 1 that puts the line nearest
-- to $anchor), a month-day that falls more than half a year before the previous line's
-- starts the next year, and the time is local time in $timezone (a local time the clock
-- skipped or went over twice, daylight saving time, is quarantined: its UTC time is unknown).
-- A traceback line (no head) takes the time of the headed line before it. An args dump run
-- into the line before it is read as that args dump (its own head), quarantined.
-- Kinds (each with the format string's file per version in tests/fixtures/vllm/*/README.md):
--   args          args: Namespace(...) (up to 0.8.5) / non-default args: {...} (0.9.2+):
--                 kv_role, block_size, max_model_len
--   engine_config Initializing a{n| V0| V1} LLM engine (vX) with config: ..., max_seq_len=N
--   max_model_len Using max model len N (0.9.2+)
--   blocks        # GPU blocks: N, # CPU blocks: M (0.6), # CUDA blocks: N, # CPU blocks: M
--                 (V0 0.7 - 0.10), # GPU blocks: N (V1 0.7)
--   kv_tokens     {GPU|<DEVICE>}{ + host} KV cache size: N tokens (N with thousands separators)
--   failed        EngineCore failed to start. / ... the estimated maximum model length is N
--   rejected      This model's maximum context length is N tokens. However, ... (in the
--                 traceback of Error in preprocessing prompt inputs); 'max_tokens' or
--                 'max_completion_tokens' is too large: ...; Input prompt (N tokens) is too
--                 long and exceeds limit of M / ... + lookahead slots (K) is too long and
--                 exceeds the capacity of block_manager (V0 scheduler)
--   kv_expired    Releasing expired KV blocks for request X which were retrieved by ...
--   kv_invalid    Potentially invalid KV blocks for unrecognized request X were retrieved ...
--   received / added / aborted / preempted   request lines (rid), aborted: one or more ids
--   usage         {GPU|<DEVICE>} KV cache usage: P% (periodic stats)
-- `reason` is NULL for a well-formed line, else why it is quarantined. `raw` (cut at 2 KB)
-- is never kept for a Received request line (it may hold the prompt). A number is read
-- only when the text after it is there too: the last line of a file that ends without a
-- newline ($torn_row) is cut short and never gives a figure.
-- Lines end at "\n" or "\r\n" (vLLM's NewLineFormatter ends every line of a multi-line record but
-- the last with "\r\n"); a bare "\r" (a progress bar redrawing) also ends a line, so row
-- numbers after one count it.
-- Params: $path, $year, $anchor, $timezone, $torn_row.
WITH head AS (
    SELECT
        source_row,
        line,
        regexp_extract(
            line,
            '^(?:\(([^()]*) pid=\d+\) )?.*?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:[.,]\d+)? \[?[^\s\]]+\.py:\d+\] ?(.*)$',
            ['proc', 'mo', 'dd', 'hh', 'mi', 'ss', 'msg']
        ) AS h
    FROM _engine_log_lines(CAST($path AS VARCHAR))
    WHERE line IS NOT NULL
),
-- an args dump run into the line before it (that line lost its end): the launch it marks
-- still happened, so the line is read as that args dump at its own head, quarantined. Never
-- inside a Received request line (prompt text).
run_in AS (
    SELECT
        source_row,
        line,
        coalesce(r.mo, '') <> '' AND NOT starts_with(m, 'Received request ') AS run_in,
        CASE WHEN coalesce(r.mo, '') <> '' AND NOT starts_with(m, 'Received request ')
             THEN r ELSE h END AS h
    FROM (
        SELECT
            *,
            CASE WHEN contains(m, 'args: ') THEN regexp_extract(
                m,
                '.(?:\(([^()]*) pid=\d+\) )?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:[.,]\d+)? \[?[^\s\]]+\.py:\d+\] ?((?:args: Namespace\(|non-default args: ).*)$',
                ['proc', 'mo', 'dd', 'hh', 'mi', 'ss', 'msg']
            ) END AS r
        FROM (SELECT *, CASE WHEN h.mo <> '' THEN h.msg ELSE line END AS m FROM head)
    )
),
md AS (
    SELECT
        source_row,
        line,
        run_in,
        nullif(h.proc, '') AS tags,
        h.mo <> '' AS headed,
        CASE WHEN h.mo <> '' THEN h.msg ELSE trim(line) END AS msg,
        h.mo, h.dd, h.hh, h.mi, h.ss,
        -- month-day-time in a leap year, for ordering and the year wrap
        CASE WHEN h.mo <> '' THEN try_cast(
            '2000-' || h.mo || '-' || h.dd || ' ' || h.hh || ':' || h.mi || ':' || h.ss
            AS TIMESTAMP) END AS md_ts
    FROM run_in
),
headed AS (
    SELECT
        source_row,
        md_ts,
        CASE WHEN md_ts < lag(md_ts) OVER (ORDER BY source_row) - INTERVAL 183 DAY
             THEN 1 ELSE 0 END AS wrap,
        row_number() OVER (ORDER BY source_row) AS nth
    FROM md
    WHERE md_ts IS NOT NULL
),
first_md AS (
    SELECT any_value(md_ts) AS md_ts FROM headed WHERE nth = 1
),
first_year AS (
    -- the year of the first headed line: $year, else the one nearest to $anchor
    SELECT coalesce(
        CAST($year AS INTEGER),
        (
            SELECT arg_min(y, abs(epoch(
                try_cast(printf('%04d', y) || strftime(f.md_ts, '-%m-%d %H:%M:%S') AS TIMESTAMP)
                - CAST($anchor AS TIMESTAMP))))
            FROM (SELECT unnest([year(CAST($anchor AS TIMESTAMP)) - 1, year(CAST($anchor AS TIMESTAMP)),
                                 year(CAST($anchor AS TIMESTAMP)) + 1]) AS y)
            WHERE try_cast(printf('%04d', y) || strftime(f.md_ts, '-%m-%d %H:%M:%S') AS TIMESTAMP)
                IS NOT NULL
        )
    ) AS y
    FROM first_md AS f
),
dated AS (
    SELECT
        m.*,
        h.nth,
        (SELECT y FROM first_year) + sum(coalesce(h.wrap, 0)) OVER (ORDER BY m.source_row)
            AS year_no
    FROM md AS m
    LEFT JOIN headed AS h USING (source_row)
),
localized AS (
    SELECT
        *,
        CASE WHEN headed THEN try_cast(
            printf('%04d', year_no) || '-' || mo || '-' || dd || ' ' || hh || ':' || mi || ':' || ss
            AS TIMESTAMP) END AS local_ts
    FROM dated
),
timed AS (
    SELECT
        *,
        timezone(CAST($timezone AS VARCHAR), local_ts) AS own_ts,
        -- a local time the clock skipped or went over twice (daylight saving time)
        _local_time_fault(CAST($timezone AS VARCHAR), local_ts) AS own_clock_fault
    FROM localized
),
filled AS (
    SELECT
        *,
        -- a traceback line takes the time of the headed line before it
        CASE WHEN headed THEN own_ts
             ELSE last_value(own_ts IGNORE NULLS) OVER (
                 ORDER BY source_row ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) END AS ts,
        CASE WHEN headed THEN own_clock_fault
             ELSE nullif(last_value(CASE WHEN headed THEN coalesce(own_clock_fault, '') END IGNORE NULLS) OVER (
                 ORDER BY source_row ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), '') END
            AS clock_fault,
        -- the first and last time the engine wrote on any line of the log (evidence or not):
        -- how long the server is known to have run (the node-id clash rule)
        min(own_ts) OVER () AS first_line_ts,
        max(own_ts) OVER () AS last_line_ts
    FROM timed
),
kinded AS (
    SELECT
        *,
        CASE
            WHEN headed AND (starts_with(msg, 'args: Namespace(') OR starts_with(msg, 'non-default args: '))
                THEN 'args'
            WHEN headed AND regexp_matches(msg, '^Initializing an? (?:V0 |V1 )?LLM engine \(v')
                THEN 'engine_config'
            WHEN headed AND starts_with(msg, 'Using max model len ') THEN 'max_model_len'
            WHEN headed AND regexp_matches(msg, '^# \w+ blocks: ') THEN 'blocks'
            WHEN headed AND regexp_matches(msg, '^\w+(?: \+ host)? KV cache size: ') THEN 'kv_tokens'
            WHEN headed AND starts_with(msg, 'EngineCore failed to start') THEN 'failed'
            WHEN contains(msg, 'the estimated maximum model length is ') THEN 'failed'
            WHEN contains(msg, 'This model''s maximum context length is ') THEN 'rejected'
            WHEN headed AND starts_with(msg, 'Input prompt (') AND contains(msg, ' is too long')
                THEN 'rejected'
            WHEN headed AND starts_with(msg, 'Releasing expired KV blocks for request ') THEN 'kv_expired'
            WHEN headed AND starts_with(msg, 'Potentially invalid KV blocks for unrecognized request ')
                THEN 'kv_invalid'
            WHEN headed AND starts_with(msg, 'Received request ') THEN 'received'
            WHEN headed AND starts_with(msg, 'Added request ') THEN 'added'
            WHEN headed AND (starts_with(msg, 'Aborted request ') OR starts_with(msg, 'Aborted request(s) '))
                THEN 'aborted'
            WHEN headed AND starts_with(msg, 'Sequence group ') AND contains(msg, ' is preempted by ')
                THEN 'preempted'
            WHEN headed AND regexp_matches(msg, '(?:^|[ ,:])\w+ KV cache usage: ') THEN 'usage'
        END AS kind
    FROM filled
),
fields AS (
    SELECT
        source_row,
        kind,
        tags,
        ts,
        own_ts,
        run_in,
        clock_fault,
        first_line_ts,
        last_line_ts,
        -- the year a headed line's month-day is not a day of (02-29 outside a leap year)
        CASE WHEN md_ts IS NOT NULL AND own_ts IS NULL THEN year_no END AS dayless_year,
        strftime(md_ts, '%m-%d') AS month_day,
        source_row = CAST($torn_row AS BIGINT) AS torn,
        CASE WHEN kind = 'received' THEN NULL ELSE left(line, 2048) END AS raw,
        CASE WHEN kind = 'received' THEN left(msg, 200) ELSE msg END AS msg
    FROM kinded
    WHERE kind IS NOT NULL
),
extracted AS (
    SELECT
        *,
        CASE kind
            WHEN 'args' THEN nullif(regexp_extract(msg, '(?:kv_role=|''kv_role'': )''(\w+)''', 1), '')
        END AS kv_role,
        CASE kind
            WHEN 'args' THEN regexp_extract(msg, '(?:[ (,{]block_size=|''block_size'': )(\d+)', 1)
        END AS block_text,
        CASE kind
            WHEN 'args' THEN regexp_extract(msg, '(?:[ (,{]max_model_len=|''max_model_len'': )(\d+)', 1)
            WHEN 'engine_config' THEN regexp_extract(msg, '[ ,]max_seq_len=(\d+)[,)]', 1)
            WHEN 'max_model_len' THEN regexp_extract(msg, '^Using max model len (\d+)$', 1)
        END AS ctx_text,
        CASE kind
            WHEN 'blocks' THEN regexp_extract(msg, '^# \w+ blocks: (\d+)(?:, # CPU blocks: \d+)?$', 1)
            WHEN 'kv_tokens' THEN regexp_extract(msg, '^\w+(?: \+ host)? KV cache size: (\d{1,3}(?:,\d{3})*|\d+) tokens(?:,|$)', 1)
        END AS tokens_text,
        CASE kind WHEN 'kv_tokens' THEN regexp_extract(msg, '^(\w+(?: \+ host)?) KV cache size', 1)
                  WHEN 'blocks' THEN regexp_extract(msg, '^# (\w+) blocks', 1) END AS device,
        CASE kind
            WHEN 'kv_expired' THEN regexp_extract(msg, '^Releasing expired KV blocks for request (\S+) which were retrieved by \d+ \w+ worker\(s\) ', 1)
            WHEN 'kv_invalid' THEN regexp_extract(msg, '^Potentially invalid KV blocks for unrecognized request (\S+) were retrieved by ', 1)
            WHEN 'received' THEN regexp_extract(msg, '^Received request (\S+?):? ', 1)
            WHEN 'added' THEN regexp_extract(msg, '^Added request (\S+)\.$', 1)
            WHEN 'aborted' THEN regexp_extract(msg, '^Aborted request(?:\(s\))? (\S+)\.$', 1)
            WHEN 'preempted' THEN regexp_extract(msg, '^Sequence group (\S+) is preempted by ', 1)
        END AS rid_text,
        -- the prompt length a refusal states, and the limit it states
        CASE WHEN kind = 'rejected' THEN coalesce(
            nullif(regexp_extract(msg, 'However, you requested \d+ tokens \((\d+) in the messages, \d+ in the completion\)', 1), ''),
            nullif(regexp_extract(msg, 'However, you requested (\d+) tokens in the (?:messages|input)', 1), ''),
            nullif(regexp_extract(msg, '(?:However, your request has|and your request has) (\d+) input tokens', 1), ''),
            nullif(regexp_extract(msg, 'your prompt contains (?:at least )?(\d+) input tokens', 1), ''),
            nullif(regexp_extract(msg, '^Input prompt \((\d+) tokens\)', 1), ''),
            ''
        ) END AS n_in,
        CASE WHEN kind = 'rejected' THEN coalesce(
            nullif(regexp_extract(msg, 'This model''s maximum context length is (\d+) tokens', 1), ''),
            nullif(regexp_extract(msg, 'is too long and exceeds limit of (\d+)$', 1), ''),
            ''
        ) END AS n_max,
        CASE kind WHEN 'failed' THEN regexp_extract(msg, 'the estimated maximum model length is (\d+)', 1) END AS est_text,
        CASE kind WHEN 'usage' THEN regexp_extract(msg, '(?:^|[ ,:])\w+ KV cache usage: (\d+(?:\.\d+)?)%', 1) END AS usage_text,
        CASE kind WHEN 'engine_config' THEN regexp_extract(msg, '^Initializing an? (?:V0 |V1 )?LLM engine \(v([^)]*)\)', 1) END AS version
    FROM fields
),
typed AS (
    SELECT
        *,
        try_cast(replace(tokens_text, ',', '') AS BIGINT) AS tokens,
        _out_of_range(
            [replace(tokens_text, ',', ''), ctx_text, block_text, n_in, n_max],
            ['KV cache size', 'context length', 'block size', 'prompt tokens', 'token limit']
        ) AS out_of_range
    FROM extracted
)
SELECT
    source_row,
    kind,
    tags,
    raw,
    -- a line whose local time has no one UTC time has none, but for an args dump: the launch
    -- happened, so it ends the span before it at the earliest it can have been (an hour before
    -- the later reading: no clock shift is longer)
    CASE WHEN clock_fault IS NULL THEN ts
         WHEN kind = 'args' THEN ts - INTERVAL 1 HOUR END AS ts,
    first_line_ts,
    last_line_ts,
    CASE WHEN rid_text <> '' THEN rid_text END AS rid,
    try_cast(nullif(n_in, '') AS BIGINT) AS input_len,
    try_cast(nullif(n_max, '') AS BIGINT) AS max_tokens,
    CASE WHEN kind = 'blocks' THEN tokens END AS blocks,
    CASE WHEN kind = 'kv_tokens' THEN tokens END AS tokens,
    try_cast(nullif(ctx_text, '') AS BIGINT) AS context_len,
    try_cast(nullif(block_text, '') AS BIGINT) AS block_size,
    CASE kv_role WHEN 'kv_producer' THEN 'prefill' WHEN 'kv_consumer' THEN 'decode'
                 WHEN 'kv_both' THEN 'both' END AS leg,
    kv_role,
    device,
    version,
    try_cast(nullif(usage_text, '') AS DOUBLE) AS usage_pct,
    CASE
        WHEN clock_fault IS NOT NULL THEN clock_fault
        WHEN dayless_year IS NOT NULL
            THEN 'its day ' || month_day || ' is not a day of '
                || CAST(dayless_year AS VARCHAR) || ', the year the line is read in (the '
                || 'year given, or the one nearest the case window)'
        WHEN ts IS NULL THEN 'no "mm-dd HH:MM:SS" time on or before an engine evidence line'
        WHEN run_in
            THEN 'two lines run together: an args dump run into the line before it (the launch '
                || 'it marks is kept, its setup unknown)'
        WHEN torn AND kind IN ('args', 'engine_config', 'max_model_len', 'blocks', 'kv_tokens', 'rejected', 'usage', 'failed')
            THEN 'line cut short (the file ends inside it): its figures are not read'
        WHEN len(out_of_range) > 0
            THEN 'number out of range (' || array_to_string(out_of_range, ', ') || ')'
        WHEN kind IN ('blocks', 'kv_tokens') AND tokens_text = ''
            THEN 'KV cache line without a whole number of ' || CASE kind WHEN 'blocks' THEN 'blocks' ELSE 'tokens' END
        WHEN kind = 'max_model_len' AND ctx_text = '' THEN 'max model len line without a number'
        WHEN kind = 'rejected' AND n_max = '' AND n_in = '' THEN 'refusal without token counts'
        WHEN kind IN ('kv_expired', 'kv_invalid', 'added', 'aborted', 'preempted') AND rid_text = ''
            THEN 'request line without a request id'
        WHEN kind = 'usage' AND usage_text = '' THEN 'stats line without the KV cache usage'
        -- vLLM never starts with an empty pool: V0 raises "No available memory for the cache
        -- blocks" after printing its block count, V1 before it prints a pool line
        WHEN kind IN ('blocks', 'kv_tokens') AND tokens = 0
            THEN 'impossible figure: a KV pool of 0 (vLLM does not start with one)'
    END AS reason
FROM typed
