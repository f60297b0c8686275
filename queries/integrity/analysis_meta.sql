-- What the analysis in the case database was computed from (key -> digest).
SELECT key, value FROM analysis_meta ORDER BY key
