-- The quarantine table by reason: per input (its path) and reason, the records quarantined,
-- most first.
SELECT source, reason, count(*) AS records
FROM quarantine
GROUP BY source, reason
ORDER BY source, records DESC, reason
