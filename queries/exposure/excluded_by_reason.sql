-- Requests in band `excluded`, per exclusion reason.
SELECT exclusion_reason AS reason, count(*) AS requests
FROM bands
WHERE band = 'excluded'
GROUP BY exclusion_reason
ORDER BY exclusion_reason
