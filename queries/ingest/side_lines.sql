-- The lines a rewritten input replaced (ingest._normalize): physical line, reason, length.
SELECT *
FROM read_csv(
    $path,
    columns = {'line': 'BIGINT', 'reason': 'VARCHAR', 'bytes': 'BIGINT'},
    header = true,
    auto_detect = false,
    quote = '',
    escape = ''
)
