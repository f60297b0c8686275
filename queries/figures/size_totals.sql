-- Requests per band that the prompt-size chart could show (fits only from $min_prompt).
SELECT band, count(*) AS requests
FROM bands
WHERE band <> 'fits' OR prompt_tokens >= $min_prompt
GROUP BY band
ORDER BY band
