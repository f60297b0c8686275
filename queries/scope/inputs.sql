-- The inputs the case store holds: path and sha256 (is each case [[source]] among them?).
SELECT path, sha256 FROM inputs ORDER BY path, sha256
