-- An abort line names only the rid; take its bootstrap_room from the same node's request lines.
UPDATE engine_aborts AS a
SET bootstrap_room = r.bootstrap_room
FROM (
    SELECT node, rid, min(bootstrap_room) AS bootstrap_room
    FROM engine_requests
    WHERE bootstrap_room IS NOT NULL
    GROUP BY node, rid
) AS r
WHERE a.bootstrap_room IS NULL AND a.rid IS NOT NULL AND a.node = r.node AND a.rid = r.rid
