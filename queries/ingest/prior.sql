-- The rows already in `requests` under the paths of the run's inputs (`_ing_run`; an earlier
-- input at the same path: a file that changed), by rowid, taken before the direct load: the
-- rows that load adds are the paths' rows not listed here (ingest_rest). Rowids are stable
-- within the transaction.
SELECT rowid AS rid FROM requests WHERE source IN (SELECT source FROM _ing_run)
