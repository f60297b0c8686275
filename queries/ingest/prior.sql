-- The rows already in `requests` under this input's path (an earlier input at the same path:
-- a file that changed), by rowid, taken before the direct load: the rows that load adds are
-- the path's rows not listed here (ingest_rest). Rowids are stable within the transaction.
SELECT rowid AS rid FROM requests WHERE source = $source
