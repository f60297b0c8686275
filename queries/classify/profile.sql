-- Hour-of-day and day-by-day profile of exposed requests vs the baseline of normal
-- long-context usage (see accounts.sql), every hour 00-23 and every UTC day of
-- [$start, $end), with the exposed count the baseline's shape predicts.
WITH analysed AS (
    SELECT ts AT TIME ZONE 'UTC' AS t, band
    FROM bands
    WHERE exclusion_reason IS NULL
      AND (
          band = 'exposed'
          OR (band = 'fits' AND prompt_tokens >= $min_prompt AND over_from <= $context_window)
      )
),
buckets AS (
    -- generate_series is inclusive: the days d with d < $end (portable to Spark's sequence)
    SELECT 'hour' AS profile, lpad(h::VARCHAR, 2, '0') AS bucket
    FROM (SELECT unnest(generate_series(0, 23)) AS h)
    UNION ALL
    SELECT 'day' AS profile, strftime(d, '%Y-%m-%d') AS bucket
    FROM (
        SELECT unnest(generate_series(
            date_trunc('day', $start::TIMESTAMPTZ AT TIME ZONE 'UTC'),
            ($end::TIMESTAMPTZ AT TIME ZONE 'UTC') - INTERVAL 1 MICROSECOND,
            INTERVAL 1 DAY
        )) AS d
    )
),
counts AS (
    SELECT
        'hour' AS profile,
        lpad(hour(t)::VARCHAR, 2, '0') AS bucket,
        count(*) FILTER (WHERE band = 'exposed') AS exposed,
        count(*) FILTER (WHERE band = 'fits') AS baseline
    FROM analysed
    GROUP BY ALL
    UNION ALL
    SELECT
        'day' AS profile,
        strftime(t, '%Y-%m-%d') AS bucket,
        count(*) FILTER (WHERE band = 'exposed') AS exposed,
        count(*) FILTER (WHERE band = 'fits') AS baseline
    FROM analysed
    GROUP BY ALL
),
joined AS (
    SELECT
        k.profile,
        k.bucket,
        coalesce(c.exposed, 0)::BIGINT AS exposed,
        coalesce(c.baseline, 0)::BIGINT AS baseline
    FROM buckets AS k
    LEFT JOIN counts AS c USING (profile, bucket)
)
SELECT
    profile,
    bucket,
    exposed,
    baseline,
    sum(exposed) OVER (PARTITION BY profile) * baseline
        / nullif(sum(baseline) OVER (PARTITION BY profile), 0) AS expected_exposed
FROM joined
ORDER BY profile, bucket
