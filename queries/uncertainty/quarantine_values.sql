-- The quarantine rows of request logs (engine-log rows are evidence lines, not responses)
-- with the values of each record that could be read as mapped (`quarantine_values`, written
-- by ingest; NULL where a value is missing, unmapped or failed its own check).
SELECT
    q.source, q.row, q.reason, v.request_id, v.ts, v.account_id, v.model, v.prompt_tokens,
    v.status, v.prefill_node
FROM quarantine AS q
LEFT JOIN quarantine_values AS v ON v.source = q.source AND v.row = q.row
WHERE q.source NOT IN (SELECT path FROM case_unnamed_inputs)
  AND NOT EXISTS (
    SELECT 1 FROM inputs AS i WHERE i.path = q.source AND i.format = 'sglang'
)
