-- notify/recipients.csv: one row per account that received an exposed response (band
-- exposed), or whose requests the exposure range's maximum adds with a readable account
-- (`notify_range`, direction max), then its contact columns.
-- tier: `proven` when at least one of its exposed responses is in the range's minimum (no
-- min-side category holds it), `likely` when it has exposed responses but every one is on
-- the min side, `possible` when it has none but a max-side request.
-- completion_tokens sums what its exposed responses generated, and is NULL when the log gives
-- no count for one of them (a partial sum would understate what reached the client) or it
-- has none; empty_responses generated nothing (0), unknown_responses have no count (NULL);
-- uncertain_responses are on the range's min side, possible_requests on its max side.
WITH min_side AS (
    SELECT DISTINCT request_id
    FROM notify_range
    WHERE direction = 'min' AND request_id IS NOT NULL
),
exposed AS (
    SELECT b.account_id, b.request_id, b.ts, b.completion_tokens,
           m.request_id IS NOT NULL AS uncertain
    FROM bands AS b
    LEFT JOIN min_side AS m ON m.request_id = b.request_id
    WHERE b.band = 'exposed'
),
per_account AS (
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
        count(*) - count(completion_tokens) AS unknown_responses,
        count(CASE WHEN uncertain THEN 1 END) AS uncertain_responses,
        count(CASE WHEN NOT uncertain THEN 1 END) AS proven_responses
    FROM exposed
    GROUP BY account_id
),
possible AS (
    SELECT account_id, count(DISTINCT range_key) AS possible_requests
    FROM notify_range
    WHERE direction = 'max' AND account_id IS NOT NULL
    GROUP BY account_id
),
listed AS (
    SELECT account_id FROM per_account
    UNION
    SELECT account_id FROM possible
),
rows AS (
    SELECT
        l.account_id,
        CASE WHEN p.proven_responses > 0 THEN 'proven'
             WHEN p.responses > 0 THEN 'likely'
             ELSE 'possible' END AS tier,
        coalesce(p.responses, 0) AS responses,
        p.first_exposed_at,
        p.last_exposed_at,
        p.request_ids,
        p.completion_tokens,
        coalesce(p.empty_responses, 0) AS empty_responses,
        coalesce(p.unknown_responses, 0) AS unknown_responses,
        coalesce(p.uncertain_responses, 0) AS uncertain_responses,
        coalesce(x.possible_requests, 0) AS possible_requests
    FROM listed AS l
    LEFT JOIN per_account AS p ON p.account_id = l.account_id
    LEFT JOIN possible AS x ON x.account_id = l.account_id
)
SELECT *
FROM rows
LEFT JOIN case_accounts USING (account_id)
ORDER BY account_id
