-- Data-owner figures: (exposed, owner) pairs, distinct owner requests, owner accounts; then
-- the same for the rows whose exposed response is band exposed, and band excluded (an owner
-- request read by both kinds counts in both).
SELECT
    count(*) AS pairs,
    count(DISTINCT owner_request_id) AS requests,
    count(DISTINCT owner_account_id) AS accounts,
    count(CASE WHEN exposed_band = 'exposed' THEN 1 END) AS exposed_pairs,
    count(DISTINCT CASE WHEN exposed_band = 'exposed' THEN owner_request_id END)
        AS exposed_requests,
    count(DISTINCT CASE WHEN exposed_band = 'exposed' THEN owner_account_id END)
        AS exposed_accounts,
    count(CASE WHEN exposed_band = 'excluded' THEN 1 END) AS excluded_pairs,
    count(DISTINCT CASE WHEN exposed_band = 'excluded' THEN owner_request_id END)
        AS excluded_requests,
    count(DISTINCT CASE WHEN exposed_band = 'excluded' THEN owner_account_id END)
        AS excluded_accounts
FROM data_owners
