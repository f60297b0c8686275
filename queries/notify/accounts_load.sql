-- The accounts file (account_id + any contact columns), every value kept as text.
SELECT * FROM read_csv($path, header = true, all_varchar = true)
