-- How many of one input's records are conflicting duplicates of records loaded (`_ing_out`),
-- or repeat a loaded id in another Unicode form: records that could be read as mapped,
-- although they were not loaded.
SELECT count(*) FROM _ing_out WHERE outcome IN ('conflict', 'unicode')
