-- Record the ingested inputs of one load run (one list element each).
INSERT INTO inputs (
    path, sha256, bytes, rows_read, rows_loaded, duplicates, quarantined, format, note,
    mapping_sha256, fields
)
SELECT
    unnest($paths),
    unnest($sha256s),
    unnest($bytes),
    unnest($rows_read),
    unnest($rows_loaded),
    unnest($duplicates),
    unnest($quarantined),
    unnest($formats),
    unnest($notes),
    $mapping_sha256,
    $fields
