-- The rows of one input whose id hash is in `_ing_keys`: typed (these only) and compared by
-- content before the direct load.
SELECT __row FROM _ing_ids WHERE h IN (SELECT h FROM _ing_keys)
