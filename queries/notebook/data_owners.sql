-- Every (exposed request, data-owner request) pair of `data_owners`, in a stable order.
SELECT *
FROM data_owners
ORDER BY exposed_ts, exposed_request_id, owner_request_id
