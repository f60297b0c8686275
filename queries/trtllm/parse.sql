-- One TensorRT-LLM server log -> one row per line that is engine evidence (docs/engine-logs.md,
-- "TensorRT-LLM"). Two line heads: the Python logger's `[MM/DD/YYYY-HH:MM:SS] [TRT-LLM]
-- {[MPI_Rank N] }[I] message` (tensorrt_llm/logger.py: format '[%(asctime)s] %(message)s',
-- datefmt '%m/%d/%Y-%H:%M:%S'; a local time in $timezone) and the C++ logger's
-- `[TensorRT-LLM]{[RANK N]}[INFO] message` (cpp/include/tensorrt_llm/common/logger.h), which
-- prints no time: a C++ line takes the time of the Python line before it, else the one after.
-- Kinds:
--   blocks       Number of blocks in KV cache primary pool: N   (kvCacheManager.cpp, the C++
--                executor of older releases)
--   window_blocks  Max KV cache blocks per sequence: M [window size=W], tokens per block=T,
--                primary blocks=N, secondary blocks=S, max sequence length=L (kvCacheManager.cpp
--                BlockManager: one per window size; blocks N, block_size T, setup W)
--   block_tokens Number of tokens per block: T.                  (kvCacheManager.cpp)
--   alloc        [MemUsageChange] Allocated X GiB for max tokens in paged KV cache (N).
--                (kvCacheManager.cpp: N = primary blocks x tokens per block)
--   seq_len      Adjusted max_seq_len to N (resource_manager.py); max_seq_len=N,
--                max_num_requests=... (py_executor_creator.py: it ends each KV cache creation)
--   estimated    Estimated max memory in KV cache : X GiB (_util.py: the PyTorch backend sized
--                the final KV cache after a first, estimation-only one)
-- Params: $path, $timezone, $torn_row (the Python head carries its year).
WITH head AS (
    SELECT
        source_row,
        regexp_extract(
            line,
            '^\[(\d{2})/(\d{2})/(\d{4})-(\d{2}):(\d{2}):(\d{2})\] \[TRT-LLM\](?: \[MPI_Rank (\d+)\])? \[[A-Z]\] (.*)$',
            ['mo', 'dd', 'yy', 'hh', 'mi', 'ss', 'rank', 'msg']
        ) AS p,
        regexp_extract(line, '^\[TensorRT-LLM\](?:\[RANK (\d+)\])?\[[A-Z]+\] (.*)$', ['rank', 'msg']) AS c,
        line
    FROM _engine_log_lines(CAST($path AS VARCHAR))
    WHERE line IS NOT NULL
),
timed AS (
    SELECT
        source_row,
        CASE WHEN p.mo <> '' THEN p.msg WHEN c.msg <> '' THEN c.msg END AS msg,
        nullif(CASE WHEN p.mo <> '' THEN p.rank ELSE c.rank END, '') AS tags,
        CASE WHEN p.mo <> '' THEN timezone(
            CAST($timezone AS VARCHAR),
            try_cast(p.yy || '-' || p.mo || '-' || p.dd || ' ' || p.hh || ':' || p.mi || ':' || p.ss AS TIMESTAMP)
        ) END AS own_ts,
        left(line, 2048) AS raw
    FROM head
),
filled AS (
    SELECT
        *,
        coalesce(
            own_ts,
            last_value(own_ts IGNORE NULLS) OVER (ORDER BY source_row ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
            first_value(own_ts IGNORE NULLS) OVER (ORDER BY source_row ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING)
        ) AS ts
    FROM timed
),
kinded AS (
    SELECT
        *,
        CASE
            WHEN starts_with(msg, 'Number of blocks in KV cache primary pool: ') THEN 'blocks'
            WHEN starts_with(msg, 'Max KV cache blocks per sequence: ') THEN 'window_blocks'
            WHEN starts_with(msg, 'Number of tokens per block: ') THEN 'block_tokens'
            WHEN starts_with(msg, '[MemUsageChange] Allocated ') AND contains(msg, ' for max tokens in paged KV cache (')
                THEN 'alloc'
            WHEN starts_with(msg, 'Adjusted max_seq_len to ') OR regexp_matches(msg, '^max_seq_len=\d*, max_num_requests=')
                THEN 'seq_len'
            WHEN starts_with(msg, 'Estimated max memory in KV cache') THEN 'estimated'
        END AS kind
    FROM filled
),
extracted AS (
    SELECT
        *,
        CASE kind
            WHEN 'blocks' THEN regexp_extract(msg, '^Number of blocks in KV cache primary pool: (\d+)$', 1)
            WHEN 'window_blocks' THEN regexp_extract(msg, ', primary blocks=(\d+), secondary blocks=\d+, ', 1)
            WHEN 'block_tokens' THEN regexp_extract(msg, '^Number of tokens per block: (\d+)\.$', 1)
            WHEN 'alloc' THEN regexp_extract(msg, ' for max tokens in paged KV cache \((\d+)\)\.?$', 1)
            WHEN 'seq_len' THEN coalesce(
                nullif(regexp_extract(msg, '^Adjusted max_seq_len to (\d+)$', 1), ''),
                regexp_extract(msg, '^max_seq_len=(\d+), ', 1))
        END AS n_text,
        CASE WHEN kind = 'seq_len' THEN starts_with(msg, 'Adjusted') END AS adjusted,
        -- the window size and tokens per block of a `Max KV cache blocks per sequence` line
        CASE WHEN kind = 'window_blocks' THEN regexp_extract(
            msg, '^Max KV cache blocks per sequence: \d+ \[window size=(\d+)\], tokens per block=(\d+), primary blocks=',
            ['window', 'tokens_per_block']) END AS wb
    FROM kinded
    WHERE kind IS NOT NULL
)
SELECT
    source_row,
    kind,
    tags,
    raw,
    ts,
    CAST(NULL AS VARCHAR) AS rid,
    CASE WHEN kind IN ('blocks', 'window_blocks') THEN try_cast(n_text AS BIGINT) END AS blocks,
    CASE WHEN kind = 'block_tokens' THEN try_cast(n_text AS BIGINT)
         WHEN kind = 'window_blocks' THEN try_cast(nullif(wb.tokens_per_block, '') AS BIGINT)
    END AS block_size,
    CASE WHEN kind = 'alloc' THEN try_cast(n_text AS BIGINT) END AS tokens,
    CASE WHEN kind = 'seq_len' THEN try_cast(n_text AS BIGINT) END AS context_len,
    CASE WHEN adjusted THEN 'adjusted'
         WHEN kind = 'window_blocks' THEN nullif(wb.window, '') END AS setup,
    CAST(NULL AS DOUBLE) AS usage_pct,
    CASE
        WHEN kind IS NULL THEN NULL
        WHEN ts IS NULL THEN 'no time on or near an engine evidence line'
        WHEN source_row = CAST($torn_row AS BIGINT)
            THEN 'line cut short (the file ends inside it): its figures are not read'
        WHEN n_text <> '' AND try_cast(n_text AS BIGINT) IS NULL THEN 'number out of range'
        WHEN n_text = '' OR (kind = 'window_blocks' AND coalesce(wb.tokens_per_block, '') = '')
            THEN 'KV cache line without a whole number'
    END AS reason
FROM extracted
