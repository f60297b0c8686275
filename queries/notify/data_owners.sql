-- notify/data_owners.csv: one row per data-owner account: its requests at risk, the exposed
-- (or excluded) responses that could have read them, the first and last end time of those
-- requests, the reason the case file excludes the account (empty when it does not), whose
-- responses could have read them (`read_by`: exposed, excluded or both), then its contact
-- columns.
WITH per_account AS (
    SELECT
        owner_account_id AS account_id,
        count(DISTINCT owner_request_id) AS requests_at_risk,
        count(DISTINCT exposed_request_id) AS exposures,
        regexp_replace(strftime(timezone('UTC', min(owner_end_ts)), '%Y-%m-%dT%H:%M:%S.%f'),
                       '\.000000$', '') || 'Z' AS first_at,
        regexp_replace(strftime(timezone('UTC', max(owner_end_ts)), '%Y-%m-%dT%H:%M:%S.%f'),
                       '\.000000$', '') || 'Z' AS last_at,
        CASE
            WHEN min(exposed_band) = max(exposed_band) THEN min(exposed_band)
            ELSE 'both'
        END AS read_by
    FROM data_owners
    GROUP BY owner_account_id
),
flagged AS (
    SELECT
        p.account_id, p.requests_at_risk, p.exposures, p.first_at, p.last_at,
        x.reason AS excluded_reason, p.read_by
    FROM per_account AS p
    LEFT JOIN notify_exclusions AS x ON x.account_id = p.account_id
)
SELECT *
FROM flagged
LEFT JOIN case_accounts USING (account_id)
ORDER BY account_id
