-- The responses to attribute, per band (exposed, then excluded): all, without a decode node,
-- without decode capacity in force.
SELECT
    count(*) FILTER (WHERE exposed_band = 'exposed') AS exposed,
    count(*) FILTER (WHERE exposed_band = 'exposed' AND decode_node IS NULL) AS no_decode_node,
    count(*) FILTER (
        WHERE exposed_band = 'exposed' AND decode_node IS NOT NULL AND decode_capacity IS NULL
    ) AS no_decode_capacity,
    count(*) FILTER (WHERE exposed_band = 'excluded') AS excluded,
    count(*) FILTER (WHERE exposed_band = 'excluded' AND decode_node IS NULL)
        AS excluded_no_decode_node,
    count(*) FILTER (
        WHERE exposed_band = 'excluded' AND decode_node IS NOT NULL AND decode_capacity IS NULL
    ) AS excluded_no_decode_capacity
FROM attribution_targets
