# ruff: noqa: E501 (prompt templates read best as one line each)
"""Hard maths: proof requests (in words or with notation) and competition-style problems (last digits,
remainders, divisors, counting, probability), with the answers computed for multi-turn examples.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from fractions import Fraction

from gateway_training.generators.hard_common import (
    LICENCE,
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


def _statements(rng: random.Random) -> list[tuple[str, str]]:
    """(in words, with notation) pairs; several draw their own parameters."""
    p = pick(rng, (3, 5, 7, 11, 13))
    k = rng.randint(2, 6)
    m = rng.randint(3, 12)
    q = pick(rng, (2, 3, 5, 6, 7, 10, 11, 15))
    return [
        ("the sum of two odd numbers is always even", "if a and b are odd integers then a + b is even"),
        ("the product of two consecutive whole numbers is always even", "n(n+1) is even for every integer n"),
        ("if the square of a whole number is even, the number itself is even", "n^2 even implies n even"),
        (
            "a whole number cubed minus the number itself is always divisible by six",
            "6 | n^3 - n for all n in Z",
        ),
        (
            "adding up the first however-many odd numbers always gives a perfect square",
            "1 + 3 + ... + (2n-1) = n^2",
        ),
        ("the sum of the first n whole numbers is n times n plus one, halved", "sum_{i=1}^{n} i = n(n+1)/2"),
        (f"the square root of {number_word(q)} is not a fraction", f"sqrt({q}) is irrational"),
        ("there is no largest prime number", "the set of primes is infinite"),
        (
            "there are infinitely many primes that leave remainder three when divided by four",
            "infinitely many primes p ≡ 3 (mod 4)",
        ),
        (
            f"among any {number_word(m + 1)} whole numbers, two of them differ by a multiple of {number_word(m)}",
            f"any {m + 1} integers contain a, b with {m} | a - b",
        ),
        (
            f"any whole number raised to the power {number_word(p)}, minus the number itself, is divisible by {number_word(p)}",
            f"{p} | n^{p} - n for every integer n",
        ),
        (
            "a number is divisible by nine exactly when the sum of its digits is",
            "9 | n iff 9 | s(n), s the digit sum",
        ),
        (
            f"the product of any {number_word(k)} consecutive whole numbers is divisible by {k} factorial",
            f"{k}! divides n(n+1)...(n+{k - 1})",
        ),
        ("two to the power n is bigger than n squared once n is at least five", "2^n > n^2 for n >= 5"),
        (
            "the average of two positive numbers is never less than the square root of their product",
            "(a+b)/2 >= sqrt(ab) for a, b > 0",
        ),
        ("two consecutive whole numbers never share a common factor bigger than one", "gcd(n, n+1) = 1"),
        ("a perfect square always leaves remainder zero or one when divided by four", "n^2 mod 4 ∈ {0, 1}"),
        (
            "a number that leaves remainder three when divided by four can never be the sum of two squares",
            "n ≡ 3 (mod 4) implies n ≠ a^2 + b^2",
        ),
        ("a set with n elements has two to the n subsets", "|P(S)| = 2^|S|"),
        (
            "at any party of six people there are three who all know each other or three who are all strangers",
            "R(3,3) <= 6",
        ),
        (
            "at any party, the number of people who shook an odd number of hands is even",
            "the number of odd-degree vertices of a finite graph is even",
        ),
        ("the logarithm of three to base two is irrational", "log_2 3 is irrational"),
        (
            "a tree with n vertices has exactly one edge fewer than vertices",
            "a tree on n vertices has n - 1 edges",
        ),
        (
            "if one number divides a second and the second divides a third, the first divides the third",
            "a | b and b | c imply a | c",
        ),
        (
            "the diagonals of a parallelogram cut each other in half",
            "the diagonals of a parallelogram bisect each other",
        ),
        (
            f"if the square of a whole number is divisible by {number_word(p)}, so is the number itself",
            f"{p} | n^2 implies {p} | n",
        ),
    ]


_PROOF_ASKS = (
    "Prove that {s}.", "Show that {s}.", "Can you give me a rigorous proof that {s}?", "Why is it always true that {s}? I want a proof, not examples.",
    "Give a proof by induction or otherwise that {s}.", "I need a clean proof that {s}, for my number theory class.", "prove: {s}",
    "Demonstrate that {s}, step by step.", "Is it true that {s}? Prove it or give a counterexample.",
)  # fmt: skip


def _proofs(rng: random.Random) -> Messages:
    words, notation = pick(rng, _statements(rng))
    statement = notation if rng.random() < 0.4 else words
    body = pick(rng, _PROOF_ASKS).format(s=statement)
    return conversation(
        rng,
        ask(
            rng,
            body,
            closings=(
                "",
                "",
                "",
                " Keep it short.",
                " Explain each step.",
                " Write it so a first-year student can follow.",
                " Use LaTeX.",
            ),
        ),
        answer=f"Proof sketch: we write the objects in general form and show that {words} follows; the key step is a parity, remainder or induction argument. ∎",
        followups=(
            "prove the converse",
            "Now generalise it.",
            "is the converse true?",
            "can you do it without induction?",
            "and for three numbers?",
            "make it more rigorous",
        ),
        p_followup=0.2,
    )


# --- competition-style problems ------------------------------------------------------------------------------


def _last_digit(rng: random.Random) -> tuple[str, str]:
    a = rng.choice((2, 3, 7, 8, 9, 12, 13, 17, 18, 19, 23, 27, 33))
    b = rng.randint(50, 3000)
    two = rng.random() < 0.3
    if two:
        return pick(
            rng, (f"What are the last two digits of {a} to the power {b}?", f"Find {a}^{b} mod 100.")
        ), f"{pow(a, b, 100):02d}"
    return pick(
        rng,
        (
            f"What is the units digit of {maybe_words(rng, a)} raised to the power of {b}?",
            f"Which digit does {a}^{b} end in?",
            f"If you multiply {maybe_words(rng, a)} by itself {b} times, what is the last digit?",
        ),
    ), str(pow(a, b, 10))


def _remainder(rng: random.Random) -> tuple[str, str]:
    a, b, m = rng.randint(2, 40), rng.randint(20, 999), rng.choice((3, 5, 7, 9, 11, 13, 17))
    if rng.random() < 0.5:
        return f"What is the remainder when {a} to the power {b} is divided by {number_word(m)}?", str(
            pow(a, b, m)
        )
    m1, m2 = sample(rng, (3, 4, 5, 7, 8, 9, 11), 2)
    while math.gcd(m1, m2) != 1:
        m1, m2 = sample(rng, (3, 4, 5, 7, 8, 9, 11), 2)
    r1, r2 = rng.randrange(m1), rng.randrange(m2)
    x = next(v for v in range(1, m1 * m2 + 1) if v % m1 == r1 and v % m2 == r2)
    return (
        f"A basket of eggs: taken out {number_word(m1)} at a time, {number_word(r1) if r1 else 'none'} {'is' if r1 <= 1 else 'are'} left over; taken out {number_word(m2)} at a time, {number_word(r2) if r2 else 'none'} {'is' if r2 <= 1 else 'are'} left over. What is the smallest number of eggs the basket could hold?",
        str(x),
    )


def _divisors(rng: random.Random) -> tuple[str, str]:
    n = rng.choice(
        (2 ** rng.randint(1, 5) * 3 ** rng.randint(0, 3) * 5 ** rng.randint(0, 2), rng.randint(100, 5000))
    )
    count = sum(1 for d in range(1, n + 1) if n % d == 0)
    fact = rng.randint(20, 200)
    zeros = sum(fact // 5**i for i in range(1, 5))
    return pick(
        rng,
        (
            (f"How many positive divisors does {n} have?", str(count)),
            (f"How many zeros are at the end of {fact} factorial?", str(zeros)),
            (
                f"How many whole numbers from 1 to {n} are divisible by neither {number_word(rng.choice((2, 3)))} nor {number_word(rng.choice((5, 7)))}?",
                "by inclusion-exclusion",
            ),
        ),
    )


def _probability(rng: random.Random) -> tuple[str, str]:
    kind = rng.randrange(4)
    if kind == 0:
        s = rng.randint(3, 11)
        ways = sum(1 for a in range(1, 7) for b in range(1, 7) if a + b == s and (a % 2 or b % 2))
        return (
            f"Two fair dice are thrown. What is the probability that the total is {number_word(s)}, given that at least one die shows an odd number?",
            str(Fraction(ways, 27)),
        )
    if kind == 1:
        r, b = rng.randint(2, 9), rng.randint(2, 9)
        p = Fraction(r * (r - 1) + b * (b - 1), (r + b) * (r + b - 1))
        return (
            f"A bag has {number_word(r)} red and {number_word(b)} blue marbles. I take out two without looking and without putting the first back. What are the chances they are the same colour?",
            str(p),
        )
    if kind == 2:
        k = rng.randint(2, 8)
        p = 1 - Fraction(5, 6) ** k
        return (
            f"If I roll a die {number_word(k)} times, what is the probability of getting at least one six?",
            str(p),
        )
    n = rng.randint(3, 6)
    return (
        f"{number_word(n).capitalize()} people put their hats in a box and each takes one back at random. What is the probability that nobody gets their own hat?",
        str(
            Fraction(
                sum(
                    1 for perm in itertools.permutations(range(n)) if all(i != v for i, v in enumerate(perm))
                ),
                math.factorial(n),
            )
        ),
    )


_LETTER_WORDS = (
    "BANANA",
    "LETTER",
    "COMMITTEE",
    "MISSISSIPPI",
    "BALLOON",
    "STATISTICS",
    "PEPPER",
    "ACCESS",
    "SUCCESS",
    "ADDRESS",
)


def _combinatorics(rng: random.Random) -> tuple[str, str]:
    kind = rng.randrange(5)
    if kind == 0:
        w = pick(rng, _LETTER_WORDS)
        n = math.factorial(len(w))
        for c in Counter(w).values():
            n //= math.factorial(c)
        return f"In how many different ways can the letters of the word {w} be arranged?", str(n)
    if kind == 1:
        men, women, k = rng.randint(3, 8), rng.randint(3, 8), rng.randint(3, 5)
        total = math.comb(men + women, k) - math.comb(men, k) - math.comb(women, k)
        return (
            f"A committee of {number_word(k)} is chosen from {number_word(men)} men and {number_word(women)} women. In how many ways can it be chosen if it must include at least one man and at least one woman?",
            str(total),
        )
    if kind == 2:
        a, b = rng.randint(3, 8), rng.randint(3, 8)
        return (
            f"A city is a grid of streets. To get from my home to the office I must go {number_word(a)} blocks east and {number_word(b)} blocks north, never going west or south. How many different shortest routes are there?",
            str(math.comb(a + b, a)),
        )
    if kind == 3:
        s = rng.randint(5, 20)
        count = sum(1 for v in range(100, 1000) if sum(map(int, str(v))) == s)
        return f"How many three-digit numbers have digits that add up to {number_word(s)}?", str(count)
    n = rng.randint(5, 12)
    return (
        f"{number_word(n).capitalize()} people sit around a round table. In how many ways can they be seated if two particular people refuse to sit next to each other (rotations count as the same)?",
        str(math.factorial(n - 1) - 2 * math.factorial(n - 2)),
    )


_COMP_KINDS = (_last_digit, _remainder, _divisors, _probability, _combinatorics)


def _competition(rng: random.Random) -> Messages:
    q, a = pick(rng, _COMP_KINDS)(rng)
    return conversation(
        rng,
        ask(rng, q),
        answer=f"Working it out: the answer is {a}.",
        followups=(
            "now the last three digits",
            "and if the order mattered?",
            "What if there were one more of each?",
            "can you prove that's the smallest?",
            "generalise to n",
        ),
    )


SOURCES: tuple[Source, ...] = (
    Source("gen:proofs", "hard", "math", LICENCE, _proofs),
    Source("gen:competition", "hard", "math-word", LICENCE, _competition),
)
