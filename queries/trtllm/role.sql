-- TensorRT-LLM's lines name no role: give it (--role, [[source]] role).
SELECT CAST(NULL AS VARCHAR) AS role WHERE false
