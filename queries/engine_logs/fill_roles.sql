-- Lines of an input whose role was not known (a metrics export names no role, a log may
-- hold no line that gives one) take the role of their node when the node's other inputs
-- name exactly one.
CREATE OR REPLACE TEMP TABLE _known_roles AS
SELECT node, min(role) AS role
FROM (
    SELECT node, role FROM engine_startup WHERE role IS NOT NULL
    UNION ALL
    SELECT node, role FROM engine_requests WHERE role IS NOT NULL
    UNION ALL
    SELECT node, role FROM engine_aborts WHERE role IS NOT NULL
)
GROUP BY node
HAVING count(DISTINCT role) = 1;
UPDATE engine_startup AS t SET role = k.role FROM _known_roles AS k
WHERE t.role IS NULL AND t.node = k.node;
UPDATE engine_requests AS t SET role = k.role FROM _known_roles AS k
WHERE t.role IS NULL AND t.node = k.node;
UPDATE engine_aborts AS t SET role = k.role FROM _known_roles AS k
WHERE t.role IS NULL AND t.node = k.node;
DROP TABLE _known_roles
