-- The roles the args dumps of one vLLM log give: kv_producer = prefill, kv_consumer =
-- decode, kv_both or no kv_transfer_config = both.
SELECT DISTINCT coalesce(leg, 'both') AS role
FROM _engine_parsed
WHERE reason IS NULL AND kind = 'args'
