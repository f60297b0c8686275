-- The rows of the run's inputs the direct load did not take (`_ing_loaded`) and that are no
-- duplicate or conflict: each has a reason, found by typing them again. Integers only: no
-- source value is read.
SELECT s.__row
FROM _ing_src AS s
WHERE NOT EXISTS (SELECT 1 FROM _ing_loaded AS l WHERE l.__row = s.__row)
    AND NOT EXISTS (
        SELECT 1 FROM _ing_special AS c WHERE c.source_row = s.__row AND c.outcome <> 'load'
    )
