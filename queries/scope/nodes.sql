-- The nodes of one role in the case's scope (bands), busiest first: what a [[capacity]]
-- glob that matches none could have meant.
SELECT node, count(*) AS requests
FROM (
    SELECT CASE WHEN $role = 'prefill' THEN prefill_node ELSE decode_node END AS node
    FROM bands
)
WHERE node IS NOT NULL
GROUP BY node
ORDER BY requests DESC, node
LIMIT 5
