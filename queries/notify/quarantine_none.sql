-- No readable values of quarantined records (a case store that keeps none): a quarantined
-- record of the exposure range then has no readable account.
SELECT
    CAST(NULL AS VARCHAR) AS source,
    CAST(NULL AS BIGINT) AS row,
    CAST(NULL AS VARCHAR) AS account_id,
    CAST(NULL AS TIMESTAMPTZ) AS ts,
    CAST(NULL AS BIGINT) AS prompt_tokens
WHERE false
