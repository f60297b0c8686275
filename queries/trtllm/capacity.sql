SELECT * FROM engine_capacity WHERE false
