-- The statuses that delivered a response (success_status).
CREATE OR REPLACE TABLE case_success_status (status INTEGER)
