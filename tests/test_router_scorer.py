"""The difficulty scorer: features, model files, the shipped model's verdicts, settings.

Accuracy figures live in the model card and the benches (gateway router train, bench/routing_ablation.py,
bench/routing_eval.py); these tests check behaviour: determinism, explanations, the prompts the routing
design names, context, the feature set's name, model files, errors and settings.
"""

from __future__ import annotations

import gzip
import json
import math
import random
import re
from array import array
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from gateway.errors import ModelError
from gateway.routing import BackendView, RouteInput, decide, extract_features
from gateway.routing.scorer import lexicons
from gateway.routing.scorer import text as text_module
from gateway.routing.scorer.load import FORMAT, dump_model, load_model, parse_model
from gateway.routing.scorer.model import ScorerModel
from gateway.routing.scorer.settings import ScorerSettings
from gateway.routing.scorer.text import HEAD_CHARS, TAIL_CHARS, featurize, split_payload
from gateway.routing.scorer.vector import BITS, FEATURE_SET, vectorize
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
    assert first.context == 0.0  # nothing before the turn
    assert len(first.top) == 5
    assert model.score(text).top == ()  # explanations cost nothing unless asked for
    # Each names what it stands for: a word or word pair of the turn, or a shape feature.
    assert all(c.feature.startswith(('"', "pasted ", "shape ")) for c in first.top), first.top
    assert any(c.feature == '"ball"' for c in model.score(text, explain=50).top)


@pytest.mark.parametrize(
    ("newest", "system", "earlier"),
    [
        ("Hi! How was your weekend?", "", ""),
        ("ok", "", ""),
        ("", "", ""),
        ("x x x y y", "Be nice. Be nice. Be nice.", "and 3 + 3? and 3 + 3?"),  # repeated buckets
        ("水箱有两个进水管，甲管单独注满需要6小时，乙管需要8小时。两管同时开，几小时注满？", "", ""),  # noqa: RUF001
        ("Summarise this:\n\n" + "The council met on Tuesday to discuss the budget. " * 80, "", ""),
        ("Prove that √2 is irrational. " * 200, "You are a maths tutor.", "What is a rational number?"),
        ("and now?", "Answer in French. " * 400, "Write a haiku about rain."),
    ],
    ids=["chat", "one-word", "empty", "repeats", "chinese", "pasted", "long-with-context", "long-system"],
)
def test_the_fused_score_is_the_vector_dotted_with_the_weights(
    model: ScorerModel, newest: str, system: str, earlier: str
) -> None:
    """Scoring without an explanation takes the fused path (no vector built); it gives what the vector
    dotted with the weights gives, which is what training fits."""
    a, b = model.calibration
    logit = a * model.logit_of(vectorize(newest, system, earlier)) + b
    fast = model.score(newest, system, earlier)
    assert fast.score == pytest.approx(1.0 / (1.0 + math.exp(-logit)), abs=1e-12)
    assert fast.context == pytest.approx(model.score(newest, system, earlier, explain=3).context, abs=1e-12)


def test_a_system_prompt_is_scored_once_and_kept_as_read(model: ScorerModel) -> None:
    """A bot's persona comes with every request: its share is worked out once per model and kept under
    the text as read, so two long prompts that differ only where the scorer does not read are one entry;
    a kept share is what the vector gives."""
    from gateway.routing.scorer import vector

    persona = "You are Pip, the cheerful helper of a hiking club's Telegram group. Keep it short. " * 3
    first = model.score("Hi! How was your weekend?", persona)
    kept = model._cache.system.cache_info()
    again = model.score("and tomorrow?", persona)
    assert model._cache.system.cache_info().hits == kept.hits + 1
    assert again.context == first.context
    other = model.score("Hi! How was your weekend?", "You are a strict maths tutor. Prove every claim.")
    assert other.context != first.context  # another persona is not taken for the kept one
    ends = "Answer in French. " * 100  # 1,800 characters at each end: the middle is not read
    long_a, long_b = ends + "Be brief. " * 500 + ends, ends + "Be formal and thorough. " * 300 + ends
    model.score("hi", long_a)
    kept = model._cache.system.cache_info()
    model.score("hi", long_b)
    assert model._cache.system.cache_info().hits == kept.hits + 1
    logit = model.logit_of(vectorize("hi", long_b))
    a, b = model.calibration
    assert model.score("hi", long_b).score == pytest.approx(1 / (1 + math.exp(-(a * logit + b))), abs=1e-12)
    assert model._cache.system.cache_info().maxsize == vector.SYSTEM_PROMPTS


def test_long_names_are_hashed_each_time_not_kept() -> None:
    """A word pair of two long runs of letters (a hash, a clause of Chinese) is thousands of characters:
    it is hashed each time, so one request cannot make the name caches hold megabytes."""
    from gateway.routing.scorer import vector

    long_pair = "t:b:" + "a" * 1500 + " " + "b" * 1500
    before = vector._named_cached.cache_info().currsize
    assert vector._named_bucket(long_pair) == vector._bucket(long_pair)
    assert vector._named_cached.cache_info().currsize == before
    feature = "b:" + "c" * 800 + " " + "d" * 800
    before = vector._text_cached.cache_info().currsize
    assert vector._text_bucket(feature) == vector._bucket("x:" + feature)
    assert vector._text_cached.cache_info().currsize == before
    sizes = vector._named_cached.cache_info().currsize, vector._text_cached.cache_info().currsize
    load_model().score("q" * 1500 + " " + "r" * 1500)  # its one pair, as a turn's and as a text feature
    assert (vector._named_cached.cache_info().currsize, vector._text_cached.cache_info().currsize) == sizes
    before = vector._named_cached.cache_info()
    assert vector._named_bucket("t:b:zyxwvu qponml") == vector._bucket("t:b:zyxwvu qponml")  # short: kept
    after = vector._named_cached.cache_info()
    assert after.currsize == before.currsize + 1 or before.currsize == after.currsize == vector.NAMES
    assert after.misses == before.misses + 1


def test_a_bucket_collision_in_a_block_of_names_counts_twice(model: ScorerModel) -> None:
    """Two names of a block in one bucket count 2 there, as the vector counts them: the shortcut for
    distinct buckets is not taken."""
    from collections import Counter

    from gateway.routing.scorer import vector

    w = model.weights
    a, b, c = [i for i in range(len(w)) if w[i]][:3]  # weighted buckets: a miscount would show
    for buckets in ([a, a, b], [a, b, c], [c]):
        expected = vector._weighted(Counter(buckets), 1.0, w)
        assert vector._named_part(iter(buckets), 1.0, w) == pytest.approx(expected, abs=1e-12)
    assert vector._named_part(iter([]), 1.0, w) == 0.0


def test_explanations_rank_by_size_whatever_the_sign(model: ScorerModel) -> None:
    """A chat turn's strongest features push towards easy: they come first, not the weak positive ones."""
    top = model.score("hi!! thanks so much, you made my day 😊 have a lovely evening", explain=8).top
    sizes = [abs(c.weight) for c in top]
    assert sizes == sorted(sizes, reverse=True)
    assert top[0].weight < 0 and any(c.weight > 0 for c in model.score("prove it", explain=8).top)


def test_no_always_present_bucket_is_explained(model: ScorerModel) -> None:
    """A shape group every request has one bucket of (its length, its number of questions...) has its
    common bucket folded into the bias: that bucket weighs 0 and is never named."""
    turns = ["hi", "What is the capital of France?", "Write a limerick about a cat.", "ok thanks"]
    named = {c.feature for t in turns for c in model.score(t, explain=40).top}
    for group in ("s:code_terms", "s:math_terms", "s:social_terms", "s:questions", "s:sentences"):
        zero = f"shape {group.replace(':', ' ', 1)}=0"
        assert zero not in named
    folded = [name for name, weight in model.shape.items() if weight == 0.0]
    assert "s:code_terms=0" in folded and "s:math_terms=0" in folded


def test_the_context_is_scored_apart_and_reported(model: ScorerModel) -> None:
    hard = "Prove that every bounded monotone sequence of real numbers converges."
    follow_up = "and the converse?"
    plain = model.score(follow_up)
    after = model.score(follow_up, earlier=hard)
    assert after.context > 0 and after.score > plain.score
    top = model.score(follow_up, earlier=hard, explain=10).top
    assert any(c.feature == "earlier turns" for c in top)


# The feature set's fingerprint: the features of fixed texts, hashed. Changing what vector.py, text.py or
# lexicons.py compute changes it; a model trained before would then read other features than it was
# trained on, so the change needs a new FEATURE_SET (and a retrained model) and a new line here.
FINGERPRINTS = {"ngram-shape/1": "0982e1709e00fe0ae87a4bd6bf404716357460ffcc5169c02c1270f7d1318489"}
_PROBES = [
    ("Alice swaps with Bob, then Claire swaps with Alice. Who holds the red ball? 3 km/h, 9:40", "", ""),
    (
        "summarise this:\n\n" + "Der Rat hat am Dienstag beschlossen, die Straßenbahn zu verlängern. " * 30,
        "",
        "",
    ),
    ("一个水池有两个进水管，甲管单独注满需要6小时。", "You are a friendly bot.", "hi there\nthanks!"),  # noqa: RUF001
    ("def f(x):\n    return x ** 2  # why is this slow?", "", "sort a list in O(n log n)"),
]


def fingerprint() -> str:
    import hashlib

    digest = hashlib.sha256()
    for newest, system, earlier in _PROBES:
        v = vectorize(newest, system, earlier)
        for part in v.parts():
            digest.update(repr(sorted((b, round(x, 9)) for b, x in part.items())).encode())
        digest.update(repr(sorted(v.shape)).encode())
    return digest.hexdigest()


def test_the_feature_set_has_a_new_name_whenever_the_features_change() -> None:
    assert fingerprint() == FINGERPRINTS[FEATURE_SET], (
        "the scorer's features changed: give FEATURE_SET in gateway/routing/scorer/vector.py a new name, "
        f"retrain the shipped model, and add the new fingerprint {fingerprint()} here"
    )


def test_a_model_of_another_feature_set_is_refused_at_load(tmp_path: Path, model: ScorerModel) -> None:
    other = ScorerModel(
        model.weights, model.shape, model.bias, scale=model.scale, feature_set="ngram-shape/0"
    )
    path = tmp_path / "old.bin.gz"
    path.write_bytes(dump_model(other))
    with pytest.raises(ModelError, match=r"trained on features 'ngram-shape/0'.*retrain it"):
        load_model(path)


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


@pytest.mark.parametrize("reply", ["yes", "ok", "sure", "thanks!", "hi", "no way", "why?", "go ahead"])
def test_a_one_word_reply_is_not_decided_by_its_word_alone(model: ScorerModel, reply: str) -> None:
    """A short reply has few features, each large once its block is scaled to unit length; the length
    counts a few features more than the block has (vector._PRIOR), so one word alone does not send a
    chat reply to the slow backend. (A lone "x" does go there: it names a variable as often as not.)"""
    backend, reasons = route(user(reply), model)
    assert backend == "diffusion", reasons


def test_the_system_prompt_weighs_by_the_task_it_states(model: ScorerModel) -> None:
    """A system prompt that states a hard task pushes towards the autoregressive backend and one that
    states an easy task (translating) towards the diffusion one; the newest turn still decides most
    (docs/scorer.md says how much)."""
    sql = (
        "You convert the user's request into a PostgreSQL query over tables orders(id, customer_id, "
        "total, created_at) and customers(id, name, city). Reply with the query only."
    )
    translate = "Translate everything the user writes into German. Do not answer it."
    turn = "customers from lyon who spent more than 500 last year"
    hard, easy = model.score(turn, system=sql), model.score(turn, system=translate)
    assert hard.context > 0 > easy.context
    assert hard.score > model.score(turn).score > easy.score
    payload = {"messages": [{"role": "system", "content": sql}, {"role": "user", "content": turn}]}
    assert extract_features(payload, "chat", model).difficulty.context == pytest.approx(hard.context)


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


def _small_model(**kw: Any) -> ScorerModel:
    """A model that knows one word: "prove" (its word feature, through the n-gram block)."""
    weights = array("f", bytes(4 << BITS))
    v = vectorize("prove")
    for bucket, value in v.ngrams.items():
        weights[bucket] = 4.0 / value / len(v.ngrams)
    return ScorerModel(weights, {"s:payload": 1.0}, -1.0, **kw)


def test_a_model_file_round_trips(tmp_path: Path) -> None:
    model = _small_model(calibration=(2.0, 0.5), threshold=0.4, meta={"trained": "today"})
    path = tmp_path / "m.bin.gz"
    path.write_bytes(dump_model(model))
    again = load_model(path)
    assert again.threshold == 0.4 and again.calibration == (2.0, 0.5) and again.meta == {"trained": "today"}
    assert again.shape == model.shape and again.bias == model.bias
    for text in ("prove it", "hello", "prove that 2 + 2 = 4"):
        assert again.score(text).score == pytest.approx(model.score(text).score, abs=1e-3)
    assert again.score("prove it").score > 0.5 > again.score("hello").score
    assert dump_model(again) == path.read_bytes()  # the same model, the same bytes


def test_the_calibration_maps_the_logit() -> None:
    raw = _small_model()
    scaled = _small_model(calibration=(0.5, -1.0))
    v = vectorize("prove it")
    logit = raw.logit_of(v)
    assert raw.score("prove it").score == pytest.approx(1 / (1 + math.exp(-logit)))
    assert scaled.score("prove it").score == pytest.approx(1 / (1 + math.exp(-(0.5 * logit - 1.0))))


def _file(header: dict[str, Any] | None = None, body: bytes | None = None) -> bytes:
    good = json.loads(gzip.decompress(dump_model(_small_model())).partition(b"\n")[0])
    text = json.dumps({**good, **(header or {})}).encode()
    return gzip.compress(text + b"\n" + (body if body is not None else bytes(2 << BITS)))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"not gzip", "not a gzip'd model file"),
        (gzip.compress(b"{broken\n"), "no readable header"),
        (_file({"format": "gateway-router/2"}), f"expected '{FORMAT}'"),
        (_file({"feature_set": "words/9"}), "trained on features 'words/9'"),
        (_file(body=bytes(10)), "holds 5 weights"),
        (_file({"threshold": 1.5}), "out of range"),
        (_file({"bias": None}), "malformed"),
        (_file({"calibration": [1.0]}), "malformed"),
        (_file({"shape": {"s:x": "heavy"}}), "malformed"),
        (_file({"scale": float("nan")}), "not a finite number"),
    ],
)
def test_a_bad_model_file_is_a_clear_error(raw: bytes, message: str) -> None:
    with pytest.raises(ModelError, match=re.escape(message) if "'" in message else message):
        parse_model(raw, "routing model x")


def test_a_missing_model_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"cannot read routing model .*nope\.bin\.gz"):
        load_model(tmp_path / "nope.bin.gz")


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


def test_the_word_cache_is_bounded_and_skips_long_runs() -> None:
    """The cache of each word's buckets holds short words only: a run of letters with no space (a clause
    of Chinese, a hash) is hashed each time, so one request cannot make a cache entry as large as itself."""
    from gateway.routing.scorer import vector

    before = vector._cached.cache_info()
    vectorize("a" * 3000)
    assert vector._cached.cache_info().currsize == before.currsize
    vectorize("zebrafish")
    assert vector._cached.cache_info().currsize > before.currsize or before.currsize == before.maxsize
    assert vector._cached.cache_info().maxsize == 1 << 14


def test_count_scales_name_each_count_as_its_bucket_label() -> None:
    """A shape count's feature is looked up in a table clamped at the last edge: every count, within the
    table and far past it, gets the name its bucket's label gives."""
    for scale, name, edges in (
        (text_module._CODE_TERMS, "code_terms", (1, 2, 4)),
        (text_module._CLOSING_QUESTION, "closing_question", (1, 4, 7)),
        (text_module._SENTENCES, "sentences", (1, 2, 4, 8, 16)),
        (text_module._LIST, "list", (1, 3, 6)),
        (text_module._ASKS_QUANTITY, "asks_quantity", (1, 2)),
    ):
        for count in (*range(70), 500, 10**6):
            assert scale[min(count, edges[-1])] == f"s:{name}={text_module._label(count, edges)}"
    assert text_module._label(3, (1, 2, 4)) == "2-3"
    assert text_module._label(1, (1, 2, 4)) == "1"
    assert text_module._label(9, (1, 2, 4)) == "4+"


# Texts whose every shape count passes its last edge, as an instruction with a pasted text ("ps:") and as
# one text ("s:"): each count is named by its top bucket, so a count clamped at the wrong edge shows.
_LINES = "\n".join(f"- step {i}: add 5 kg, then 3 km, then 2 hours!" for i in range(7))
_EVERY_COUNT = (
    "Write a python function and a sql query, refactor the class, debug the compiler, compute the integral "
    "and the derivative of the matrix; rewrite, shorten, paraphrase, proofread and summarise it; amazing, "
    "awesome, cool and cute, lol haha :) :D 😀!!! "
    "My friends Bob, Claire, Dave, Erin and Frank met at 9:40 on 12/03/2024 and paid $5 and 10% more. "
    "1+2=3, 4*5=20, 6-1=5, 7/7=1, x^2 + y^2, \\frac{1}{2} \\sum f(x) √2. How many apples? How many pears? "
    "Why? Who? What? One. Two. Three. Four. Five. Six. Seven. Eight. Nine. Ten. Eleven. Twelve. Thirteen. "
    "Fourteen. Fifteen. Sixteen. a, b, c, d, e, f, g, h, i.\n\n"
    + _LINES
    + "\n\nsome_var camelCase () => {} :: && ||\n\nmore\n\nand more"
)
_TOP_BUCKETS = [
    "arithmetic=4+", "asks_quantity=2+", "chatty=4+", "clock", "code=4+", "code_terms=4+", "code_verbs=4+",
    "commas=8+", "date", "domain_terms=4+", "list=6+", "math_terms=4+", "money", "names=5+", "notation=3+",
    "numbers=7+", "paragraphs=4+", "percent", "questions=4+", "sentences=16+", "social_terms=4+", "table",
    "transform_terms=4+", "with_unit=3+",
]  # fmt: skip


def test_every_shape_count_is_named_by_its_top_bucket_past_its_last_edge() -> None:
    pasted = text_module.featurize_blocks(
        _EVERY_COUNT + "\n\nAnd then, how many boxes in total would the seven friends carry home?"
    )
    assert {f for f in pasted.shape if f.startswith("ps:")} == {"ps:" + f for f in _TOP_BUCKETS}
    assert "s:closing_question=7+" in pasted.shape and "s:payload" in pasted.shape
    whole = text_module.featurize_blocks(
        "Please read all of this carefully. " * 10 + _EVERY_COUNT + " Thanks a lot, have a good day." * 10
    )
    assert whole.shape == {"s:" + f for f in _TOP_BUCKETS}


# The shipped model's scores of a sample of the training data, rounded and hashed: every 7th request of
# each collection of real prompts (some 30 languages, long pastes), each behind one of the held-out
# contexts in turn (bot personas, rules-style system prompts, greetings and earlier conversation), and
# once more with a system prompt longer than the scorer reads. Work that makes the scorer faster must
# leave every score as it was; a retrained model or a new recipe records its own digest here.
SCORES_DIGEST = "e5da26bda03a13c37a2c004ed7555ac8d39f07d6490df2ebbf644185e153e937"
_DATA = Path(__file__).resolve().parent.parent / "training" / "gateway_training" / "data"


def _corpus_sample() -> list[tuple[str, str, str]]:
    with gzip.open(_DATA / "contexts" / "eval.jsonl.gz", "rt", encoding="utf-8") as rows:
        contexts = [json.loads(line)["messages"] for line in rows]
    sample = []
    for path in sorted((_DATA / "real").glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as rows:
            for i, line in enumerate(rows):
                if i % 7:
                    continue
                context = contexts[len(sample) % len(contexts)]
                messages = context + json.loads(line)["messages"]
                turns = [m["content"] for m in messages if m["role"] == "user"]
                system = "\n".join(m["content"] for m in messages if m["role"] == "system")
                sample.append((turns[-1], system, "\n".join(turns[-3:-1])))
    sample += [(newest, "Answer in French. " * 300, "") for newest, _, _ in sample[::10]]
    return sample


def test_the_shipped_model_scores_the_corpus_sample_as_recorded(model: ScorerModel) -> None:
    import hashlib

    sample = _corpus_sample()
    assert len(sample) > 400
    scores = [f"{model.score(*request).score:.9f}" for request in sample]
    digest = hashlib.sha256(" ".join(scores).encode()).hexdigest()
    assert digest == SCORES_DIGEST, (
        f"the shipped model's scores of {len(sample)} corpus requests changed (digest {digest}): a faster "
        "scorer must score exactly as before; a retrained model or a new recipe records its new digest"
    )
