-- notify/excluded.csv: every excluded account with its reason, whether its [[exclude]] entry
-- has it notified, and its requests in band `excluded` (0 when none, or when the analysis
-- ran without exclusions).
SELECT
    x.account_id,
    x.reason,
    x.notified,
    count(b.request_id) AS requests
FROM notify_exclusions AS x
LEFT JOIN bands AS b ON b.account_id = x.account_id AND b.band = 'excluded'
GROUP BY x.account_id, x.reason, x.notified
ORDER BY x.account_id
