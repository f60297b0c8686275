-- The row numbers of one input the direct load did not take and that are no duplicate or
-- conflict: each has a reason, found by typing them again. The direct load's rows are this
-- path's rows of `requests` not in `_ing_prior`. Integers only: no source value is read.
-- NOT EXISTS (an anti join, which spills) rather than NOT IN (a mark join held in memory:
-- 2.1 GB of RSS at 20M records).
WITH loaded AS (
    SELECT r.source_row
    FROM requests AS r
    WHERE r.source = $source
        AND NOT EXISTS (SELECT 1 FROM _ing_prior AS p WHERE p.rid = r.rowid)
)
SELECT s.__row
FROM _ing_src AS s
WHERE NOT EXISTS (SELECT 1 FROM loaded AS l WHERE l.source_row = s.__row)
    AND NOT EXISTS (
        SELECT 1 FROM _ing_special AS c WHERE c.source_row = s.__row AND c.outcome <> 'load'
    )
