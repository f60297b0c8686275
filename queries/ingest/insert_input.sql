-- Record one ingested input.
INSERT INTO inputs (
    path, sha256, bytes, rows_read, rows_loaded, duplicates, quarantined, format, note,
    mapping_sha256, fields
) VALUES (
    $path, $sha256, $bytes, $rows_read, $rows_loaded, $duplicates, $quarantined, $format, $note,
    $mapping_sha256, $fields
)
