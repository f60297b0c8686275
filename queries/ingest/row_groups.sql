-- The row groups and rows of a Parquet file and the compressed bytes of its largest row group
-- (its footer only; a column chunk's size is always there, a row group's total may not be):
-- DuckDB reads one row group per thread, holding the row group's data while it reads it.
SELECT
    num_row_groups,
    num_rows,
    (
        SELECT coalesce(max(b), 0)
        FROM (
            SELECT sum(total_compressed_size) AS b FROM parquet_metadata($path)
            GROUP BY row_group_id
        )
    ) AS largest_row_group_bytes
FROM parquet_file_metadata($path)
