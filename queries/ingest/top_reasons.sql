-- The three most frequent quarantine reasons of one input's records (`_ing_out`), with their
-- counts: what ingest prints for each input, and names when an input loads no record.
SELECT coalesce(reason, 'conflicting duplicate') AS reason, count(*) AS records
FROM _ing_out
WHERE outcome IN ('quarantine', 'conflict', 'unicode')
GROUP BY 1
ORDER BY records DESC, reason
LIMIT 3
