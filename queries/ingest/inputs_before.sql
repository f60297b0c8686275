-- The inputs already ingested when a load begins: sha256, their figures then, and whether
-- their mapping was not recorded (loaded before it was).
SELECT sha256, rows_read, rows_loaded, duplicates, quarantined, mapping_sha256 IS NULL
FROM inputs
