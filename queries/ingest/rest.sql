-- The row numbers of one input the direct load did not take and that are no duplicate or
-- conflict: each has a reason, found by typing them again. The direct load's rows are this
-- path's rows of `requests` not in `_ing_prior`. Integers only: no source value is read.
SELECT __row
FROM _ing_src
WHERE __row NOT IN (
    SELECT source_row
    FROM requests
    WHERE source = $source AND rowid NOT IN (SELECT rid FROM _ing_prior)
)
    AND __row NOT IN (SELECT source_row FROM _ing_special WHERE outcome <> 'load')
