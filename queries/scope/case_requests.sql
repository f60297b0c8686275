-- The case's requests: those of the inputs a case [[source]] names (every input but the ones
-- in `case_unnamed_inputs`, which the analysis leaves out and names in a warning).
CREATE OR REPLACE VIEW case_requests AS
SELECT * FROM requests WHERE source NOT IN (SELECT path FROM case_unnamed_inputs)
