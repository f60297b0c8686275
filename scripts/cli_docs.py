"""Write docs/cli.md, the command reference, from the `forensics` command itself: each
command's usage line, help text, arguments and options, and exit codes, as `--help` shows
them. tests/test_docs.py fails when the page differs from what this renders, so the page
cannot drift from the command line.

    python scripts/cli_docs.py            # rewrite docs/cli.md
    python scripts/cli_docs.py --check    # exit 1 when docs/cli.md is out of date
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "cli.md"
PROG = "forensics"

HEADER = """# Command reference

<!-- Generated from the command line by scripts/cli_docs.py; do not edit by hand. After
changing a command, run `python scripts/cli_docs.py` (tests/test_docs.py fails when this
page and the command line differ). -->

Every command and option, as `forensics COMMAND --help` shows them (`-h` works too).
Arguments are in capitals; an option with a value shows it after its name (`--db DB`), one
with a fixed set of values lists them (`<duckdb|spark>`); a flag takes none. Errors are one
line on stderr and an exit code (see [Exit codes](exit-codes.md)); when stderr is not a
terminal, each long step prints one `progress: STEP` line there (`--quiet` silences them).
"""


def _escape(text: str) -> str:
    """Help text as Markdown shows it literally: emphasis marks and angle brackets escaped."""
    text = text.replace("\\", "\\\\").replace("*", "\\*").replace("_", "\\_")
    return text.replace("<", "&lt;").replace(">", "&gt;")


def _help_item(record: tuple[str, str]) -> str:
    """One argument or option as a list item: `--db DB`: its help."""
    names, help_text = record
    help_text = re.sub(r"\s+", " ", help_text).strip()
    return f"- `{names}`: {_escape(help_text)}" if help_text else f"- `{names}`"


def _params(command: Any, ctx: Any) -> list[str]:
    return [
        _help_item(record)
        for record in (p.get_help_record(ctx) for p in command.get_params(ctx))
        if record is not None
    ]


def _usage(command: Any, ctx: Any) -> str:
    return " ".join([ctx.command_path, *command.collect_usage_pieces(ctx)])


def render() -> str:
    """docs/cli.md as the command line defines it now."""
    import typer
    import typer.main

    from forensics.cli import app

    group = typer.main.get_command(app)
    root = typer.Context(group, info_name=PROG, **group.context_settings)
    lines = [HEADER]
    lines += [f"    {_usage(group, root)}", ""]
    lines += [inspect.cleandoc(group.help or ""), ""]
    lines += [*_params(group, root), ""]
    if group.epilog:
        lines += [_escape(inspect.cleandoc(group.epilog)), ""]
    for name in group.list_commands(root):
        command = group.get_command(root, name)
        if command is None or command.hidden:
            continue
        ctx = typer.Context(command, info_name=name, parent=root)
        lines += [f"## {PROG} {name}", "", f"    {_usage(command, ctx)}", ""]
        lines += [inspect.cleandoc(command.help or ""), ""]
        lines += [*_params(command, ctx), ""]
        if command.epilog:
            lines += [_escape(inspect.cleandoc(command.epilog)), ""]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is out of date: run python scripts/cli_docs.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    raise SystemExit(main(sys.argv[1:]))
