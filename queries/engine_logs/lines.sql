-- How many lines an engine log holds (blank lines included). Params: $path.
SELECT count(*) AS lines FROM _engine_log_lines(CAST($path AS VARCHAR))
