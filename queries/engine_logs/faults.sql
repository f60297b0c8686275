-- What the capacity timeline could not take as the engine logs wrote it, one row per finding,
-- for every engine alike (engine_faults, rebuilt after each ingest from engine_starts,
-- engine_startup and engine_time_steps). `refuses`: forensics capacity writes no entry while
-- it stands (the engine's own figures contradict each other). kind:
--   disagreement  the pool figures of one start that the engine prints from one value differ
--                 (figure: the smallest, at source:row; other_figure: the largest, at
--                 other_source:other_row)
--   below_page    a pool smaller than one page of the start's page_size (SGLang)
--   no_capacity   a start whose pool the logs do not prove: none of its capacity lines could
--                 be read (figure NULL), or (figure: why) one was quarantined where the engine
--                 keeps the smallest of several, or its pool is one per attention window size;
--                 it ends the span before it and has none of its own
--   quarantined   a startup line quarantined (figure: the reason)
--   time_back     an evidence line more than a second before the one above it in its log
--                 (other_row, other_ts)
--   year          a log that prints no year whose lines lie more than half a year outside the
--                 case window (figure: why its year may be wrong)
SELECT
    node, 'disagreement' AS kind, true AS refuses, start_ts AS ts, lo_source AS source,
    lo_row AS source_row, lo_text AS figure, CAST(NULL AS TIMESTAMPTZ) AS other_ts,
    hi_source AS other_source, hi_row AS other_row, hi_text AS other_figure
FROM engine_starts
WHERE disagrees AND start_ts IS NOT NULL
UNION ALL
SELECT
    node, 'below_page', true, start_ts, source, source_row, 'a pool of ' || tokens || ' tokens',
    NULL, args_source, args_row, 'page_size=' || page_size
FROM engine_starts
WHERE below_page AND start_ts IS NOT NULL
UNION ALL
SELECT
    node, 'no_capacity', false, start_ts, source, source_row, unproven, NULL, NULL, NULL, NULL
FROM engine_starts
WHERE tokens IS NULL AND start_ts IS NOT NULL AND (quarantined IS NOT NULL OR unproven IS NOT NULL)
UNION ALL
SELECT node, 'quarantined', false, ts, source, source_row, reason, NULL, NULL, NULL, NULL
FROM engine_startup
WHERE reason IS NOT NULL
UNION ALL
SELECT
    node, 'time_back', false, ts, source, source_row, NULL, prev_ts, source, prev_row, NULL
FROM engine_time_steps
UNION ALL
SELECT
    node, 'year', false, first_ts, source, CAST(NULL AS BIGINT), year_note, NULL, NULL, NULL, NULL
FROM engine_sources
WHERE year_note IS NOT NULL
