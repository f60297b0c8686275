-- The case's requests (`case_requests`: every model and time, the inputs the case does not
-- name left out) with the prefill capacity in force for each: the `capacity_in_force`
-- segment of its prefill node (a NULL node only NULL's) and model that holds its ts
-- (capacity_in_force.sql); `capacity` and `over_from` NULL where no [[capacity]] entry
-- holds. The bands read the case's models in the window of it, the blast radius all of it.
CREATE OR REPLACE VIEW case_requests_in_force AS
SELECT r.*, f.capacity, f.over_from
FROM case_requests AS r
LEFT JOIN capacity_in_force AS f
  ON f.prefill_node IS NOT DISTINCT FROM r.prefill_node
 AND f.model = r.model
 AND r.ts >= f.seg_start
 AND (f.seg_end IS NULL OR r.ts < f.seg_end)
