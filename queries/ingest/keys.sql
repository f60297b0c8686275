-- The id hashes of one input (`_ing_ids`) that need a content comparison (ingest_classify):
-- an id on more than one of its records (valid or not), or already in `requests`. Every
-- other record is the only one of its id: the direct load takes it as it is (ids compared in
-- Unicode normal form C, as ingest_ids hashes them). A hash
-- collision only adds a candidate. Repeats are found by grouping the hashes; the caller runs
-- this on three threads or more (`load.aggregate_threads`).
SELECT h
FROM _ing_ids
WHERE h IS NOT NULL
GROUP BY h
HAVING count(*) > 1
UNION
SELECT hash(nfc_normalize(r.request_id))
FROM requests AS r
WHERE EXISTS (  -- a semi join: spills
    SELECT 1 FROM _ing_ids AS i WHERE i.h = hash(nfc_normalize(r.request_id))
)
