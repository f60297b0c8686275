-- No accounts file: an empty accounts table, so the lists carry no contact columns.
SELECT CAST(NULL AS VARCHAR) AS account_id WHERE false
