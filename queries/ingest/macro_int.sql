-- A source count (trimmed text) -> BIGINT, NULL unless it is exactly an integer in range.
-- Accepted: decimal digits with an optional sign ("+5", "007"), integral decimals ("12.0",
-- "12."), exponent forms whose value is integral ("1e3", "50e-1"). Never rounded: "681280.5"
-- is refused (fractional), as are "0x10", "1_000", "NaN" (DuckDB's casts accept the first
-- two, and round the third), and values beyond BIGINT (>= 2^63). _ing_int_why names the
-- reason for a value that gave NULL.
CREATE OR REPLACE TEMP MACRO _ing_exp_parts(v) AS
regexp_extract(v, '^[+-]?([0-9]*)(?:\.([0-9]*))?[eE]([+-]?[0-9]+)$', ['i', 'f', 'e']);

-- v = I[.F]eE: integral iff the digits I||F, less their trailing zeros, need no place
-- right of the point (len(F) - E places, one fewer per trailing zero)
CREATE OR REPLACE TEMP MACRO _ing_exp_integral(v) AS
list_transform(
    [_ing_exp_parts(v)],
    lambda p: rtrim(p['i'] || p['f'], '0') = ''
        OR length(p['f']) - TRY_CAST(p['e'] AS BIGINT)
        <= length(p['i'] || p['f']) - length(rtrim(p['i'] || p['f'], '0'))
)[1];

CREATE OR REPLACE TEMP MACRO _ing_int(v) AS
CASE
    WHEN v IS NULL THEN NULL
    -- fast path: plain digits of at most 18 (always within BIGINT)
    WHEN length(v) <= 18 AND ltrim(v, '0123456789') = '' THEN CAST(v AS BIGINT)
    WHEN regexp_full_match(v, '[+-]?[0-9]+') THEN TRY_CAST(v AS BIGINT)
    WHEN regexp_full_match(v, '[+-]?[0-9]+\.0*') THEN TRY_CAST(split_part(v, '.', 1) AS BIGINT)
    WHEN regexp_full_match(v, '[+-]?\.0+') THEN 0
    WHEN regexp_full_match(v, '[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)[eE][+-]?[0-9]+')
        AND _ing_exp_integral(v)
    THEN TRY_CAST(TRY_CAST(v AS DECIMAL(38, 0)) AS BIGINT)
END;

-- why _ing_int(v) is NULL for a non-NULL v; `what` names the value ('token count x')
CREATE OR REPLACE TEMP MACRO _ing_int_why(v, what) AS
CASE
    WHEN NOT regexp_full_match(v, '[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?')
    THEN 'non-numeric ' || what
    WHEN regexp_full_match(v, '[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)')
        AND regexp_matches(v, '\.[0-9]*[1-9]')
    THEN 'fractional ' || what
    WHEN regexp_full_match(v, '[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)[eE][+-]?[0-9]+')
        -- an exponent too large to read: out of range when positive, a fraction when not
        AND NOT coalesce(_ing_exp_integral(v), NOT regexp_matches(v, '[eE]-'))
    THEN 'fractional ' || what
    ELSE 'out-of-range ' || what
END
