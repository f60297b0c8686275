-- A source count (text) -> BIGINT; integral decimals ("12.0", "1e3") accepted, else NULL.
CREATE OR REPLACE TEMP MACRO _ing_int(v) AS
coalesce(
    TRY_CAST(trim(v) AS BIGINT),
    TRY_CAST(
        CASE
            WHEN TRY_CAST(trim(v) AS DOUBLE) = floor(TRY_CAST(trim(v) AS DOUBLE))
            THEN TRY_CAST(trim(v) AS DOUBLE)
        END AS BIGINT
    )
)
