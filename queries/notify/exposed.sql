-- The exposed responses of every affected account, for the notices, with the page of
-- notices their account is on (`notify_pages`): the rows of `bands` recipients.csv counts.
SELECT
    b.account_id,
    p.page,
    b.request_id,
    b.ts,
    regexp_replace(strftime(timezone('UTC', b.ts), '%Y-%m-%dT%H:%M:%S.%f'), '\.000000$', '')
        || 'Z' AS at,
    b.prompt_tokens,
    b.capacity,
    b.completion_tokens
FROM bands AS b
JOIN notify_pages AS p ON p.account_id = b.account_id
WHERE b.band = 'exposed'
-- stored in page order: a page's rows are then a few blocks (`page_exposed`)
ORDER BY p.page, b.account_id, b.ts, b.request_id
