-- Category quarantined (direction max): quarantined request-log records (`range_quarantine`;
-- conflicting duplicates are judged by conflicting.sql) whose readable values do not rule
-- exposure out. A value rules it out when it shows a model not of the case, a time outside
-- the window widened by the clock skew [$lo, $hi), a status not in success_status, an
-- excluded account, or a prompt not over the smallest prefill capacity in force at any time
-- in that widened window (below its reject_from, else not above its tokens) less the token
-- tolerance, or above the context window plus the
-- tolerance. A value that is missing or failed its own check (NULL) rules nothing out, so a
-- record that could not be parsed at all counts.
WITH floor_cap AS (
    -- the smallest prompt over a capacity: the entry's reject_from, else tokens + 1
    -- of the entries that hold for a model of the case
    SELECT min(coalesce(reject_from, tokens + 1)) AS over_from
    FROM case_capacity
    WHERE role = 'prefill' AND for_case AND start_ts < $hi AND (end_ts IS NULL OR end_ts > $lo)
)
SELECT
    'quarantined' AS category,
    'max' AS direction,
    CAST(NULL AS VARCHAR) AS request_id,
    q.source,
    q.row,
    CAST(NULL AS BIGINT) AS bootstrap_room
FROM range_quarantine AS q
CROSS JOIN floor_cap AS f
LEFT JOIN (SELECT DISTINCT model FROM case_models) AS m ON m.model = q.model
LEFT JOIN (SELECT DISTINCT status FROM case_success_status) AS s ON s.status = q.status
LEFT JOIN case_exclusions AS x ON x.account_id = q.account_id
WHERE q.reason <> 'conflicting duplicate'
  AND (q.model IS NULL OR m.model IS NOT NULL)
  AND (q.ts IS NULL OR (q.ts >= $lo AND q.ts < $hi))
  AND (q.status IS NULL OR s.status IS NOT NULL)
  AND x.account_id IS NULL
  AND (
      q.prompt_tokens IS NULL
      OR (
          (f.over_from IS NULL OR q.prompt_tokens >= f.over_from - $tolerance)
          AND q.prompt_tokens <= $context_window + $tolerance
      )
  )
