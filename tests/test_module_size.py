"""No module over 400 lines without a reason stated at its top.

The reason is a line of the module's docstring that starts with ``Over N lines on purpose:`` and goes on
to say why, e.g. ``Over 400 lines on purpose: mostly word lists, each beside the generator using it.``
N is at least 400 and the module really is that long: a module that shrank below its own claim, or a
short one carrying the line, fails too, so the marker is never left behind once the reason is gone.
Checked over the packages (the runtime and the trainer) and the benchmark scripts (tests are not held to
it).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 400
SCANNED = ("gateway", "training", "bench")
MARKER = re.compile(r"^Over (\d+) lines on purpose:(.*)$")
# Words a stated reason needs at the least: "Over 400 lines on purpose: data." says nothing.
MIN_REASON_WORDS = 4


def problem(source: str, name: str = "<module>") -> str | None:
    """Why ``source`` breaks the rule, or None when it keeps it."""
    lines = len(source.splitlines())
    docstring = ast.get_docstring(ast.parse(source)) or ""
    claims = [m for m in map(MARKER.match, docstring.splitlines()) if m]
    if not claims:
        return (
            f"{name}: {lines} lines, no 'Over N lines on purpose: why' in its docstring"
            if lines > LIMIT
            else None
        )
    if len(claims) > 1:
        return f"{name}: {len(claims)} 'Over N lines' lines in its docstring, one says it"
    claimed, why = int(claims[0].group(1)), claims[0].group(2)
    if lines <= LIMIT:
        return f"{name}: {lines} lines, within {LIMIT}: the 'Over {claimed} lines' line has no purpose left"
    if not LIMIT <= claimed <= lines:
        return f"{name}: says over {claimed} lines, has {lines}"
    if len(why.split()) < MIN_REASON_WORDS:
        return f"{name}: the reason after 'on purpose:' is too short to be one: {why.strip()!r}"
    return None


def test_every_long_module_says_why_at_its_top():
    paths = [p for folder in SCANNED for p in sorted((ROOT / folder).rglob("*.py"))]
    assert len(paths) > 100  # the scan found the package, not an empty folder
    found = [problem(p.read_text(encoding="utf-8"), str(p.relative_to(ROOT))) for p in paths]
    assert [f for f in found if f] == []


# ---- the check itself can fail ---------------------------------------------------------------------------

WHY = "Over 400 lines on purpose: word lists, each one beside the generator that uses it."


def _module(docstring: str, body_lines: int) -> str:
    return f'"""{docstring}\n"""\n' + "x = 1\n" * body_lines


def test_a_long_module_without_a_reason_fails():
    assert problem(_module("Generators.", LIMIT)) is not None
    assert problem(_module("Generators.", LIMIT - 10)) is None


def test_the_reason_must_be_in_the_docstring_not_a_comment():
    source = f"# {WHY}\n" + _module("Generators.", LIMIT)
    assert problem(source) is not None
    assert problem(_module(f"Generators.\n\n{WHY}", LIMIT)) is None


def test_a_marker_must_be_true_and_say_something():
    assert problem(_module(f"Generators.\n\n{WHY}", 100)) is not None  # short: no purpose left
    assert (
        problem(_module("Over 900 lines on purpose: word lists beside their generators.", LIMIT)) is not None
    )
    assert problem(_module("Over 400 lines on purpose: data.", LIMIT)) is not None
    assert problem(_module(f"{WHY}\n{WHY}", LIMIT)) is not None
