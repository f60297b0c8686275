#!/usr/bin/env bash
# Install everything the tests need from the project's own files, then run them.
# This is the README's test command; .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages, installed system-wide (apt-get) only when missing: headless Chromium
# opens the HTML report in tests/test_report_browser.py; a Java runtime runs Apache Spark in
# local mode for tests/test_spark.py. Said before anything is installed.
need=()
why=()
if ! command -v chromium >/dev/null 2>&1; then
  need+=(chromium)
  why+=("  chromium              headless browser: the report test opens report.html offline")
fi
if ! command -v java >/dev/null 2>&1; then
  need+=(default-jre-headless)
  why+=("  default-jre-headless  Java runtime: the Spark engine tests run Spark in local mode")
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "scripts/test.sh: installing system-wide with apt-get (with their dependencies):" >&2
  printf '%s\n' "${why[@]}" >&2
  echo "  (install them yourself first to skip this step)" >&2
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
  fi
fi

echo "scripts/test.sh: Python packages into .venv/ (the project with its test and spark extras)" >&2
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test,spark]'
.venv/bin/ruff check forensics tests benchmarks
.venv/bin/ruff format --check forensics tests benchmarks
.venv/bin/mypy  # the packages in pyproject.toml [tool.mypy], strict
# pytest also builds the user documentation (tests/test_docs.py: mkdocs build --strict)
.venv/bin/python -m pytest "$@"
