-- The case's models.
CREATE OR REPLACE TABLE case_models (model VARCHAR)
