-- notify/jurisdictions.csv: the accounts of the lists per jurisdiction (the value of the
-- case's [notify] jurisdiction column of the accounts file, in `notify_jurisdiction`), counted
-- from the tables the lists count: recipients and their exposed responses from `bands`,
-- accounts of tier possible (no exposed response, a max-side request of the exposure range)
-- from `notify_range`, data owners and their requests at risk from `data_owners`, excluded
-- accounts from `notify_exclusions`. An account not in the accounts file, or with an empty value, is under
-- '(unknown)'. Every value the accounts file holds is listed, zeros included; '(unknown)'
-- only when an account falls under it. Each account is in one jurisdiction, so the columns
-- sum to the lists' totals.
WITH recipients AS (
    SELECT account_id, count(*) AS responses
    FROM bands
    WHERE band = 'exposed'
    GROUP BY account_id
),
possible AS (
    SELECT DISTINCT n.account_id
    FROM notify_range AS n
    WHERE n.direction = 'max' AND n.account_id IS NOT NULL
      AND n.account_id NOT IN (SELECT account_id FROM recipients)
),
owners AS (
    -- each owner request once (a GROUP BY: faster than count(DISTINCT ...) at scale)
    SELECT owner_account_id AS account_id, count(owner_request_id) AS requests
    FROM (SELECT DISTINCT owner_account_id, owner_request_id FROM data_owners) AS d
    GROUP BY owner_account_id
),
listed AS (
    SELECT account_id FROM recipients
    UNION
    SELECT account_id FROM possible
    UNION
    SELECT account_id FROM owners
    UNION
    SELECT account_id FROM notify_exclusions
),
placed AS (
    SELECT
        l.account_id,
        CASE WHEN j.jurisdiction IS NULL OR trim(j.jurisdiction) = '' THEN '(unknown)'
             ELSE j.jurisdiction END AS jurisdiction
    FROM listed AS l
    LEFT JOIN notify_jurisdiction AS j ON j.account_id = l.account_id
),
names AS (
    SELECT jurisdiction FROM placed
    UNION
    SELECT jurisdiction FROM notify_jurisdiction
    WHERE jurisdiction IS NOT NULL AND trim(jurisdiction) <> ''
)
SELECT
    n.jurisdiction,
    count(r.account_id) AS recipient_accounts,
    CAST(coalesce(sum(r.responses), 0) AS BIGINT) AS exposed_responses,
    count(q.account_id) AS possible_accounts,
    count(o.account_id) AS data_owner_accounts,
    CAST(coalesce(sum(o.requests), 0) AS BIGINT) AS requests_at_risk,
    count(x.account_id) AS excluded_accounts
FROM names AS n
LEFT JOIN placed AS p ON p.jurisdiction = n.jurisdiction
LEFT JOIN recipients AS r ON r.account_id = p.account_id
LEFT JOIN possible AS q ON q.account_id = p.account_id
LEFT JOIN owners AS o ON o.account_id = p.account_id
LEFT JOIN notify_exclusions AS x ON x.account_id = p.account_id
GROUP BY n.jurisdiction
ORDER BY n.jurisdiction = '(unknown)', n.jurisdiction
