-- The prefill capacity in force ([[capacity]], docs/decisions.md "Bands"), the one definition
-- the bands and the blast radius read (through requests_in_force.sql): for each prefill
-- node and model of the case's requests (`case_requests`: every model and time, the
-- inputs the case does not name left out), the timeline of the entries that hold for it cut
-- at every start and end of those entries, and in each segment [seg_start, seg_end) (seg_end
-- NULL: open) the first entry in file order with role prefill whose `nodes` glob matches
-- the node (a NULL node matching only "*"), whose `models` glob, if any, matches the model
-- and whose [start, end) holds the segment. Inside one segment the same entries are in
-- force, so a request joins the one segment of its node and model holding its ts; a request
-- in no segment has no capacity in force. `capacity` is the entry's tokens, `over_from` the
-- smallest prompt over it: its reject_from (the engine's admission limit), else tokens + 1.
WITH node_entries AS (
    SELECT n.prefill_node, n.model, c.ordinal, c.start_ts, c.end_ts
    FROM (SELECT DISTINCT prefill_node, model FROM case_requests) AS n
    JOIN case_capacity AS c
      ON c.role = 'prefill'
     AND (c.nodes = '*' OR n.prefill_node GLOB c.nodes_glob)
     AND (c.models_glob IS NULL OR n.model GLOB c.models_glob)
),
edges AS (
    SELECT prefill_node, model, start_ts AS edge FROM node_entries WHERE start_ts IS NOT NULL
    UNION
    SELECT prefill_node, model, end_ts AS edge FROM node_entries WHERE end_ts IS NOT NULL
),
segments AS (
    SELECT
        prefill_node,
        model,
        edge AS seg_start,
        lead(edge) OVER (PARTITION BY prefill_node, model ORDER BY edge) AS seg_end
    FROM edges
),
first_match AS (
    SELECT g.prefill_node, g.model, g.seg_start, g.seg_end, min(e.ordinal) AS ordinal
    FROM segments AS g
    JOIN node_entries AS e
      ON e.prefill_node IS NOT DISTINCT FROM g.prefill_node
     AND e.model = g.model
     AND e.start_ts <= g.seg_start
     AND (e.end_ts IS NULL OR (g.seg_end IS NOT NULL AND g.seg_end <= e.end_ts))
    GROUP BY g.prefill_node, g.model, g.seg_start, g.seg_end
)
SELECT
    f.prefill_node,
    f.model,
    f.seg_start,
    f.seg_end,
    f.ordinal,
    CAST(c.tokens AS BIGINT) AS capacity,
    CAST(coalesce(c.reject_from, c.tokens + 1) AS BIGINT) AS over_from
FROM first_match AS f
JOIN case_capacity AS c ON c.ordinal = f.ordinal
ORDER BY f.prefill_node NULLS FIRST, f.model, f.seg_start
