-- The blast radius per model (summary.json `blast_radius`): the sums of its prefill nodes'
-- rows in `blast_radius`, its first and last over-capacity request, by model.
SELECT
    model,
    CAST(sum(requests) AS BIGINT) AS requests,
    CAST(sum(over_capacity) AS BIGINT) AS over_capacity,
    CAST(sum(excluded) AS BIGINT) AS excluded,
    CAST(sum(unknown_capacity) AS BIGINT) AS unknown_capacity,
    min(first_over) AS first_over,
    max(last_over) AS last_over,
    CAST(sum(in_window) AS BIGINT) AS in_window,
    CAST(sum(outside_window) AS BIGINT) AS outside_window
FROM blast_radius
GROUP BY model
ORDER BY model
