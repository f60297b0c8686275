#!/usr/bin/env bash
# Install everything the tests need from the project's own files, then run them.
# This is the README's test command; .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages: headless Chromium for the report test, Java for Spark local mode.
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
  fi
fi

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test,spark]'
.venv/bin/ruff check forensics tests benchmarks
.venv/bin/ruff format --check forensics tests benchmarks
.venv/bin/mypy  # the packages in pyproject.toml [tool.mypy], strict
.venv/bin/python -m pytest "$@"
