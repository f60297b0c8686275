-- The case's requests when the case store holds no input the case does not name: all of them
-- (no filter to run on every read).
CREATE OR REPLACE VIEW case_requests AS SELECT * FROM requests
