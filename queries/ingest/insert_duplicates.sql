-- Record, per input of a load run, how many of its records duplicate records of another
-- input (one list element each).
INSERT INTO input_duplicates (path, sha256, of_path, records)
SELECT unnest($paths), unnest($sha256s), unnest($of_paths), unnest($records)
