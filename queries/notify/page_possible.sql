-- One page of notices' possibly exposed requests: the exposure range's max-side requests
-- (`notify_range`) with a readable account on the page, one row per request and category, by
-- account, arrival time (unknown last), key and category.
SELECT r.account_id, r.range_key, r.request_id, r.source, r.row, r."at", r.prompt_tokens,
       r.category
FROM notify_range AS r
JOIN notify_pages AS p ON p.account_id = r.account_id
WHERE p.page = $page AND r.direction = 'max'
ORDER BY r.account_id, r."at" NULLS LAST, r.range_key, r.category
