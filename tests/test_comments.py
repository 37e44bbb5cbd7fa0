"""Comments and docstrings say why, in the present tense: none points at an issue tracker's number instead.

An issue's number tells a reader where a change came from, not why the code is as it is; the reason
belongs in the comment itself, and the history in the commit log and docs/history/. A reference to
another project's issue is written as its URL, which says whose tracker it is.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("gateway", "training/gateway_training", "bench", "tests")

# The word issue followed by a number, or a hash followed by one (test_the_pattern_catches_what_it_should
# has examples); not a URL's path, a colour, an anchor, or docs/peers.md's numbered points.
ISSUE = re.compile(r"\bissues? #?\d+|(?<![\w/&#])#\d+\b", re.IGNORECASE)
ALLOWED = re.compile(r"peers\.md #\d+")


def _prose(path: Path) -> list[tuple[int, str]]:
    """The comments and docstrings of one module, with their line numbers."""
    source = path.read_text(encoding="utf-8")
    found = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None and node.body:
                found.append((node.body[0].lineno, doc))
    return found


def test_no_comment_or_docstring_cites_an_issue_number() -> None:
    offending = []
    checked = 0
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            checked += 1
            for line, text in _prose(path):
                for match in ISSUE.finditer(ALLOWED.sub("", text)):
                    offending.append(f"{path.relative_to(ROOT)}:{line}: {match.group(0)}")
    assert checked > 100
    assert offending == []


def test_the_pattern_catches_what_it_should() -> None:
    caught = ["(issue 15)", "Issue 16's soak", "see #42", "issues 18"]
    passed = ["https://github.com/o/r/issues/42", "docs/peers.md #3", "colour #fff", "page.md#anchor-2"]
    assert all(ISSUE.search(ALLOWED.sub("", text)) for text in caught)
    assert not any(ISSUE.search(ALLOWED.sub("", text)) for text in passed)
