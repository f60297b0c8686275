-- A warning about the year read for a log that prints none (forensics.ingest.engine_logs
-- _chain_years): its lines lie more than half a year outside the case window. Params:
-- $source, $note.
UPDATE engine_sources SET year_note = CAST($note AS VARCHAR) WHERE source = CAST($source AS VARCHAR)
