-- Every row of one small result table (classification_*, inputs), in a stable order.
SELECT * FROM query_table($table) ORDER BY ALL
