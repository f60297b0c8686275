-- A source time value (text) -> TIMESTAMPTZ (UTC), NULL when unparsable.
-- Numbers are epochs in `unit` (s | ms | us; never under iso8601); text with an offset or Z
-- is read as given; naive text is read in zone `tz`. Digits past microseconds are cut.
CREATE OR REPLACE TEMP MACRO _ing_time(v, unit, tz) AS
CASE
    WHEN v IS NULL THEN NULL
    WHEN regexp_full_match(trim(v), '[+-]?[0-9]+(\.[0-9]+)?') THEN
        CASE
            WHEN unit = 'iso8601' THEN NULL
            ELSE timezone('UTC', try(make_timestamp(TRY_CAST(floor(
                TRY_CAST(trim(v) AS DECIMAL(38, 9))
                * CASE unit WHEN 's' THEN 1000000 WHEN 'ms' THEN 1000 ELSE 1 END
            ) AS BIGINT))))
        END
    WHEN regexp_matches(
        trim(v), '[0-9]:[0-9]{2}(:[0-9]{2}([.,][0-9]*)?)?\s*([Zz]|[+-][0-9]{2}(:?[0-9]{2})?)$'
    ) THEN TRY_CAST(trim(v) AS TIMESTAMPTZ)
    ELSE timezone(tz, TRY_CAST(trim(v) AS TIMESTAMP))
END
