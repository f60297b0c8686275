-- How many of the case's requests (any model, any time) name a decode node.
SELECT count(*) AS n FROM case_requests WHERE decode_node IS NOT NULL
