-- Delete the quarantine rows of an input (re-ingest with --force); they carry its path.
DELETE FROM quarantine WHERE source = $path
