-- The case's engine_kv_faults when the case store holds no input the case does not name: all of them
-- (no filter to run on every read).
CREATE OR REPLACE VIEW case_engine_kv_faults AS SELECT * FROM engine_kv_faults
