-- Delete the `inputs` row of this content (re-ingest with --force), wherever it was loaded.
DELETE FROM inputs WHERE sha256 = $sha256
