-- The engine's own input length of the case's requests (any model) that decides their band
-- (bands.sql, and the blast radius): the one length of a room that identifies the request
-- (`engine_room_lengths.decides`: exactly one of the case's requests carries the room, and
-- its engine lines agree). A room several requests carry, or whose lines give different
-- lengths, decides nothing: the gateway's length stands, and the requests whose band one of
-- the room's lengths would change are in the exposure range (uncertainty/engine_length.sql).
SELECT request_id, tokens AS engine_prompt_tokens
FROM engine_room_lengths
WHERE decides
