-- blast_radius.csv: one row per model and prefill node (an empty node: requests that name
-- none), sorted by model then node (no node first), times as ISO 8601 UTC with Z.
SELECT
    model,
    prefill_node,
    requests,
    over_capacity,
    excluded,
    unknown_capacity,
    regexp_replace(strftime(timezone('UTC', first_over), '%Y-%m-%dT%H:%M:%S.%f'), '\.000000$', '')
        || 'Z' AS first_over,
    regexp_replace(strftime(timezone('UTC', last_over), '%Y-%m-%dT%H:%M:%S.%f'), '\.000000$', '')
        || 'Z' AS last_over,
    in_window,
    outside_window
FROM blast_radius
ORDER BY model, prefill_node NULLS FIRST
