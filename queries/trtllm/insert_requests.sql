-- TensorRT-LLM request lines: none are read (the table's shape, no rows).
SELECT * FROM engine_requests WHERE false
