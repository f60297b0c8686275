-- How many requests in the case database name a decode node.
SELECT count(*) AS n FROM requests WHERE decode_node IS NOT NULL
