-- The bootstrap rooms with engine input lengths that several of the case's requests carry,
-- at least one of them in scope (`bands`): per room, the requests carrying it (any model or
-- time), by room then request_id. Such a room's lengths decide no request's band
-- (engine_room_lengths.sql).
SELECT DISTINCT l.bootstrap_room, l.request_id
FROM engine_room_lengths AS l
WHERE l.requests > 1
  AND l.bootstrap_room IN (
      SELECT s.bootstrap_room
      FROM engine_room_lengths AS s
      JOIN bands AS b ON b.request_id = s.request_id
  )
ORDER BY l.bootstrap_room, l.request_id
