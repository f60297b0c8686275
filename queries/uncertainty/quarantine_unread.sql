-- The quarantine rows of request logs, for a case database written before ingest kept the
-- readable values of quarantined records (no `quarantine_values`): every value unknown.
SELECT
    q.source, q.row, q.reason,
    CAST(NULL AS VARCHAR) AS request_id,
    CAST(NULL AS TIMESTAMPTZ) AS ts,
    CAST(NULL AS VARCHAR) AS account_id,
    CAST(NULL AS VARCHAR) AS model,
    CAST(NULL AS BIGINT) AS prompt_tokens,
    CAST(NULL AS INTEGER) AS status,
    CAST(NULL AS VARCHAR) AS prefill_node
FROM quarantine AS q
WHERE q.source NOT IN (SELECT path FROM case_unnamed_inputs)
  AND NOT EXISTS (
    SELECT 1 FROM inputs AS i WHERE i.path = q.source AND i.format = 'sglang'
)
