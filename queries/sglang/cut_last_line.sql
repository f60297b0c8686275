-- The last line of a log that no newline ends, when its last figure ends the line: that
-- figure may be cut (a file that ends mid-number), so the line is quarantined. Params: $row.
UPDATE _sglang_parsed
SET reason = 'line cut at the end of the file (no newline after it): its last figure may be incomplete'
WHERE source_row = $row AND reason IS NULL AND open_end
