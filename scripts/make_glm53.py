"""Regenerate the bundled GLM-5.3 case under sample_logs/glm53/ (deterministic, seed 53).

Writes the gateway log, its mapping, incident.toml, accounts.csv, researchers.txt, the SGLang
server logs under engine/ (from the gateway log) and truth.json.

Usage: .venv/bin/python scripts/make_glm53.py [OUT_DIR]
"""

from __future__ import annotations

import json
import sys

from forensics.synth.sample import BUNDLED_DIR, write_bundled

if __name__ == "__main__":
    result = write_bundled(sys.argv[1] if len(sys.argv) > 1 else BUNDLED_DIR)
    print("\n".join(str(p) for p in result.files))
    print(json.dumps(result.truth, indent=2))
