-- The case's engine_requests when the case store holds no input the case does not name: all of them
-- (no filter to run on every read).
CREATE OR REPLACE VIEW case_engine_requests AS SELECT * FROM engine_requests
