-- The id hashes of one input (`_ing_ids`) that need a content comparison (ingest_classify):
-- an id on more than one of its records (valid or not), or already in `requests`. Every
-- other record is the only one of its id: the direct load takes it as it is (ids compared in
-- Unicode normal form C, as ingest_ids hashes them). A hash
-- collision only adds a candidate. Repeats are found as hashes equal to their predecessor in
-- sorted order (a sort of integers: cheaper than grouping millions of distinct keys).
SELECT h
FROM (SELECT h, lag(h) OVER (ORDER BY h) AS before FROM _ing_ids WHERE h IS NOT NULL)
WHERE h = before
UNION
SELECT hash(nfc_normalize(r.request_id))
FROM requests AS r
WHERE EXISTS (  -- a semi join: spills
    SELECT 1 FROM _ing_ids AS i WHERE i.h = hash(nfc_normalize(r.request_id))
)
