-- Data owners of one account's exposed responses: whose data those responses may have read.
SELECT *
FROM data_owners
WHERE exposed_account_id = $account_id
ORDER BY exposed_ts, exposed_request_id, owner_request_id
