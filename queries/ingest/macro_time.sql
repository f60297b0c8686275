-- A source time value (trimmed text) -> TIMESTAMPTZ (UTC), NULL when it cannot be read
-- exactly; _ing_time_why names the reason for a value that gave NULL (README "Decisions").
-- Numbers are epochs in `unit` (s | ms | us; never under iso8601), counted from 1970 or,
-- when the mapping sets `[timestamp] origin`, from that instant (variable _ing_origin_us,
-- microseconds since 1970; NULL without one), and must land in 2000-01-01 .. 2100-01-01 UTC,
-- else the unit is wrong (a ms value read as s is in year ~58,000, an s value read as ms in
-- January 1970) or a relative trace lacks its origin. Text is ISO 8601 / RFC 3339:
-- `YYYY-MM-DD[( |T)hh:mm[:ss[(.|,)f...]]][ ][Z|UTC|GMT|+hh[[:]mm]]`, T and Z in either case;
-- offsets up to ±18:00 (no seconds); naive text is read in zone `tz`. A leap second
-- (ss = 60) reads as hh:mm:59.999999. Digits past microseconds are cut. Instants outside
-- 0001-01-01 .. 9999-12-31 UTC are refused. Zone names (EST, America/New_York) are refused:
-- they are ambiguous. The common forms take a fast path straight to DuckDB's cast. Naive text
-- in a zone with clock changes must name one instant: a wall-clock time the zone passes twice
-- (the hour after a fall-back) or never (the hour a spring-forward skips) is refused.
-- (t bound once through a one-element list: a macro argument is copied into every use, and
-- t is a large expression here, which made each statement slow to plan)
CREATE OR REPLACE TEMP MACRO _ing_in_range(t) AS
list_transform(
    [t],
    lambda x: CASE
        WHEN x >= TIMESTAMPTZ '0001-01-01 00:00:00+00'
            AND x <= TIMESTAMPTZ '9999-12-31 23:59:59.999999+00' THEN x
    END
)[1];

-- an epoch number (text) in `unit` -> microseconds, NULL when not a small enough number
CREATE OR REPLACE TEMP MACRO _ing_epoch_us(v, unit) AS
CASE
    WHEN unit IN ('s', 'ms', 'us') AND abs(TRY_CAST(v AS DECIMAL(38, 9))) < 1e18
    -- TRY_CAST: beyond BIGINT microseconds (9.2e12 s, 9.2e15 ms) is no epoch of 2000-2100,
    -- and a CAST error would abort the whole load
    THEN TRY_CAST(floor(
        TRY_CAST(v AS DECIMAL(38, 9))
        * CASE unit WHEN 's' THEN 1000000 WHEN 'ms' THEN 1000 ELSE 1 END
    ) AS BIGINT)
END;

CREATE OR REPLACE TEMP MACRO _ing_epoch(v, unit) AS
list_transform(
    -- HUGEINT: an epoch near the BIGINT limit plus an origin must not overflow the load
    [CAST(_ing_epoch_us(v, unit) AS HUGEINT) + coalesce(getvariable('_ing_origin_us'), 0)],
    lambda us: CASE
        WHEN us >= 946684800000000 AND us < 4102444800000000
        THEN timezone('UTC', make_timestamp(CAST(us AS BIGINT)))
    END
)[1];

-- the parts of a time text (upper-cased): date, hour, minute, second, fraction, offset;
-- every part '' when the text is not of the grammar
CREATE OR REPLACE TEMP MACRO _ing_tparts(u) AS
regexp_extract(
    u,
    '^([0-9]{4}-[0-9]{2}-[0-9]{2})(?:[T ]([01][0-9]|2[0-3]):([0-5][0-9])'
    || '(?::([0-5][0-9]|60)(?:[.,]([0-9]+))?)?)? ?(Z|UTC|GMT|[+-][0-9]{2}(?::?[0-9]{2})?)?$',
    ['d', 'h', 'mi', 's', 'f', 'o']
);

-- the local (wall-clock) TIMESTAMP of the parts, NULL for an impossible date
CREATE OR REPLACE TEMP MACRO _ing_tlocal(p) AS
TRY_CAST(
    p['d'] || ' ' || coalesce(nullif(p['h'], ''), '00') || ':'
    || coalesce(nullif(p['mi'], ''), '00') || ':'
    || CASE
        WHEN p['s'] = '60' THEN '59.999999'
        ELSE coalesce(nullif(p['s'], ''), '00') || CASE WHEN p['f'] <> '' THEN '.' || p['f'] ELSE '' END
    END
    AS TIMESTAMP
);

-- the offset of the parts in minutes east of UTC: 0 for none/Z/UTC/GMT, NULL when invalid
CREATE OR REPLACE TEMP MACRO _ing_toffset(o) AS
list_transform(
    [o],
    lambda x: CASE
        WHEN x IN ('', 'Z', 'UTC', 'GMT') THEN 0
        WHEN CAST(x[2:3] AS INTEGER) * 60 + coalesce(TRY_CAST(replace(x[4:], ':', '') AS INTEGER), 0)
            <= 18 * 60
            AND coalesce(TRY_CAST(replace(x[4:], ':', '') AS INTEGER), 0) < 60
        THEN (CASE WHEN x[1] = '-' THEN -1 ELSE 1 END)
            * (CAST(x[2:3] AS INTEGER) * 60 + coalesce(TRY_CAST(replace(x[4:], ':', '') AS INTEGER), 0))
    END
)[1];

-- the UTC offset (local - UTC, an interval) of zone tz at instant x
CREATE OR REPLACE TEMP MACRO _ing_offset(x, tz) AS timezone(tz, x) - timezone('UTC', x);

-- the instants whose wall-clock time in zone tz is the TIMESTAMP t: t read under the offsets in
-- force a day before and a day after DuckDB's own reading u, kept when they read back as t.
-- One: t is one instant; two: the zone passes t twice; none: the zone skips t
CREATE OR REPLACE TEMP MACRO _ing_readings(t, tz) AS
try(list_distinct(list_filter(
    list_transform([timezone(tz, t)], lambda u: [
        timezone('UTC', t - _ing_offset(u - INTERVAL 1 DAY, tz)),
        timezone('UTC', t - _ing_offset(u + INTERVAL 1 DAY, tz))
    ])[1],
    lambda c: timezone(tz, c) = t
)));

-- the wall-clock TIMESTAMP t in zone tz as an instant, NULL unless it names exactly one
CREATE OR REPLACE TEMP MACRO _ing_local(t, tz) AS
list_transform(
    [t],
    lambda x: CASE
        WHEN tz = 'UTC' THEN timezone('UTC', x)
        ELSE list_transform([_ing_readings(x, tz)], lambda r: CASE WHEN len(r) = 1 THEN r[1] END)[1]
    END
)[1];

CREATE OR REPLACE TEMP MACRO _ing_tgeneral(p, tz) AS
CASE
    WHEN p['d'] = '' THEN NULL
    ELSE _ing_in_range(list_transform(
        [_ing_tlocal(p)],
        lambda l: CASE
            WHEN p['o'] = '' THEN _ing_local(l, tz)
            ELSE timezone('UTC', l - to_minutes(_ing_toffset(p['o'])))
        END
    )[1])
END;

CREATE OR REPLACE TEMP MACRO _ing_time(v, unit, tz) AS
CASE
    WHEN v IS NULL THEN NULL
    -- fast path: forms DuckDB's casts read exactly as the grammar above says, in years
    -- 1000-8999 (no offset or zone takes them out of range)
    WHEN regexp_full_match(
        v,
        '[1-8][0-9]{3}-[0-9]{2}-[0-9]{2}[T ]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?'
        || '(Z|[+-](0[0-9]|1[0-7])(:?[0-5][0-9])?|[+-]18(:?00)?)'
    ) THEN TRY_CAST(v AS TIMESTAMPTZ)
    WHEN regexp_full_match(
        v, '[1-8][0-9]{3}-[0-9]{2}-[0-9]{2}[T ]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?'
    ) THEN _ing_local(TRY_CAST(v AS TIMESTAMP), tz)
    WHEN regexp_full_match(v, '[+-]?[0-9]+(\.[0-9]+)?') THEN _ing_epoch(v, unit)
    -- through a one-element list: the lambda binds the parts once (a macro argument is
    -- copied into every use, which made each statement slow to plan)
    ELSE list_transform([_ing_tparts(upper(v))], lambda p: _ing_tgeneral(p, tz))[1]
END;

-- a time given as a TIMESTAMPTZ `n` (a typed source column) or else as text, `t` its reading
-- (_ing_time of the text: the compiled mapping reads it only for a field given as text, so a
-- statement binds _ing_time only where it is used)
CREATE OR REPLACE TEMP MACRO _ing_time_n(n, t) AS
CASE
    WHEN n IS NULL THEN t
    WHEN n >= TIMESTAMPTZ '0001-01-01 00:00:00+00'
        AND n <= TIMESTAMPTZ '9999-12-31 23:59:59.999999+00' THEN n
END;

CREATE OR REPLACE TEMP MACRO _ing_time_n_why(n, v, unit, tz, label) AS
CASE
    WHEN n IS NOT NULL THEN 'time out of range ' || label || ' (years 0001-9999 UTC)'
    ELSE _ing_time_why(v, unit, tz, label)
END;

-- the clock of a time text past 23:59:60 (`T24:00:00Z`, ISO 8601's end of day, which RFC
-- 3339 has not), whatever follows it: which of hour, minute, second is out of range (NULL
-- when none is), so that the `Z` after it is not taken for a zone name
CREATE OR REPLACE TEMP MACRO _ing_clock_why(v, label) AS
list_transform(
    [regexp_extract(
        upper(v),
        '^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2}))?(?:[.,][0-9]+)?'
        || '(?: ?[A-Z+-].*)?$',
        ['h', 'mi', 's']
    )],
    lambda p: CASE
        WHEN p['h'] = '' THEN NULL
        WHEN CAST(p['h'] AS INTEGER) > 23 THEN 'hour out of range in ' || label || ' (00-23)'
        WHEN CAST(p['mi'] AS INTEGER) > 59 THEN 'minute out of range in ' || label || ' (00-59)'
        WHEN p['s'] <> '' AND CAST(p['s'] AS INTEGER) > 60
        THEN 'second out of range in ' || label || ' (00-60)'
    END
)[1];

-- why _ing_time(v, ...) is NULL for a non-NULL v; `label` names the field
CREATE OR REPLACE TEMP MACRO _ing_time_why(v, unit, tz, label) AS
CASE
    WHEN regexp_full_match(v, '[+-]?[0-9]+(\.[0-9]+)?') THEN
        CASE
            WHEN unit = 'iso8601'
            THEN 'epoch number in ' || label || ' but [timestamp] unit is iso8601'
            ELSE 'implausible epoch ' || label || ' for unit ' || unit
                || CASE WHEN getvariable('_ing_origin_us') IS NOT NULL
                    THEN ' from [timestamp] origin' ELSE '' END
                || ' (not within 2000-2100 UTC)'
        END
    WHEN _ing_tparts(upper(v))['d'] <> '' THEN list_transform(
        [_ing_tparts(upper(v))],
        lambda p: CASE
            WHEN _ing_toffset(p['o']) IS NULL THEN 'invalid UTC offset in ' || label
            WHEN _ing_tlocal(p) IS NULL THEN 'unparsable time ' || label
            WHEN p['o'] = '' AND tz <> 'UTC' AND len(_ing_readings(_ing_tlocal(p), tz)) = 0
            THEN 'nonexistent local time ' || label || ' in ' || tz
                || ' (a clock change skips it; give a UTC offset)'
            WHEN p['o'] = '' AND tz <> 'UTC' AND len(_ing_readings(_ing_tlocal(p), tz)) = 2
            THEN 'ambiguous local time ' || label || ' in ' || tz
                || ' (a clock change repeats it; give a UTC offset)'
            ELSE 'time out of range ' || label || ' (years 0001-9999 UTC)'
        END
    )[1]
    WHEN _ing_clock_why(v, label) IS NOT NULL THEN _ing_clock_why(v, label)
    WHEN regexp_full_match(
        upper(v),
        '[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.,][0-9]+)?)?)? ?[+-][0-9:]+'
    ) THEN 'invalid UTC offset in ' || label
    WHEN regexp_full_match(
        upper(v),
        '[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.,][0-9]+)?)?)? ?'
        || '[A-Z][A-Z0-9_+-]*(/[A-Z0-9_+-]+)*'
    ) THEN 'time zone name in ' || label || ' (use a UTC offset or [timestamp] timezone)'
    ELSE 'unparsable time ' || label
END
