-- notify/recipients.csv: one row per affected account (band exposed), then its contact columns.
-- completion_tokens sums what its exposed responses generated, and is NULL when the log gives
-- no count for one of them (a partial sum would understate what reached the client);
-- empty_responses generated nothing (0), unknown_responses have no count (NULL).
WITH per_account AS (
    SELECT
        account_id,
        count(*) AS responses,
        regexp_replace(strftime(timezone('UTC', min(ts)), '%Y-%m-%dT%H:%M:%S.%f'),
                       '\.000000$', '') || 'Z' AS first_exposed_at,
        regexp_replace(strftime(timezone('UTC', max(ts)), '%Y-%m-%dT%H:%M:%S.%f'),
                       '\.000000$', '') || 'Z' AS last_exposed_at,
        -- `;`-separated; inside an id `\` is written `\\` and `;` is written `\;` (docs/outputs.md)
        string_agg(replace(replace(request_id, '\', '\\'), ';', '\;'), ';' ORDER BY request_id)
            AS request_ids,
        CASE WHEN count(completion_tokens) = count(*)
             THEN CAST(sum(completion_tokens) AS BIGINT) END AS completion_tokens,
        count(CASE WHEN completion_tokens = 0 THEN 1 END) AS empty_responses,
        count(*) - count(completion_tokens) AS unknown_responses
    FROM bands
    WHERE band = 'exposed'
    GROUP BY account_id
)
SELECT *
FROM per_account
LEFT JOIN case_accounts USING (account_id)
ORDER BY account_id
