-- Affected accounts (band exposed) and data-owner accounts absent from the accounts file.
SELECT DISTINCT 'recipients' AS list, b.account_id
FROM bands AS b
WHERE b.band = 'exposed'
  AND NOT EXISTS (SELECT 1 FROM case_accounts AS a WHERE a.account_id = b.account_id)
UNION ALL
SELECT DISTINCT 'data_owners' AS list, d.owner_account_id AS account_id
FROM data_owners AS d
WHERE NOT EXISTS (SELECT 1 FROM case_accounts AS a WHERE a.account_id = d.owner_account_id)
ORDER BY list, account_id
