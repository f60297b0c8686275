-- The excluded account ids that name at least one request in scope (band rows carry the
-- exclusion reason whatever their band).
SELECT DISTINCT account_id FROM bands WHERE exclusion_reason IS NOT NULL
