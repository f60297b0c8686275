-- Totals of the data-owner attribution: accounts, requests at risk, exposures with owners.
SELECT count(DISTINCT owner_account_id) AS accounts,
       count(DISTINCT owner_request_id) AS requests,
       count(DISTINCT exposed_request_id) AS exposures
FROM data_owners
