"""The analyses of a case database: bands and the exposure count (`exposure`), data owners
(`owners`), usage classification (`classify`, with `stats`), engine-log evidence
(`evidence`, `capacity`), the summary (`summary`) and what it was computed from
(`integrity`). Each reads and writes tables through the engine contract; none imports
another stage."""
