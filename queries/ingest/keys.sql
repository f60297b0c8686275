-- The id hashes of one input (`_ing_ids`) that need a content comparison (ingest_classify):
-- an id on more than one of its records (valid or not), or already in `requests`. Every
-- other record is the only one of its id: the direct load takes it as it is. A hash
-- collision only adds a candidate.
SELECT h FROM _ing_ids WHERE h IS NOT NULL GROUP BY h HAVING count(*) > 1
UNION
SELECT hash(request_id) FROM requests WHERE hash(request_id) IN (SELECT h FROM _ing_ids)
