"""Renderers: they read the analysis results (tables and the summary) and write what people
read: the report and its charts (`report`, `figures`, `charts`), the notification lists
(`notify`), the headline (`headline`) and `[[capacity]]` entries (`capacity_entries`). They
never recompute a figure."""
