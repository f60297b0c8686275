-- The note of an input already recorded (its role was filled from its node).
UPDATE inputs SET note = $note WHERE sha256 = $sha256
