# ruff: noqa: E501 (prompt templates read best as one line each)
"""Hard prompts that need a chain of reasoning in plain words: causal and counterfactual questions,
algorithm and concurrency analysis without code, and multi-step planning under constraints.

Over 400 lines on purpose: mostly templates and word lists, each beside the generator that uses it.
"""

from __future__ import annotations

import itertools
import math
import random

from gateway_training.generators.hard_common import (
    LICENCE,
    NAMES,
    Messages,
    ask,
    conversation,
    maybe_words,
    number_word,
    pick,
    sample,
)
from gateway_training.sources import Source

__all__ = ["SOURCES"]

# (cause 1, cause 2, "both needed" mechanism, "either suffices" mechanism, intermediate, outcome, distractor)
_CAUSAL = (
    (
        "{p} switched on the kettle",
        "{p}'s flatmate started the tumble dryer",
        "The old fuse only blows when the load is higher than either appliance draws on its own",
        "Each of the two appliances draws enough on its own to trip the old fuse",
        "the fuse blew",
        "the freezer was off all night and the food in it spoiled",
        "the hall light had a flickering bulb",
    ),
    (
        "the sprinkler timer was set to run overnight",
        "it rained heavily in the evening",
        "The bed only gets waterlogged when it gets both the rain and the sprinkler water",
        "Either a night of sprinkling or a heavy rain alone waterlogs that bed",
        "the vegetable bed was waterlogged by morning",
        "the tomato roots rotted",
        "a neighbour's cat walked across the lawn",
    ),
    (
        "a config change removed the cache size limit",
        "traffic tripled after a marketing email",
        "Memory only runs out when the unbounded cache meets heavy traffic; either alone stays within limits",
        "Either change on its own is enough to exhaust the memory",
        "the service ran out of memory",
        "checkout was down for twenty minutes",
        "a developer renamed a log field the same morning",
    ),
    (
        "the bridge was closed for repairs",
        "a big football match ended at rush hour",
        "The ring road only jams when both happen together; each alone just slows it",
        "Either event on its own is enough to jam the ring road",
        "the ring road jammed",
        "the ambulance arrived late",
        "the weather was sunny",
    ),
    (
        "the supplier shipped the parts a week late",
        "the warehouse had run down its safety stock",
        "The line only stops when a late delivery meets empty shelves",
        "Either a late delivery or an empty warehouse alone stops the line",
        "the assembly line stopped",
        "the hospital's order missed its deadline",
        "the company changed its logo that month",
    ),
    (
        "{p} skipped breakfast",
        "{p} went for a long run in the midday heat",
        "{p} only gets dizzy when an empty stomach and heavy exercise come together",
        "Either skipping a meal or running in that heat alone makes {p} dizzy",
        "{p}'s blood sugar dropped",
        "{p} fainted on the way home",
        "{p} was wearing new shoes",
    ),
    (
        "{p}'s alarm clock battery died",
        "the early bus was cancelled",
        "{p} only misses the start when both the alarm and the bus let them down",
        "Either a dead alarm or a cancelled bus alone would make {p} miss the start",
        "{p} reached the hall after the doors closed",
        "{p} had to resit the exam in autumn",
        "{p} had forgotten an umbrella",
    ),
    (
        "the night nurse forgot to refill the humidifier",
        "the heating was turned up",
        "The seedlings only dry out when dry air and extra heat combine",
        "Either dry air or the extra heat on its own dries the seedlings out",
        "the greenhouse air became very dry",
        "most seedlings wilted",
        "the greenhouse door had been repainted",
    ),
)


def _causal(rng: random.Random) -> Messages:
    person = pick(rng, NAMES)
    c1, c2, both, either, mid, out, noise = (t.format(p=person) for t in pick(rng, _CAUSAL))
    conj = rng.random() < 0.5
    facts = [
        f"{c1[0].upper() + c1[1:]}.",
        f"{c2[0].upper() + c2[1:]}.",
        f"{(both if conj else either)}.",
        f"As a result {mid}, and so {out}.",
        f"Also, {noise}.",
    ]
    if rng.random() < 0.5:
        facts[0], facts[1] = facts[1], facts[0]
    q = rng.random()
    target, other = (c1, c2) if rng.random() < 0.5 else (c2, c1)
    if q < 0.35:
        question = pick(
            rng,
            (
                f"If it were not the case that {target}, would it still be true that {out}?",
                f"Suppose that this time it was not true that {target}. What would have happened instead?",
                f"What if {other}, as before, but it were not the case that {target}?",
            ),
        )
        result = (
            "no, the outcome would have been avoided" if conj else "yes, the other cause alone was enough"
        )
    elif q < 0.55:
        question = f"Would preventing the fact that {noise} have changed anything? Why or why not?"
        result = "no, it is not on the causal chain"
    elif q < 0.8:
        question = pick(
            rng,
            (
                "What was the real cause of the outcome? Distinguish causes from coincidences.",
                "Which of these events were necessary for the outcome, and which were sufficient?",
                "Who or what is to blame, and would fixing a single thing have been enough?",
            ),
        )
        result = (
            "both causes together were needed"
            if conj
            else "each cause alone was sufficient, neither was necessary"
        )
    else:
        question = f"Trace the chain of events from the start to the point where {out}. What is the earliest point where one change would have avoided it?"
        result = (
            "either of the two initial events"
            if conj
            else "only by preventing both initial events, or the intermediate step"
        )
    body = " ".join(facts) + pick(rng, (" ", "\n")) + question
    return conversation(
        rng,
        ask(rng, body),
        answer=f"Following the chain: {result}.",
        followups=(
            "and if both had been prevented?",
            "What if the mechanism were the other way round (either one alone sufficient)?",
            "now explain it to a ten-year-old but keep the logic",
            "Is there a case where the distractor could matter?",
        ),
    )


# --- algorithms and concurrency, in words --------------------------------------------------------------------


def _algorithms(rng: random.Random) -> Messages:
    thing = pick(
        rng,
        (
            "customer records",
            "log lines",
            "song titles",
            "sensor readings",
            "email addresses",
            "order ids",
            "street names",
        ),
    )
    n = pick(rng, ("a million", "ten thousand", "fifty million", "a few hundred thousand", "n"))
    k = rng.randint(2, 64)
    a, b = sample(rng, NAMES, 2)
    templates = (
        f"Our service moves money between accounts. Each transfer locks the sender's account first, then the receiver's, then moves the money and unlocks both. Sometimes two transfers hang forever, for example when {a} pays {b} at the same moment {b} pays {a}. Explain exactly why, and give a fix that keeps both locks.",
        f"We have {number_word(k % 6 + 3)} worker threads and a shared queue. A producer takes the queue lock, and if the queue is full it waits for space while still holding the lock. Consumers need that same lock to take items out. Why does the system sometimes stop completely, and how would you redesign it?",
        "Two database transactions run at the same time: one updates the inventory row and then the orders row, the other updates the orders row and then the inventory row. Under what interleaving does the database report a deadlock, and which of the two gets rolled back?",
        f"A function takes a list of {n} {thing}. For each entry it walks over the whole list again to count how many times that entry appears, then keeps the ones that appear more than once. How does its running time grow with the list size, and how would you get it to grow linearly?",
        f"Why does growing an array by doubling its capacity give appends that cost constant time on average, while growing it by a fixed {number_word(k)} slots each time does not? Give the total cost of {n} appends in both cases.",
        f"I have {maybe_words(rng, 3 ** rng.randint(2, 5) - rng.randint(0, 5))} coins that look the same and one of them is lighter than the others. With a balance scale and no weights, what is the smallest number of weighings that always finds the light coin, and why can't you do better?",
        f"Two web servers both handle a 'like' button: each reads the like count from the database, adds one, and writes it back. After {maybe_words(rng, k * 100)} likes from each server the count is lower than it should be. Why, and what are two different ways to fix it?",
        f"A cache keeps the {number_word(k)} most recently used pages. A batch job reads {number_word(k + 1)} different pages in the same order over and over. What hit rate does it get, and would a cache that evicts a random page do better?",
        f"A hash table uses a hash function that, by mistake, sends every key to the same bucket. What does inserting {n} {thing} cost in total, and what does looking one up cost?",
        f"Is it possible to find the median of {n} {thing} without sorting them? What is the best running time you can achieve and roughly how does the method work?",
        f"Someone computes the {k % 30 + 20}th Fibonacci number with the plain recursive definition. Roughly how many calls does that make, why is it so slow, and what is the smallest change that makes it fast?",
        f"I need to answer {maybe_words(rng, k * 1000)} membership questions against a fixed list of {n} {thing}. Is it better to sort once and binary-search each time, or to scan the list for every question? Where is the crossover?",
        f"A binary search on a sorted list of {thing} sometimes loops forever when the list has exactly two elements left. The midpoint is computed by rounding down, and when the middle element is too small the lower bound is set to the midpoint. Why does it loop, and what is the fix?",
        f"{number_word(k % 5 + 3).capitalize()} philosophers sit at a round table with one fork between each pair. Each picks up the left fork, then the right. Why can they all starve, and which small rule change prevents it?",
    )
    body = pick(rng, templates)
    followups = next(
        (f for key, f in _ALGO_FOLLOWUPS if key in body),
        ("and what's the space cost?", "what if n were tiny, does it matter?", "prove it"),
    )
    return conversation(
        rng,
        ask(rng, body),
        answer="The key is the order in which resources or steps are taken; analysing the worst interleaving or input shows the bound.",
        followups=followups,
    )


# Follow-ups that make sense after a template, found by a phrase of the template.
_ALGO_FOLLOWUPS = (
    (
        "locks the sender",
        (
            "what about a transfer chain of three accounts?",
            "prove that your fix can't deadlock",
            "and without ordering the locks?",
        ),
    ),
    (
        "queue lock",
        ("now make it lock-free", "what if there are two queues?", "prove the new design can't stall"),
    ),
    (
        "database transactions",
        (
            "and with three transactions?",
            "how would you avoid it in the application?",
            "what if both used row versioning instead?",
        ),
    ),
    (
        "philosophers",
        (
            "prove the fix is deadlock-free",
            "and does your fix prevent starvation too?",
            "now with one fork fewer",
        ),
    ),
    (
        "coins",
        (
            "and if you don't know whether it's lighter or heavier?",
            "now for twice as many coins",
            "prove the lower bound",
        ),
    ),
    (
        "like count",
        ("what if there were ten servers?", "which fix scales better?", "and with a cache in front?"),
    ),
    (
        "Fibonacci",
        ("and the memory use of your fix?", "can you do it in logarithmic time?", "prove the call count"),
    ),
)


# --- planning under constraints ----------------------------------------------------------------------------------

_CROSSING = (
    ("a wolf", "a goat", "a cabbage"),
    ("a fox", "a hen", "a sack of grain"),
    ("a dog", "a cat", "a bowl of cream"),
    ("a python", "a rabbit", "a crate of carrots"),
)


def the(phrase: str) -> str:
    return "the " + phrase.split(" ", 1)[1]


def _crossing(rng: random.Random) -> tuple[str, str]:
    pred, prey, food = pick(rng, _CROSSING)
    who = pick(rng, ("A farmer", "A ferryman", "A zookeeper", "My uncle"))
    craft = pick(rng, ("a rowing boat", "a tiny raft", "a canoe"))
    q = f"{who} must get {pred}, {prey} and {food} across a river using {craft} that holds the rower plus one of them. Left alone together, {the(pred)} would go for {the(prey)}, and {the(prey)} would go for {the(food)}. How can everything cross safely, and what is the fewest number of crossings?"
    return q, "Seven crossings, taking the middle one over first and bringing it back once."


def _a(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def _jugs(rng: random.Random) -> tuple[str, str]:
    a, b = sample(rng, (3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13), 2)
    target = rng.randint(1, max(a, b) - 1)
    possible = target % math.gcd(a, b) == 0
    q = pick(
        rng,
        (
            f"I have {_a(number_word(a))}-litre jug and {_a(number_word(b))}-litre jug, no markings, and a tap. How do I measure exactly {number_word(target)} litres?",
            f"With only an unmarked {a}-litre bucket and an unmarked {b}-litre bucket, is it possible to end up with exactly {target} litres in one of them? If so, give the shortest sequence of pours.",
        ),
    )
    return q, (
        "It can be done by repeated filling and pouring."
        if possible
        else "It cannot be done: every reachable amount is a multiple of the greatest common divisor."
    )


def _torch(rng: random.Random) -> tuple[str, str]:
    times = sorted(sample(rng, range(1, 26), 4))
    t1, t2, t3, t4 = times
    best = min(t1 + 2 * t2 + t4, 2 * t1 + t3 + t4)
    people = sample(rng, NAMES, 4)
    q = f"Four hikers reach a rope bridge at night with one torch. At most two can cross at once, and whoever crosses must carry the torch. {people[0]} needs {number_word(t1)} minutes, {people[1]} {number_word(t2)}, {people[2]} {number_word(t3)} and {people[3]} {number_word(t4)}; a pair moves at the slower one's pace. What is the shortest total time to get everyone over, and in what order?"
    return q, f"{best} minutes."


def _errands(rng: random.Random) -> tuple[str, str]:
    places = sample(
        rng,
        (
            ("the post office", "closes at noon"),
            ("the pharmacy", "opens at 2 pm"),
            ("the bank", "closes at 1 pm"),
            ("the tailor", "is open only 10 to 11"),
            ("the library", "opens at 3 pm"),
            ("the garage", "needs the car dropped before 9"),
        ),
        4,
    )
    kid = pick(
        rng,
        ("pick up my daughter at 3:30", "be home for a delivery between 1 and 2", "walk the dog at 12:30"),
    )
    travel = rng.randint(10, 30)
    q = (
        "Tomorrow I have to visit "
        + ", ".join(f"{p} (it {c})" for p, c in places)
        + f", and I also need to {kid}. Each errand takes about {number_word(rng.randint(15, 40))} minutes and getting between any two places takes {number_word(travel)} minutes. I leave home at 8:30. Give me an order that works, or tell me which errand can't fit."
    )
    return q, "Order the errands by their deadlines, checking each opening window as you go."


def _knapsack(rng: random.Random) -> tuple[str, str]:
    items = sample(
        rng,
        (
            "tent",
            "stove",
            "camera",
            "books",
            "water filter",
            "sleeping bag",
            "laptop",
            "guitar",
            "first-aid kit",
            "tripod",
        ),
        rng.randint(5, 7),
    )
    weights = [rng.randint(1, 9) for _ in items]
    values = [rng.randint(1, 10) for _ in items]
    cap = sum(weights) // 2
    best = max(
        (
            c
            for r in range(len(items) + 1)
            for c in itertools.combinations(range(len(items)), r)
            if sum(weights[i] for i in c) <= cap
        ),
        key=lambda c: sum(values[i] for i in c),
    )
    listing = "; ".join(
        f"{it}: {w} kg, worth {v} to me" for it, w, v in zip(items, weights, values, strict=True)
    )
    q = f"My backpack can carry at most {cap} kg. Options: {listing}. Which items should I take to get the most total worth without going over the limit?"
    return q, "Take " + ", ".join(items[i] for i in best) + "."


def _towers(rng: random.Random) -> tuple[str, str]:
    n = rng.randint(3, 7)
    q = pick(
        rng,
        (
            f"There are {number_word(n)} crates of different sizes stacked on pallet A, biggest at the bottom. I must move the stack to pallet C, using pallet B in between, one crate at a time and never putting a bigger crate on a smaller one. What's the minimum number of moves and what is the first move?",
            f"A robot must move a stack of {number_word(n)} rings from the left peg to the right peg, moving one ring at a time, never a larger ring on a smaller one. How many moves does it need at least, and why can't it be done in fewer?",
        ),
    )
    return q, f"{2**n - 1} moves."


_PLAN_KINDS = (_crossing, _jugs, _torch, _errands, _knapsack, _towers)


def _planning(rng: random.Random) -> Messages:
    q, a = pick(rng, _PLAN_KINDS)(rng)
    return conversation(
        rng,
        ask(rng, q),
        answer="Planning it step by step under the constraints: " + a,
        followups=(
            "now with one more item",
            "and if the boat could carry two?",
            "what if one of them is twice as slow?",
            "is your plan optimal? prove it",
            "now do it for 5 people",
        ),
    )


SOURCES: tuple[Source, ...] = (
    Source("gen:causal", "hard", "reasoning", LICENCE, _causal),
    Source("gen:algorithms", "hard", "reasoning", LICENCE, _algorithms),
    Source("gen:planning", "hard", "reasoning", LICENCE, _planning),
)
