-- Every ingested input (with, where recorded, the canonical fields its mapping provides).
SELECT * FROM inputs ORDER BY path, sha256
