-- account_ids that appear more than once in the accounts file.
SELECT account_id FROM case_accounts GROUP BY account_id HAVING count(*) > 1 ORDER BY account_id
