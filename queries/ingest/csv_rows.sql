-- The rows of a CSV input as text, read in the mapping's dialect ([csv]; RFC 4180 unless
-- declared): delimiter, quote, escape, header and preamble lines are given, never sniffed from
-- the data, and there are no comment lines. strict_mode: a row with more or fewer fields than
-- the header is a reject (quarantined at its line), never padded or re-split.
SELECT *
FROM read_csv(
    $path,
    header = $header,
    skip = $skip,
    delim = $delim,
    quote = $quote,
    escape = $escape,
    comment = '',
    strict_mode = true,
    all_varchar = true,
    ignore_errors = true,
    store_rejects = true,
    rejects_table = '_ing_rejects',
    rejects_scan = '_ing_rejects_scan',
    max_line_size = $max_line_size,
    buffer_size = $buffer_size
)
