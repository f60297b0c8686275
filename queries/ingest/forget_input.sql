-- Delete the `inputs` rows of a path (re-ingest with --force: whatever content it held).
DELETE FROM inputs WHERE path = $path
