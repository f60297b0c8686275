-- Exposed requests: all, without a decode node, without decode capacity in force.
SELECT
    count(*) AS exposed,
    count(*) FILTER (WHERE decode_node IS NULL) AS no_decode_node,
    count(*) FILTER (WHERE decode_node IS NOT NULL AND decode_capacity IS NULL)
        AS no_decode_capacity
FROM attribution_targets
