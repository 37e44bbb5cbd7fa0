"""The difficulty scorer: features, model files, the shipped model's verdicts, settings.

Accuracy figures live in the bench (bench/router_loso.py, bench/routing_eval.py); these tests check
behaviour: determinism, the prompts the routing design names, context, errors and settings.
"""

from __future__ import annotations

import gzip
import json
import math
import random
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from gateway.routing import BackendView, RouteInput, decide, extract_features
from gateway.routing.scorer import lexicons
from gateway.routing.scorer import text as text_module
from gateway.routing.scorer.blocks import (
    TABLES,
    damping,
    request_features,
    split_blocks,
    split_features,
    table_of,
)
from gateway.routing.scorer.linear import (
    FORMAT,
    FORMAT_HEADS,
    MEANING_PRIOR,
    Head,
    ModelError,
    ScorerModel,
)
from gateway.routing.scorer.load import load_model, parse_model
from gateway.routing.scorer.settings import ScorerSettings
from gateway.routing.scorer.text import HEAD_CHARS, TAIL_CHARS, featurize, featurize_blocks, split_payload
from gateway.routing.settings import RoutingSettings, RuleConditions

D = BackendView(name="diffusion", kind="diffusion", model="dg", max_concurrency=4)
A = BackendView(name="autoregressive", kind="autoregressive", model="g4", max_concurrency=256)


@pytest.fixture(scope="module")
def model() -> ScorerModel:
    return load_model()


def user(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def route(payload: dict[str, Any], model: ScorerModel, **kw: Any) -> tuple[str, tuple[str, ...]]:
    features = extract_features(payload, "chat", model)
    threshold = kw.pop("threshold", model.threshold)
    decision = decide(
        RouteInput(model="auto", features=features, threshold=threshold, **kw), [D, A], RoutingSettings()
    )
    return decision.candidates[0], decision.reasons


# ---- features ------------------------------------------------------------------------------------------


def test_features_fold_numbers_and_read_structure() -> None:
    a = featurize("Alice, Bob and Claire share 12 apples. How many does each get?")
    b = featurize("Alice, Bob and Claire share 7 apples. How many does each get?")
    assert a == b  # the quantity is folded away
    assert {"w:0", "b:0 apples", "b:how many", "s:ends_with_question", "s:questions=1"} <= a
    assert "s:names=2" in a and "s:with_unit=1" in a  # Bob and Claire: Alice opens the sentence
    plain = featurize("hello there")
    assert "s:numbers=0" in plain and "s:names=0" in plain and "s:ends_with_question" not in plain


def test_features_read_the_closing_question() -> None:
    def closing(text: str) -> set[str]:
        return {f for f in featurize(text) if f.startswith(("s:closing_", "s:asks_listener"))}

    # A day told with its figures, closed by a question about the listener.
    assert closing("Walked 6,000 steps. Had a 4-hour meeting. How was yours?") == {
        "s:closing_question=1-3",
        "s:asks_listener",
    }
    assert closing("Fuimos 400 km en coche.\n¿Y tú?") == {"s:closing_question=1-3", "s:asks_listener"}
    # Only the last sentence counts, and only when the text ends with a question.
    assert closing("Did you see it? A train leaves at 9:40 and the trip takes 2 h. When does it arrive?") == {
        "s:closing_question=4-6"
    }
    assert closing("Three pumps fill it in 6 hours. How long do 2 pumps take?") == {
        "s:closing_question=4-6",
        "s:closing_number",
    }
    assert closing("How are you? I walked 6,000 steps today.") == set()
    assert closing("?") == {"s:closing_question=0"}


def test_features_read_times_tables_and_notation() -> None:
    assert "s:clock" in featurize("The train leaves at 9:40 and arrives at 12:15.")
    assert "s:date" in featurize("Plan a dinner for 12/25/2024.")
    table = "name | age | city\n--- | --- | ---\nAnn | 31 | Oslo\nBen | 29 | Rome\n"
    assert "s:table" in featurize(table)
    assert any(f.startswith("s:notation=") for f in featurize(r"Compute \frac{1}{2} + x^2 for x ≥ 0"))
    assert any(f.startswith("s:code=") for f in featurize("Why does useEffect call fetch_data twice?"))


@pytest.mark.parametrize(
    ("text", "feature"),
    [
        ("Meet at 9:05.", "s:clock"),
        ("Meet at 9:65 or 10", None),  # not a time: minutes above 59
        ("Due 3/4/2025 at noon", "s:date"),
        ("Due 3.4.2025 at noon", "s:date"),
        ("Due 2025-03-04 at noon", "s:date"),
        ("Rooms 3-4 and 12 to 14", None),  # one separator only
        ("- eggs\n- milk\n- bread", "s:list=3-5"),  # the first line counts too
        ("eggs\n 1. milk\n2) bread", "s:list=1-2"),
        ("Is x ≤ y and y ≥ z? π", "s:notation=3+"),
        ("my iPhone and getUser", "s:code=2-3"),
        ("Paris is LOVELY in May", None),
    ],
)
def test_shape_patterns_match_where_they_should(text: str, feature: str | None) -> None:
    """The shape patterns are written to start on a literal character (text.py: fast to skip to);
    each still matches exactly what its plain form in the comment beside it matches."""
    features = featurize(text)
    if feature is None:
        assert not {"s:clock", "s:date"} & features and not any(f.startswith("s:code=") for f in features)
    else:
        assert feature in features


def test_the_fast_paths_read_what_the_plain_patterns_read() -> None:
    """text.py reads ASCII text with ``translate`` and ``split`` and some patterns in a faster form
    (the long turn's 400 µs budget); on every ASCII character they must agree with the plain
    forms in the comments, or the shipped model would read text differently from how it was trained."""
    rng = random.Random(15)
    pieces = [chr(c) for c in range(128)] + ["aB", "9:", "3 + x", "fooBar", ":-)", "^^^", "()", "</", "7km"]
    for _ in range(300):
        sample = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 400)))
        plain = ["0" if t[0].isdigit() else t for t in map(str.lower, re.findall(r"\w+", sample))]
        assert text_module._folded(sample) == plain
        assert len(text_module._CAMEL.findall(sample)) == len(re.findall("[a-z][A-Z]", sample))
        assert text_module._ARITHMETIC_ASCII.findall(sample) == text_module._ARITHMETIC.findall(sample)
        for needles in (lexicons.EMOTICONS, text_module._CODE_CHARS, text_module._SENTENCE_ENDS):
            assert text_module._count_any(sample, needles) == sum(map(sample.count, needles))
    # Latin-1 text with the marks beyond it (curly quotes, dashes, €) is split in bytes; other text
    # takes the pattern: their digits and letters are words too.
    latin = [chr(c) for c in range(128, 256)] + list("\u2018\u2019\u201c\u201d\u2013\u2014\u2026\u20ac")
    for _ in range(300):
        sample = "".join(rng.choice(pieces + latin) for _ in range(rng.randint(1, 400)))
        plain = ["0" if t[0].isdigit() else t for t in map(str.lower, re.findall(r"\w+", sample))]
        assert text_module._folded(sample) == plain
    assert text_module._folded("Straße ٣ Äpfel x² İstanbul") == ["straße", "0", "äpfel", "x²", "i̇stanbul"]


def test_only_the_head_and_the_tail_of_a_long_text_count() -> None:
    middle = " zebra" * 5000
    text = "Summarise this." + middle + " Thanks."
    features = featurize(text)
    assert "w:summarise" in features and "w:thanks" in features
    # The middle is read up to the window only: the same features whatever its length beyond it.
    longer = "Summarise this." + " zebra" * 50_000 + " Thanks."
    assert featurize(longer) - {f for f in featurize(longer) if f.startswith("s:len=")} == features - {
        f for f in features if f.startswith("s:len=")
    }
    assert len(text) > HEAD_CHARS + TAIL_CHARS


def test_pasted_material_is_read_apart_from_its_instruction() -> None:
    email = "Hi Jonas,\n\n" + "The meeting moves to 23.10. at 18:00 in room 2.14. Bring the budget. " * 6
    before = f"Summarise this email.\n\n{email}"
    assert split_payload(before) == ("Summarise this email.", email)
    after = f"{email}\n\nWhat do I need to bring?"
    assert split_payload(after) == ("What do I need to bring?", email)
    # Neither a short turn nor two long paragraphs is an instruction with a payload.
    assert split_payload("Hi!\n\nHow are you?") == ("Hi!\n\nHow are you?", "")
    paragraph = "The meeting moves to 23.10. at 18:00 in room 2.14, and we need the budget. " * 5
    assert split_payload(paragraph + "\n\n" + paragraph)[1] == ""
    features = featurize(before)
    assert {"s:payload", "w:summarise", "p:meeting", "p:0"} <= features
    assert "w:meeting" not in features and "p:summarise" not in features  # each word in its own part
    assert "ps:clock" in features and "s:clock" not in features  # the shape of the payload, apart
    assert "s:payload" not in featurize("Summarise this email: " + email.replace("\n\n", " "))


def test_the_register_of_chat_is_read() -> None:
    assert "s:chatty=4+" in featurize("haha I slept 5 hours because Priya kept texting me!! 😂")
    assert "s:chatty=1" in featurize("Spent 7 dollars on snacks :)")
    puzzle = featurize("Priya has 5 apples and gives 2 to Tom. How many does she keep?")
    assert "s:chatty=0" in puzzle


def test_german_nouns_are_not_a_cast_of_names() -> None:
    german = (
        "Die Bürgermeisterin sprach von einer großen Chance für die Region. Viele Geschäfte in der "
        "Innenstadt begrüßen den Plan, Parken in der Bahnhofstraße ist bis Ende der Arbeiten verboten. "
        "Ehrenamtliche haben im Frühjahr bereits viele Blumenzwiebeln entlang der Straße gepflanzt."
    )
    assert "s:names=dense" in featurize(german)
    cast = "Alice, Bob, Claire, Dev, Elena and Farid sit in a row; Bob is left of Dev. Who is in the middle?"
    assert "s:names=5+" in featurize(cast)


def test_words_that_open_a_sentence_or_a_line_are_not_names() -> None:
    # A bot's rule list in a system prompt read as a puzzle's cast when every capitalised word counted.
    rules = (
        "You are Pip, the assistant of a café.\nRules:\n- Never discuss politics.\n- Keep answers short.\n"
        "- Always sign off kindly. Avoid lists. Use one emoji at most. Reply in English."
    )
    assert "s:names=2" in featurize(rules)  # Pip and English; not Rules, Never, Keep, Always, Avoid...


def test_scoring_is_deterministic_and_explained(model: ScorerModel) -> None:
    text = (
        "A bat and a ball cost $1.10 in total; the bat costs $1.00 more than the ball. How much is the ball?"
    )
    first = model.score(text, explain=5)
    assert first == model.score(text, explain=5)
    assert 0.0 <= first.score <= 1.0
    # Nothing before the turn: the context adds the weight of "no context", on the decisive logit (with
    # several heads, the leading hard head's less the leading easy head's).
    weights = list(zip(model.weights_of("c:none"), model.heads, strict=True))
    hard = [w for w, h in weights if h.hard]
    easy = [w for w, h in weights if not h.hard] or [0.0]
    assert any(first.context == pytest.approx(a - b) for a in hard for b in easy)
    assert len(first.top) == 5
    weights = [abs(c.weight) for c in first.top]
    assert weights == sorted(weights, reverse=True)  # the features that pushed it most, first
    features = request_features(text, "")
    # A feature of the request, or the meaning of its words (one contribution per block, "m:w:").
    assert all(c.feature in features or c.feature in ("m:w:", "m:p:") for c in first.top)
    assert model.score(text).top == ()  # explanations cost nothing unless asked for


def test_meaning_weights_add_the_mean_of_their_block() -> None:
    """A block adds the mean of its words' meaning weights (shrunk by MEANING_PRIOR words of weight 0),
    not their sum: a long turn of mild words is not pushed further than a short one, and one word alone
    does not decide; the context's block counts as context."""
    model = ScorerModel(
        {"w:x": 0.5}, 0.0, 0.5, meaning={"w:": {"fix": 1.0, "bug": 3.0, "hi": -2.0}, "c:w:": {"proof": 4.0}}
    )
    k = MEANING_PRIOR  # words of weight 0 that every block counts besides its own
    assert model.logit(request_features("fix bug", "")) == pytest.approx((1.0 + 3.0) / (2 + k))
    assert model.logit(request_features("fix bug x", "")) == pytest.approx(0.5 + (1.0 + 3.0) / (2 + k))
    assert model.logit(request_features("fix bug hi", "")) == pytest.approx((1.0 + 3.0 - 2.0) / (3 + k))
    assert model.logit(request_features("nothing known", "")) == 0.0
    explained = model.score("fix bug", "a proof please", explain=3)
    assert {c.feature: c.weight for c in explained.top} == {"m:w:": 4.0 / (2 + k), "m:c:w:": 4.0 / (1 + k)}
    assert explained.context == 4.0 / (1 + k)
    assert {c.as_dict()["feature"] for c in explained.top} == {
        "meaning of the words",
        "context: meaning of the words",
    }


def test_the_blocks_of_a_request_are_its_features_by_table() -> None:
    """The scorer reads a request block by block (each weight table against its own block); training
    reads the same features as one set: the two agree on any text, and no feature is in two blocks."""
    rng = random.Random(7)
    vocabulary = "Prove that 7 apples cost $3 each? hi :) lol the bot said\n\nSummarise this: a b".split(" ")
    for _ in range(200):
        newest = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 60)))
        if rng.random() < 0.3:
            newest = "Summarise this:\n\n" + newest * 8
        context = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 30)))
        blocks = split_features(newest, context)
        assert set(blocks) == set(TABLES)
        assert all(table_of(f) == name for name, block in blocks.items() for f in block)
        assert split_blocks(request_features(newest, context)) == blocks
        assert featurize_blocks(newest).union() == featurize(newest)


def test_a_long_texts_word_blocks_are_damped() -> None:
    """Beyond ``damping`` distinct words in a block, the block's sum is multiplied by sqrt(damping /
    size), and so is each of its features in an explanation; the shape and the meaning blocks are not."""
    assert damping(3, 4.0) == 1.0 and damping(4, 4.0) == 1.0 and damping(16, 4.0) == pytest.approx(0.5)
    assert damping(100, None) == 1.0 and damping(100, 0) == 1.0
    weights = {"w:fix": 1.0, "w:bug": 2.0, "b:fix bug": 0.5, "s:len=<40": 0.25, "c:w:proof": 4.0}
    plain = ScorerModel(weights, 0.0, 0.5)
    damped = ScorerModel(weights, 0.0, 0.5, damping=2.0)
    text = "fix bug now please"  # 4 words, 3 pairs
    undamped = 1.0 + 2.0 + 0.5 + 0.25
    assert plain.logit(request_features(text, "")) == pytest.approx(undamped)
    expected = (1.0 + 2.0) * math.sqrt(2 / 4) + 0.5 * math.sqrt(2 / 3) + 0.25
    assert damped.logit(request_features(text, "")) == pytest.approx(expected)
    assert damped.logit(request_features("fix bug", "")) == pytest.approx(undamped)  # 2 words, 1 pair
    meaning = ScorerModel(weights, 0.0, 0.5, meaning={"w:": {"fix": 3.0}}, damping=2.0)
    mean = 3.0 / (1 + MEANING_PRIOR)  # a mean already: not damped
    assert meaning.logit(request_features(text, "")) == pytest.approx(expected + mean)
    context = "a proof of it"  # the context's 4 words: its block damped apart
    got = damped.score(text, context, explain=2)
    assert got.context == pytest.approx(4.0 * math.sqrt(2 / 4))
    assert got.score == pytest.approx(1 / (1 + math.exp(-(expected + got.context))))
    assert {c.feature: c.weight for c in got.top} == pytest.approx(
        {"c:w:proof": 4.0 * math.sqrt(2 / 4), "w:bug": 2.0 * math.sqrt(2 / 4)}
    )


# ---- the shipped model on the prompts the routing design names ---------------------------------------------

SHOULD_BE = [
    (
        "Alice, Bob and Claire each hold a present: a red ball, a blue ball, a green ball. Alice swaps with "
        "Bob, then Claire swaps with Alice, then Bob swaps with Claire. Which ball does Bob hold at the end?",
        "autoregressive",
    ),
    (
        "A train leaves at 9:40 and the trip takes 2 h 35 min with a 20 min stop. When does it arrive?",
        "autoregressive",
    ),
    ("Explain why the sky is blue, in one sentence.", "diffusion"),
    ("Give me a 20-minute work out I can do at home.", "diffusion"),
    ("What proof of address do I need to open a UK bank account?", "diffusion"),
    ("Plan a simple dinner menu for 12/25/2024 for six people.", "diffusion"),
    ("How do I build a home library on a budget?", "diffusion"),
    ("Tell me a riddle for my 6-year-old.", "diffusion"),
    (
        "A bat and a ball cost $1.10 in total; the bat costs $1.00 more than the ball. How much is the ball?",
        "autoregressive",
    ),
    ("What is the last digit of 7 raised to the power 2024?", "autoregressive"),
    (
        "My React useEffect runs twice and double-posts to my API. Why, and how do I fix it?",
        "autoregressive",
    ),
    ("Beweise, dass es unendlich viele Primzahlen gibt.", "autoregressive"),
]


# Requests the keyword policy caught before the scorer replaced it: they must still go to the
# autoregressive backend.
SHOULD_BE += [
    ("Write a function that merges two sorted lists", "autoregressive"),
    ("Please refactor my Rust parser for speed", "autoregressive"),
    ("Prove that the square root of 2 is irrational.", "autoregressive"),
    ("Compute \\int_0^1 x^2 dx", "autoregressive"),
]


@pytest.mark.parametrize(("prompt", "expected"), SHOULD_BE, ids=[p[:40] for p, _ in SHOULD_BE])
def test_issue_15_prompts_route_as_they_should(model: ScorerModel, prompt: str, expected: str) -> None:
    backend, reasons = route(user(prompt), model)
    assert backend == expected, reasons
    kind = "hard" if expected == "autoregressive" else "default"
    assert any(r.startswith(f"{kind}:score=") for r in reasons), reasons


@pytest.mark.parametrize("reply", ["yes", "ok", "sure", "thanks!", "hi", "x", "no way", "why?"])
def test_a_one_word_reply_is_not_decided_by_its_word_alone(model: ScorerModel, reply: str) -> None:
    """A word's meaning weight can be large (+-18); a block's mean counts MEANING_PRIOR words of weight
    0 besides its own, so one word alone does not send a chat reply to the slow backend (before that,
    "yes" scored 0.66 and "x" 0.99)."""
    backend, reasons = route(user(reply), model)
    assert backend == "diffusion", reasons


def test_a_hard_task_in_the_system_prompt_counts(model: ScorerModel) -> None:
    system = (
        "You are a logic tutor. Alice, Bob and Claire each hold a ball: red, blue, green. Alice swaps "
        "with Bob, then Claire swaps with Alice, then Bob swaps with Claire. Solve it with the student."
    )
    payload = {"messages": [{"role": "system", "content": system}, {"role": "user", "content": "go ahead"}]}
    backend, reasons = route(payload, model)
    assert backend == "autoregressive", reasons
    assert model.score("go ahead").score < model.threshold  # alone, the turn is easy
    assert extract_features(payload, "chat", model).difficulty.context > 0  # type: ignore[union-attr]


@pytest.mark.parametrize("turn", ["thanks Juno, you made my day", "good morning everyone!", "tell me a joke"])
def test_a_bot_behind_a_rule_list_keeps_its_small_talk_on_diffusion(model: ScorerModel, turn: str) -> None:
    """An operator's system prompt is a list of rules, which is how a hard task stated in a system
    prompt looks too; the chat under it stays on the fast backend, and a puzzle under it does not."""
    system = (
        "You are Juno, the chat assistant of the Northside running club.\n"
        "Rules:\n- Keep replies to two sentences.\n- Never share members' addresses.\n"
        "- If someone asks about race fees, point them to the club website.\n- Be upbeat."
    )
    chat = {"messages": [{"role": "system", "content": system}, {"role": "user", "content": turn}]}
    backend, reasons = route(chat, model)
    assert backend == "diffusion", reasons
    puzzle = (
        "Three runners finish: Ana is not first, Ben finishes after Cal, and Cal is not last. "
        "In what order did they finish?"
    )
    hard = {"messages": [{"role": "system", "content": system}, {"role": "user", "content": puzzle}]}
    assert route(hard, model)[0] == "autoregressive"


def test_a_follow_up_to_a_hard_turn_stays_hard(model: ScorerModel) -> None:
    hard = "Prove that the square root of 2 is irrational, step by step, and check every step."
    payload = {
        "messages": [
            {"role": "user", "content": hard},
            {"role": "assistant", "content": "Suppose sqrt(2) = p/q in lowest terms ..."},
            {"role": "user", "content": "now prove the converse"},
        ]
    }
    backend, reasons = route(payload, model)
    assert backend == "autoregressive", reasons
    small_talk = {
        "messages": [
            {"role": "user", "content": "hi! how are you today?"},
            {"role": "assistant", "content": "Great, thanks!"},
            {"role": "user", "content": "now tell me a fun fact about otters"},
        ]
    }
    assert route(small_talk, model)[0] == "diffusion"


def test_the_threshold_moves_the_decision(model: ScorerModel) -> None:
    payload = user("Give me a 20-minute work out I can do at home.")
    score = extract_features(payload, "chat", model).difficulty
    assert score is not None
    assert route(payload, model, threshold=min(0.99, score.score + 0.01))[0] == "diffusion"
    assert route(payload, model, threshold=max(0.01, score.score - 0.01))[0] == "autoregressive"


def test_without_the_scorer_plain_requests_are_default() -> None:
    features = extract_features(user("Prove there are infinitely many primes."), "chat")
    assert features.difficulty is None
    decision = decide(RouteInput(model="auto", features=features), [D, A], RoutingSettings())
    assert decision.reasons == ("default",) and decision.candidates[0] == "diffusion"


def test_structural_rules_come_before_the_score(model: ScorerModel) -> None:
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    backend, reasons = route({**user("hi"), "tools": [tool]}, model)
    assert backend == "autoregressive" and reasons[0] == "tool-heavy:tools"
    backend, reasons = route(user("What does this print?\n```python\nprint(1)\n```"), model)
    assert backend == "autoregressive" and "hard:code" in reasons


# ---- model files ---------------------------------------------------------------------------------------


_TWO_HEADS = [{"name": "maths", "hard": True}, {"name": "chat", "hard": False}]
_COLUMNS = {"keys": "w:prove", "heads": ["3.0", "-3.0"]}


def _model_bytes(**overrides: Any) -> bytes:
    data: dict[str, Any] = {
        "format": FORMAT,
        "bias": -1.0,
        "threshold": 0.5,
        "context_weight": 0.9,
        "meta": {},
        "weights": {"w:prove": 3.0},
    }
    data.update(overrides)
    return gzip.compress(json.dumps(data).encode())


def test_a_model_file_round_trips(tmp_path: Path) -> None:
    model = parse_model(_model_bytes())
    path = tmp_path / "m.json.gz"
    model.save(path)
    again = load_model(path)
    assert again == model
    assert again.score("prove it").score > 0.5 > again.score("hello").score
    model.save(tmp_path / "n.json.gz")
    assert (tmp_path / "n.json.gz").read_bytes() == path.read_bytes()  # byte for byte
    with_meaning = parse_model(_model_bytes(meaning={"w:": {"hello": -2.5}}))
    with_meaning.save(path)
    assert load_model(path) == with_meaning and with_meaning != model
    assert with_meaning.score("hello").score < model.score("hello").score
    damped = parse_model(_model_bytes(damping=2))
    damped.save(path)
    assert load_model(path) == damped and load_model(path).damping == 2.0 and damped != model
    long = "prove it now for me please"
    assert damped.score(long).score < model.score(long).score  # w:prove counts sqrt(2/6) of itself


def test_a_model_of_several_heads_scores_the_hard_heads_share(tmp_path: Path) -> None:
    """Each head is a logistic model of its group of categories; the score is the hard heads' share of
    their probabilities, the decisive logit the leading hard head's less the leading easy head's, and a
    format-2 file round-trips."""
    heads = (Head("maths", True), Head("code", True), Head("chat", False))
    model = ScorerModel(
        {"w:prove": (2.0, -1.0, -2.0), "w:hello": (-1.0, -1.0, 3.0), "c:none": (0.5, 0.0, 0.25)},
        (-1.0, -2.0, 0.0),
        0.5,
        meaning={"w:": {"prove": (1.0, 0.0, -1.0)}},
        heads=heads,
    )

    def sigmoid(x: float) -> float:
        return 1 / (1 + math.exp(-x))

    k = MEANING_PRIOR
    z = [-1.0 + 2.0 + 0.5 + 1.0 / (1 + k), -2.0 - 1.0 + 0.0, 0.0 - 2.0 + 0.25 - 1.0 / (1 + k)]
    got = model.score("prove", explain=2)
    p = [sigmoid(v) for v in z]
    assert got.score == pytest.approx((p[0] + p[1]) / sum(p))
    assert model.logit(request_features("prove", "")) == pytest.approx(z[0] - z[2])
    assert got.context == pytest.approx(0.5 - 0.25)
    assert got.top[0].feature == "w:prove" and got.top[0].weight == pytest.approx(2.0 - -2.0)
    assert model.score("hello").score < 0.5 < got.score
    path = tmp_path / "heads.json.gz"
    model.save(path)
    assert json.loads(gzip.decompress(path.read_bytes()))["format"] == FORMAT_HEADS
    assert load_model(path) == model and load_model(path).heads == heads


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"not gzip, not json", "not a gzip'd JSON model file"),
        (gzip.compress(b"{broken"), "not a gzip'd JSON model file"),
        (_model_bytes(format="other/2"), "expected 'gateway-router/1'"),
        (_model_bytes(weights={}), "holds no weights"),
        (_model_bytes(weights={"w:x": "heavy"}), "malformed"),
        (_model_bytes(weights={"w:x": float("nan")}), "not a finite number"),
        (_model_bytes(weights={"w:x": 2e6}), "out of range"),
        (_model_bytes(threshold=1.5), "out of range"),
        (_model_bytes(bias=None), "malformed"),
        (_model_bytes(meaning={"q:": {"a": 1.0}}), "malformed meaning weights"),
        (_model_bytes(damping=0), "damping 0: a number of words"),
        (_model_bytes(damping="many"), "damping 'many'"),
        (_model_bytes(damping=True), "damping True"),
        (_model_bytes(meaning={"w:": {"a": "much"}}), "malformed"),
        (_model_bytes(meaning={"w:": {"a": float("inf")}}), "not a finite number"),
        (_model_bytes(format=FORMAT_HEADS), "malformed heads"),
        (_model_bytes(format=FORMAT_HEADS, heads=[{"name": "a", "hard": True}]), "an easy one"),
        (_model_bytes(format=FORMAT_HEADS, heads=_TWO_HEADS), "malformed"),  # not in columns
        (_model_bytes(format=FORMAT_HEADS, heads=_TWO_HEADS, weights=_COLUMNS), "1 weights for 2 heads"),
        (
            _model_bytes(
                format=FORMAT_HEADS, heads=_TWO_HEADS, bias=[0, 0], weights=_COLUMNS | {"heads": ["1"]}
            ),
            "2 column",
        ),
        (
            _model_bytes(
                format=FORMAT_HEADS, heads=_TWO_HEADS, bias=[0, 0], weights=_COLUMNS | {"heads": ["1", "a"]}
            ),
            "malformed",
        ),
    ],
)
def test_a_bad_model_file_is_a_clear_error(raw: bytes, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        parse_model(raw, "routing model x")


def test_a_missing_model_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"cannot read routing model .*nope\.json\.gz"):
        load_model(tmp_path / "nope.json.gz")


# ---- settings ------------------------------------------------------------------------------------------


def test_scorer_settings_validate() -> None:
    assert ScorerSettings().model == "default" and ScorerSettings().threshold is None
    for bad in (0.0, 1.0, -0.2, 3):
        with pytest.raises(ValidationError):
            ScorerSettings(threshold=bad)
    with pytest.raises(ValidationError, match="was removed: the difficulty scorer"):
        RuleConditions.model_validate({"math": True})
    with pytest.raises(ValidationError):
        RuleConditions(min_score=1.5)


def test_rules_can_use_the_score(model: ScorerModel) -> None:
    policy = RoutingSettings.model_validate(
        {"rules": [{"name": "sure", "when": {"min_score": 0.0, "max_score": 1.0}, "backend": "diffusion"}]}
    )
    features = extract_features(user("hello"), "chat", model)
    decision = decide(RouteInput(model="auto", features=features, threshold=0.5), [D, A], policy)
    assert decision.reasons == ("rule:sure",)
    hard_rule = RoutingSettings.model_validate(
        {"rules": [{"name": "hard", "when": {"hard": True}, "backend": "diffusion"}]}
    )
    easy = decide(RouteInput(model="auto", features=features, threshold=0.99), [D, A], hard_rule)
    assert "rule:hard" not in easy.reasons
    unscored = extract_features(user("hello"), "chat")
    none = decide(RouteInput(model="auto", features=unscored), [D, A], policy)
    assert "rule:sure" not in none.reasons  # no score: a score condition does not hold
