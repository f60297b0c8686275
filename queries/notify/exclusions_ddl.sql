-- Every configured exclusion (account, reason), for notify/excluded.csv.
CREATE OR REPLACE TABLE notify_exclusions (account_id VARCHAR, reason VARCHAR)
