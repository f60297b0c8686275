-- Data-owner figures: (exposed, owner) pairs, distinct owner requests, owner accounts.
SELECT
    count(*) AS pairs,
    count(DISTINCT owner_request_id) AS requests,
    count(DISTINCT owner_account_id) AS accounts
FROM data_owners
