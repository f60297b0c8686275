-- What the capacity timeline could not take as the engine logs wrote it (engine_faults), by
-- node, time and line.
SELECT
    node, kind, refuses, ts, source, source_row, figure, other_ts, other_source, other_row,
    other_figure
FROM engine_faults
ORDER BY node, ts IS NULL, ts, source, source_row, kind
