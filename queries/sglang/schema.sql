-- Engine evidence tables, created once; filled by forensics.ingest.sglang.
-- engine_startup holds every startup line (server_args, KV pool allocations, sliding-window
-- pool lines, max_total_num_tokens, the engine's own pre-flight warning), a quarantined one
-- too, with its `reason` and no figures (it still marks where a start was); engine_sources
-- one row per log (its node, first and last line time, how many startup lines it loaded);
-- engine_time_steps each line of a log whose time is more than a second before the line
-- before it. engine_starts, engine_capacity (one span per server start) and engine_faults
-- (what the capacity timeline could not take as written) are rebuilt from them after each
-- ingest, since a span ends at the node's next start. Columns added later are added to
-- older databases here too.
CREATE TABLE IF NOT EXISTS engine_startup (
    node VARCHAR, role VARCHAR, kind VARCHAR, tags VARCHAR, ts TIMESTAMPTZ, tokens BIGINT,
    context_len BIGINT, source VARCHAR, source_row BIGINT
);
ALTER TABLE engine_startup ADD COLUMN IF NOT EXISTS pool VARCHAR;
ALTER TABLE engine_startup ADD COLUMN IF NOT EXISTS setup VARCHAR;
ALTER TABLE engine_startup ADD COLUMN IF NOT EXISTS page_size BIGINT;
ALTER TABLE engine_startup ADD COLUMN IF NOT EXISTS reason VARCHAR;
CREATE TABLE IF NOT EXISTS engine_sources (
    node VARCHAR, source VARCHAR, first_ts TIMESTAMPTZ, last_ts TIMESTAMPTZ,
    startup_lines BIGINT
);
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
)
