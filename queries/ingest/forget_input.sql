-- Delete an input's row of `inputs` (re-ingest with --force).
DELETE FROM inputs WHERE sha256 = $sha256
