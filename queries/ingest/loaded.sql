-- The rows the direct load added, as input index * $stride + row (source_row): the run's
-- paths' rows of `requests` not in `_ing_prior`. NOT EXISTS (an anti join, which spills)
-- rather than NOT IN (a mark join held in memory: 2.1 GB of RSS at 20M records).
SELECT u.inp * $stride + r.source_row AS __row
FROM requests AS r
JOIN _ing_run AS u ON u.source = r.source
WHERE NOT EXISTS (SELECT 1 FROM _ing_prior AS p WHERE p.rid = r.rowid)
