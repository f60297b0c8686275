-- The engine rows of one input with no role (after the node fill) and with one. Params:
-- $source.
SELECT
    count(*) FILTER (WHERE role IS NULL) AS roleless,
    count(*) FILTER (WHERE role IS NOT NULL) AS with_role
FROM (
    SELECT role FROM engine_requests WHERE source = $source
    UNION ALL
    SELECT role FROM engine_startup WHERE source = $source
    UNION ALL
    SELECT role FROM engine_aborts WHERE source = $source
)
