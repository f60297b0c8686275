-- Bootstrap_rooms the engine refused without exposure: the prefill retired the request at
-- intake without a KV transfer (SGLang 0.5.21+: its placeholder finished as an abort with
-- prompt_tokens 1, or its ReqTimeStats shows input_len = 1, output_len = 0), or a decode leg
-- never received the KV of a room the prefill rejected (decode transfer failure). Never a
-- signature room: one row per room, with the evidence that shows it.
WITH retired AS (
    SELECT bootstrap_room, 'prefill retired the placeholder (abort, prompt_tokens 1)' AS how
    FROM case_engine_requests
    WHERE role = 'prefill' AND bootstrap_room IS NOT NULL AND input_len = 1
        AND (
            (kind = 'time_stats' AND output_len = 0)
            OR (kind IN ('finish', 'metrics') AND finish_reason = 'abort')
        )
    UNION ALL
    SELECT bootstrap_room, 'decode never received the KV' AS how
    FROM case_engine_aborts
    WHERE kind = 'transfer_failed' AND bootstrap_room IS NOT NULL
        AND bootstrap_room IN (
            SELECT bootstrap_room FROM case_engine_aborts
            WHERE role = 'prefill' AND kind IN ('input_length', 'kv_capacity')
                AND bootstrap_room IS NOT NULL
        )
)
SELECT bootstrap_room, min(how) AS how
FROM retired
WHERE bootstrap_room NOT IN (SELECT bootstrap_room FROM engine_signature)
GROUP BY bootstrap_room
