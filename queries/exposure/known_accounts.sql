-- Which of the ids in `case_id_candidates` (exclusion ids matching no request in scope,
-- comment lines of exclusion files that read like an id) are account ids of any request of
-- the case's inputs.
SELECT c.account_id
FROM case_id_candidates AS c
WHERE EXISTS (SELECT 1 FROM case_requests AS r WHERE r.account_id = c.account_id)
ORDER BY c.account_id
