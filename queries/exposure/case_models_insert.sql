INSERT INTO case_models VALUES ($model)
