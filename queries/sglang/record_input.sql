-- One row of `inputs` for an ingested SGLang log.
INSERT INTO inputs (path, sha256, bytes, rows_read, rows_loaded, duplicates, quarantined, format, note)
VALUES ($path, $sha256, $bytes, $rows_read, $rows_loaded, $duplicates, $quarantined, 'sglang', $note)
