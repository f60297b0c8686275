-- notify/recipients.csv: one row per affected account (band exposed), then its contact columns.
WITH per_account AS (
    SELECT
        account_id,
        count(*) AS responses,
        regexp_replace(strftime(timezone('UTC', min(ts)), '%Y-%m-%dT%H:%M:%S.%f'),
                       '\.000000$', '') || 'Z' AS first_exposed_at,
        regexp_replace(strftime(timezone('UTC', max(ts)), '%Y-%m-%dT%H:%M:%S.%f'),
                       '\.000000$', '') || 'Z' AS last_exposed_at,
        string_agg(request_id, ';' ORDER BY request_id) AS request_ids
    FROM bands
    WHERE band = 'exposed'
    GROUP BY account_id
)
SELECT *
FROM per_account
LEFT JOIN case_accounts USING (account_id)
ORDER BY account_id
