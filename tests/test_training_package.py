"""The scorer's trainer (``gateway_training``, training/) is a distribution apart from the runtime: the
gateway's wheel and image leave it out, the runtime imports it only when ``gateway router train`` or
``gateway router eval`` runs, and without it those commands say in one line what to install."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import setuptools

from gateway.cli import main
from gateway.commands.router import INSTALL
from tests.support import checkout_env

ROOT = Path(__file__).resolve().parents[1]
TRAINING = ROOT / "training"
HINT = "pip install -e ./training"

# A fresh interpreter in which the trainer cannot be imported, whether it is installed there or not: a
# finder ahead of all others fails its import with the error an absent package gives (None in sys.modules
# would not do: a submodule's import then fails with the submodule's name, not the package's).
WITHOUT_TRAINER = """
import sys


class Absent:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.partition(".")[0] == "gateway_training":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Absent)
from gateway.cli import main

sys.exit(main(sys.argv[1:]))
"""


def without_trainer(*args: str) -> subprocess.CompletedProcess[str]:
    # The checkout's gateway, and no training/ on the path (pytest puts it on its own sys.path only).
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_TRAINER, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=False,
    )


def test_the_hint_names_the_install_command() -> None:
    assert HINT in INSTALL


# ---- without the trainer ----------------------------------------------------------------------------------


def test_router_without_the_trainer_says_what_to_install_in_one_line(tmp_path: Path) -> None:
    data = tmp_path / "labelled.jsonl"
    data.write_text(json.dumps({"prompt": "hello", "label": "easy"}) + "\n")
    out = tmp_path / "m.json.gz"
    for action in (["train", "--out", str(out)], ["eval", "--data", str(data)]):
        result = without_trainer("router", *action)
        assert result.returncode == 2, result.stderr
        assert result.stdout == ""
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and HINT in lines[0] and f"gateway router {action[0]}" in lines[0], lines
    assert not out.exists()


def test_router_help_works_without_the_trainer_and_says_what_it_needs() -> None:
    for action in ("train", "eval"):
        result = without_trainer("router", action, "--help")
        assert result.returncode == 0, result.stderr
        assert "--data" in result.stdout and HINT in " ".join(result.stdout.split())
    result = without_trainer("--help")
    assert result.returncode == 0 and "router" in result.stdout


def test_the_runtime_starts_without_importing_the_trainer() -> None:
    """The app and the whole command line load without the trainer: only running an action imports it."""
    code = (
        "import sys; import gateway.app, gateway.cli; gateway.cli._parser(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('gateway_training', 'sklearn')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=checkout_env(),
        timeout=60,
        check=True,
    )
    assert result.stdout.strip() == "[]"


# ---- with the trainer -------------------------------------------------------------------------------------


def test_router_help_works_with_the_trainer(capsys: pytest.CaptureFixture[str]) -> None:
    import gateway_training

    assert Path(gateway_training.__file__).is_relative_to(TRAINING)  # this checkout's trainer
    with pytest.raises(SystemExit) as exit_:
        main(["router", "train", "--help"])
    assert exit_.value.code == 0 and "--per-source" in capsys.readouterr().out


def test_a_module_missing_inside_the_trainer_is_not_taken_for_its_absence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the trainer's own absence is the hint: a broken install keeps its traceback, which names what
    is missing."""
    import gateway_training.card  # noqa: F401  (imported before one of its modules goes missing)

    monkeypatch.setitem(sys.modules, "gateway_training.report", None)
    with pytest.raises(ModuleNotFoundError, match=r"gateway_training\.report"):
        main(["router", "train", "--no-builtin", "--out", str(tmp_path / "m.json.gz")])


def test_without_scikit_learn_training_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The trainer on the path without its dependencies (a checkout, not an install)."""
    data = tmp_path / "labelled.jsonl"
    rows = [{"prompt": f"hello #{i}", "label": "easy"} for i in range(4)]
    rows += [{"prompt": f"Prove that {i} is odd.", "label": "hard"} for i in range(4)]
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    monkeypatch.setitem(sys.modules, "sklearn.linear_model", None)
    argv = ["router", "train", "--no-builtin", "--data", str(data), "--folds", "2"]
    assert main([*argv, "--out", str(tmp_path / "m.json.gz")]) == 2
    err = capsys.readouterr().err
    last = err.splitlines()[-1]  # after the line that says what it is training on
    assert "scikit-learn" in last and HINT in last and last.startswith("gateway: ")


# ---- what each distribution and the image carry -----------------------------------------------------------


def _pyproject(folder: Path) -> dict:
    return tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_runtime_wheel_leaves_the_trainer_out() -> None:
    """The packages and data the runtime's pyproject selects: the models, no trainer (a real wheel's
    file list is in the report of the change that split them; building one needs the network)."""
    config = _pyproject(ROOT)["tool"]["setuptools"]
    packages = setuptools.find_packages(str(ROOT), include=config["packages"]["find"]["include"])
    assert {"gateway", "gateway.routing", "gateway.routing.scorer", "gateway.backends"} <= set(packages)
    assert [p for p in packages if "training" in p or not p.startswith("gateway")] == []
    assert set(config["package-data"]) == {"gateway.routing.scorer"}
    assert not (ROOT / "gateway" / "routing" / "training").exists()
    assert list((ROOT / "gateway" / "routing" / "scorer" / "models").glob("*.bin.gz"))


def test_the_training_distribution_carries_the_trainer_and_its_data() -> None:
    project = _pyproject(TRAINING)
    config = project["tool"]["setuptools"]
    packages = setuptools.find_packages(str(TRAINING), include=config["packages"]["find"]["include"])
    assert {"gateway_training", "gateway_training.generators"} <= set(packages)
    data = TRAINING / "gateway_training"
    shipped = {
        str(p.relative_to(data / "data"))
        for pattern in config["package-data"]["gateway_training"]
        for p in data.glob(pattern)
    }
    assert {"reasoning_gym.jsonl.gz", "contexts/train.jsonl.gz", "contexts/eval.jsonl.gz"} <= shipped
    assert len([n for n in shipped if n.startswith("written/")]) >= 10
    assert len([n for n in shipped if n.startswith("real/")]) >= 50
    # It computes features with the runtime's code: the two versions move together.
    version = _pyproject(ROOT)["project"]["version"]
    assert f"diffusion-gateway=={version}" in project["project"]["dependencies"]
    assert any(d.startswith("scikit-learn") for d in project["project"]["dependencies"])


def test_the_tests_install_the_trainer_and_the_gateway_no_longer_names_it() -> None:
    extras = _pyproject(ROOT)["project"]["optional-dependencies"]
    assert "router-train" not in extras
    assert not [d for d in extras["test"] if "scikit-learn" in d or "router-train" in d]
    assert "pip install -q -e '.[test]' -e ./training" in (ROOT / ".ci" / "run").read_text()


def test_the_image_copies_the_runtime_only() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    copied = set()
    for line in dockerfile.splitlines():
        if line.startswith("COPY ") and "--from=" not in line:
            copied |= set(line.split()[1:-1])
    assert copied == {"requirements.lock", "pyproject.toml", "README.md", "gateway"}
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    assert "training" in ignored  # not even in the build context
    assert not re.search(r"^COPY \. ", dockerfile, flags=re.M)
