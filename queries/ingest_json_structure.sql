-- The merged structure of every valid JSON object of an input (for mapping validation).
SELECT json_group_structure(__j) AS structure FROM _ing_json WHERE __j IS NOT NULL
