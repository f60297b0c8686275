-- The accounts file's columns (no rows).
SELECT * FROM case_accounts LIMIT 0
