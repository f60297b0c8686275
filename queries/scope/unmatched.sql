-- Case-file ids that match nothing in the case's scope (bands: the requests of the case's
-- models in the window): [[capacity]] entries whose `nodes` glob (other than "*") matches no
-- node of their role there (of the models their `models` glob matches; an entry for no model
-- of the case describes another model's pool, which the blast radius reads), and exclusion
-- accounts with no request there.
-- kind, id (entry number, 1-based, or the account), role (of an entry), detail (the glob,
-- or the exclusion reason).
WITH nodes AS (
    SELECT DISTINCT 'prefill' AS role, prefill_node AS node, model
    FROM bands WHERE prefill_node IS NOT NULL
    UNION ALL
    SELECT DISTINCT 'decode' AS role, decode_node AS node, model
    FROM bands WHERE decode_node IS NOT NULL
)
SELECT 'capacity' AS kind, CAST(c.ordinal + 1 AS VARCHAR) AS id, c.role, c.nodes AS detail
FROM case_capacity AS c
LEFT JOIN nodes AS n
  ON n.role = c.role
 AND n.node GLOB c.nodes_glob
 AND (c.models_glob IS NULL OR n.model GLOB c.models_glob)
WHERE c.nodes <> '*' AND c.for_case
GROUP BY c.ordinal, c.role, c.nodes
HAVING count(n.node) = 0
UNION ALL
SELECT 'exclusion' AS kind, x.account_id AS id, CAST(NULL AS VARCHAR) AS role,
    x.reason AS detail
FROM case_exclusions AS x
WHERE NOT EXISTS (SELECT 1 FROM bands AS b WHERE b.account_id = x.account_id)
