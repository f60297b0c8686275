-- Record one ingested input.
INSERT INTO inputs VALUES (
    $path, $sha256, $bytes, $rows_read, $rows_loaded, $duplicates, $quarantined, $format, $note
)
