-- The three most frequent quarantine reasons of one input (its path bound as source), with
-- their counts (engine logs: their quarantine rows are written by forensics.ingest.sglang).
SELECT reason, count(*) AS records
FROM quarantine
WHERE source = $source
GROUP BY reason
ORDER BY records DESC, reason
LIMIT 3
