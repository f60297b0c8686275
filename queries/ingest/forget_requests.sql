-- Delete the requests an input loaded (re-ingest with --force); they carry its path.
DELETE FROM requests WHERE source = $path
