-- The schema of each Parquet file of $paths (its footer only), as one text per file: files
-- of equal texts read alike in one pass. Run on one thread: each file's elements are listed
-- in the footer's order.
SELECT
    file_name,
    CAST(list(struct_pack(
        name, type, type_length, repetition_type, num_children, converted_type, scale,
        precision, field_id, logical_type
    )) AS VARCHAR) AS columns
FROM parquet_schema($paths)
GROUP BY file_name
