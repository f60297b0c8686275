-- The row groups of a Parquet file (its footer only): DuckDB reads one row group per thread.
SELECT num_row_groups FROM parquet_file_metadata($path)
