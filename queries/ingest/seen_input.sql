-- Whether an input with this sha256 was already ingested.
SELECT count(*) FROM inputs WHERE sha256 = $sha256
