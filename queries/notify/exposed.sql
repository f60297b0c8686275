-- The exposed responses of every affected account, for the notices, with the page of
-- notices their account is on (`notify_pages`): the rows of `bands` recipients.csv counts.
SELECT
    b.account_id,
    p.page,
    b.request_id,
    b.ts,
    b.prompt_tokens,
    b.capacity,
    b.completion_tokens
FROM bands AS b
JOIN notify_pages AS p ON p.account_id = b.account_id
WHERE b.band = 'exposed'
-- stored in page order: a page's rows are then a few blocks (`page_exposed`, which words
-- the times, a page at a time)
ORDER BY p.page
