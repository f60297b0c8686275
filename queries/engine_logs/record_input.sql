-- One row of `inputs` for an ingested engine log ($format: the engine, e.g. sglang).
INSERT INTO inputs (path, sha256, bytes, rows_read, rows_loaded, duplicates, quarantined, format, note)
VALUES ($path, $sha256, $bytes, $rows_read, $rows_loaded, $duplicates, $quarantined, $format, $note)
