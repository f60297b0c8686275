-- How many exposed responses the timeline has to draw, from how many accounts, and their
-- prompt sizes (the range the binned chart splits into prompt-size bands).
SELECT count(*) AS responses,
       count(DISTINCT account_id) AS accounts,
       min(prompt_tokens) AS smallest,
       max(prompt_tokens) AS largest
FROM bands
WHERE band = 'exposed'
