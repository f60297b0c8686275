-- TensorRT-LLM refusals: none are read (the table's shape, no rows).
SELECT * FROM engine_aborts WHERE false
