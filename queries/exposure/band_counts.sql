-- Requests per band (bands absent from the data are filled with 0 by the caller).
SELECT band, count(*) AS requests FROM bands GROUP BY band ORDER BY band
