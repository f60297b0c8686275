-- The case's engine_aborts: those of the inputs a case [[source]] names (every input but the ones
-- in `case_unnamed_inputs`, which the analysis leaves out and names in a warning).
CREATE OR REPLACE VIEW case_engine_aborts AS
SELECT * FROM engine_aborts WHERE source NOT IN (SELECT path FROM case_unnamed_inputs)
