-- How many other inputs (another sha256) were loaded under this path.
SELECT count(*) FROM inputs WHERE path = $path AND sha256 <> $sha256
