-- One account's requests whose data other accounts' exposed responses may have read.
SELECT *
FROM data_owners
WHERE owner_account_id = $account_id
ORDER BY owner_end_ts, owner_request_id, exposed_request_id
