-- One account's usage-classification evidence (its row of classification_accounts, if any).
SELECT *
FROM classification_accounts
WHERE account_id = $account_id
