-- The case's requests in scope (bands) per model: which of the case's models has none?
SELECT model, count(*) AS requests FROM bands GROUP BY model ORDER BY model
