-- The capacity timeline (engine_capacity), prefill first, then by node and start.
SELECT
    node, role, tokens, reject_from, context_len, note, engine_warned, start_ts, end_ts, source,
    source_row
FROM engine_capacity
ORDER BY role IS NULL, role = 'decode', role, node, start_ts, source, source_row
