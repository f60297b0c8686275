-- Delete the `input_duplicates` rows of a path (re-ingest with --force).
DELETE FROM input_duplicates WHERE path = $path
