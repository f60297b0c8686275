INSERT INTO case_capacity VALUES ($ordinal, $role, $nodes, $tokens, $start_ts, $end_ts)
