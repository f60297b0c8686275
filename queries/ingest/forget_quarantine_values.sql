-- Delete the quarantined records' values of an input (re-ingest with --force).
DELETE FROM quarantine_values WHERE source = $path
