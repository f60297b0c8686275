-- The inputs of one load run: index (in the ingest call) and path recorded as source.
SELECT unnest($inps) AS inp, unnest($sources) AS source
