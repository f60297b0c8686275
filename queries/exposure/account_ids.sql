-- Every account id of the case's requests (to find the near spellings of an exclusion id that
-- names no account).
SELECT DISTINCT account_id FROM case_requests WHERE account_id IS NOT NULL ORDER BY account_id
