INSERT INTO case_exclusions VALUES ($account_id, $reason)
