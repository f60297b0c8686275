INSERT INTO case_success_status VALUES ($status)
