-- How many of one input's records are conflicting duplicates of records loaded (`_ing_out`):
-- records that could be read as mapped, although they were not loaded.
SELECT count(*) FROM _ing_out WHERE outcome = 'conflict'
