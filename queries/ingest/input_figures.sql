-- The figures of the input with this sha256 (loaded earlier in this call).
SELECT rows_read, rows_loaded, duplicates, quarantined FROM inputs WHERE sha256 = $sha256
