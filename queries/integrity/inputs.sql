-- Every ingested input (its sha256 and, where recorded, the digest of its mapping): what an
-- analysis read.
SELECT * FROM inputs
