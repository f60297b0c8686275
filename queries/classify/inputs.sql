-- Every ingested input (with, where recorded, the digest of the mapping it was loaded with):
-- whether the case's request logs may keep a probing field in `extra` at all.
SELECT * FROM inputs ORDER BY path, sha256
