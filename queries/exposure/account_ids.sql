-- Every account id of the requests (to find the near spellings of an exclusion id that
-- names no account).
SELECT DISTINCT account_id FROM requests WHERE account_id IS NOT NULL ORDER BY account_id
