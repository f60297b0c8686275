-- The readable values of quarantined request-log records (`quarantine_values`), for the
-- accounts of the exposure range's quarantined records.
SELECT source, row, account_id, ts, prompt_tokens
FROM quarantine_values
