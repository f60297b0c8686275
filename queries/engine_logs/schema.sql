-- The engine evidence tables every engine log reader fills (forensics.ingest.engine_logs),
-- created once; columns added later are added to older databases here too.
-- engine_startup holds every startup line (kind: the engine's own: server_args, kv_alloc,
-- swa_pool, pool, engine_preflight for SGLang, vllm_<kind>, trtllm_<kind>), a quarantined one
-- too, with its `reason` and no figures (it still marks where a start was); engine_sources
-- one row per log (its node, first and last evidence line time, how many startup lines it
-- loaded, and year_note: why the year read for a log that prints none may be wrong); engine_time_steps each evidence line of a log whose time is more than a second
-- before that of the line above it. engine_starts (one row per server start), engine_capacity
-- (one span per start with a pool) and engine_faults (what the capacity timeline could not
-- take as written) are rebuilt from them after each ingest (capacity_spans), since a span ends
-- at the node's next start. engine_kv_faults holds one row per (node, request, kind) of a KV
-- transfer fault (kind expired: the prefill released the KV blocks of a request whose lease
-- expired; invalid: a decode worker read KV blocks of a request the prefill no longer knew),
-- rid as the engine printed it and ext_rid the id the client gave (vLLM's internal
-- `<external id>-<8 hex>` less its suffix); engine_pool_usage the periodic `KV cache usage:
-- P%` lines.
CREATE TABLE IF NOT EXISTS engine_startup (
    node VARCHAR, role VARCHAR, kind VARCHAR, tags VARCHAR, ts TIMESTAMPTZ, tokens BIGINT,
    context_len BIGINT, source VARCHAR, source_row BIGINT
);
ALTER TABLE engine_startup ADD COLUMN IF NOT EXISTS pool VARCHAR;
ALTER TABLE engine_startup ADD COLUMN IF NOT EXISTS setup VARCHAR;
ALTER TABLE engine_startup ADD COLUMN IF NOT EXISTS page_size BIGINT;
ALTER TABLE engine_startup ADD COLUMN IF NOT EXISTS reason VARCHAR;
ALTER TABLE engine_startup ADD COLUMN IF NOT EXISTS blocks BIGINT;
ALTER TABLE engine_startup ADD COLUMN IF NOT EXISTS block_size BIGINT;
CREATE TABLE IF NOT EXISTS engine_sources (
    node VARCHAR, source VARCHAR, first_ts TIMESTAMPTZ, last_ts TIMESTAMPTZ,
    startup_lines BIGINT
);
ALTER TABLE engine_sources ADD COLUMN IF NOT EXISTS year_note VARCHAR;
CREATE TABLE IF NOT EXISTS engine_time_steps (
    node VARCHAR, source VARCHAR, source_row BIGINT, ts TIMESTAMPTZ, prev_row BIGINT,
    prev_ts TIMESTAMPTZ
);
CREATE TABLE IF NOT EXISTS engine_capacity (
    node VARCHAR, role VARCHAR, tokens BIGINT, context_len BIGINT, start_ts TIMESTAMPTZ,
    end_ts TIMESTAMPTZ, source VARCHAR, source_row BIGINT
);
ALTER TABLE engine_capacity ADD COLUMN IF NOT EXISTS reject_from BIGINT;
ALTER TABLE engine_capacity ADD COLUMN IF NOT EXISTS note VARCHAR;
ALTER TABLE engine_capacity ADD COLUMN IF NOT EXISTS engine_warned BOOLEAN;
CREATE TABLE IF NOT EXISTS engine_requests (
    node VARCHAR, role VARCHAR, rid VARCHAR, bootstrap_room BIGINT, input_len BIGINT,
    output_len BIGINT, ts TIMESTAMPTZ, source VARCHAR, source_row BIGINT, kind VARCHAR,
    finish_reason VARCHAR
);
CREATE TABLE IF NOT EXISTS engine_aborts (
    node VARCHAR, role VARCHAR, rid VARCHAR, bootstrap_room BIGINT, requested_tokens BIGINT,
    max_tokens BIGINT, ts TIMESTAMPTZ, source VARCHAR, source_row BIGINT, kind VARCHAR
);
CREATE TABLE IF NOT EXISTS engine_kv_faults (
    node VARCHAR, role VARCHAR, ts TIMESTAMPTZ, rid VARCHAR, ext_rid VARCHAR, kind VARCHAR,
    lines BIGINT, source VARCHAR, source_row BIGINT
);
CREATE TABLE IF NOT EXISTS engine_pool_usage (
    node VARCHAR, role VARCHAR, ts TIMESTAMPTZ, usage_pct DOUBLE, source VARCHAR,
    source_row BIGINT
);
-- Macros the engines' queries share (temporary: defined on each connection that ingests).
-- A log's lines, whole (a 4-byte delimiter that never occurs in a log, no quoting), numbered
-- from 1, colour codes removed: what every engine's parse query reads. A line ends at "\n" or
-- "\r\n" (vLLM ends every line of a multi-line record but the last with "\r\n"); DuckDB's reader
-- also ends one at a bare "\r" (a progress bar redrawing), so a row number after one counts it.
CREATE OR REPLACE TEMP MACRO _engine_log_lines(path) AS TABLE
SELECT ordinality AS source_row, regexp_replace(line, '\x1b\[[0-9;]*m', '', 'g') AS line
FROM read_csv(
    path, columns = {'line': 'VARCHAR'}, delim = chr(30) || chr(31) || chr(30) || chr(31),
    quote = '', escape = '', header = false, auto_detect = false, strict_mode = false,
    new_line = '\r\n', max_line_size = 268435456, buffer_size = 268435456
) WITH ORDINALITY;
-- The names of the figures written in a line that no 64-bit integer holds (`texts`: each
-- figure's digits as the line writes them, '' or NULL where it has none): such a line is
-- quarantined, never loaded with the figure missing.
CREATE OR REPLACE TEMP MACRO _out_of_range(texts, names) AS list_filter(
    list_transform(
        list_zip(texts, names),
        lambda p: CASE WHEN p[1] <> '' AND try_cast(p[1] AS BIGINT) IS NULL THEN p[2] END
    ),
    lambda x: x IS NOT NULL
);
-- The note of a span whose start's pool lines disagree (the lines of the smallest and the
-- largest figure): the smaller is kept in the case database, forensics capacity refuses.
CREATE OR REPLACE TEMP MACRO _disagreement_note(lo_text, lo_source, lo_row, hi_text, hi_source, hi_row) AS
    'the capacity lines of this start disagree: ' || lo_text || ' (' || lo_source || ':' || lo_row
    || ') and ' || hi_text || ' (' || hi_source || ':' || hi_row || '); the smaller is kept '
    || 'here, but forensics capacity refuses this start';
-- Why a local time (a naive TIMESTAMP read in `zone`) has no one UTC time, else NULL: it falls
-- in the hour the clock was set forward past (it never occurred) or in the one it was set
-- back over (it occurred twice, and the line alone does not say which). Such a line is
-- quarantined, never read at one of the offsets silently.
CREATE OR REPLACE TEMP MACRO _local_time_fault(zone, lt) AS CASE
    WHEN lt IS NULL OR zone = 'UTC' THEN NULL
    WHEN timezone(zone, timezone(zone, lt)) <> lt
        THEN 'local time ' || strftime(lt, '%Y-%m-%d %H:%M:%S') || ' does not exist in ' || zone
            || ' (the clock was set forward past it): its UTC time is unknown'
    WHEN timezone(zone, timezone(zone, lt) + INTERVAL 1 HOUR) = lt
        OR timezone(zone, timezone(zone, lt) - INTERVAL 1 HOUR) = lt
        OR timezone(zone, timezone(zone, lt) + INTERVAL 30 MINUTE) = lt
        OR timezone(zone, timezone(zone, lt) - INTERVAL 30 MINUTE) = lt
        THEN 'local time ' || strftime(lt, '%Y-%m-%d %H:%M:%S') || ' occurs twice in ' || zone
            || ' (the clock was set back over it): which of its two UTC times the line means is '
            || 'unknown'
END;
