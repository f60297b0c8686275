-- Excluded accounts and their reason (empty when the analysis runs with exclusions off).
CREATE OR REPLACE TABLE case_exclusions (account_id VARCHAR, reason VARCHAR)
