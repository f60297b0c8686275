INSERT INTO notify_exclusions VALUES ($account_id, $reason)
