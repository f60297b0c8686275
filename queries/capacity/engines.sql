-- The engine whose log gave each node's capacity spans (`inputs.format`: sglang, vllm,
-- trtllm), for the pre-flight note's wording.
SELECT DISTINCT c.node, i.format AS engine
FROM engine_capacity AS c
JOIN inputs AS i ON i.path = c.source
ORDER BY c.node, engine
