-- Requests per band that the prompt-size chart shows (fits only from $min_prompt), with the
-- smallest and largest prompt of each.
SELECT band,
       count(*) AS requests,
       min(prompt_tokens) AS smallest,
       max(prompt_tokens) AS largest
FROM bands
WHERE band <> 'fits' OR prompt_tokens >= $min_prompt
GROUP BY band
ORDER BY band
