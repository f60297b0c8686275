-- How many lines an engine log holds (blank lines included). Params: $path, $delim.
SELECT count(*) AS lines
FROM read_csv(
    $path, columns = {'line': 'VARCHAR'}, delim = $delim, quote = '', escape = '',
    header = false, auto_detect = false, strict_mode = false, new_line = '\r\n',
        max_line_size = 268435456,
    buffer_size = 268435456
)
