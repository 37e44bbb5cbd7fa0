"""Short maths requests in notation: equations, sums, limits, integrals, congruences, sequences.

Homework and competition problems are often one line of symbols: short, hardly a sentence, and nothing
like the chatty short requests the easy side is full of. Written as a student types them, in ASCII
(x^2, sqrt(x), a*b) or with a little LaTeX or Unicode. (No template copies one of the CHAMP problems
of bench/routing_eval.py, though their misses were read; docs/scorer.md says so beside that figure.)
"""

from __future__ import annotations

import random

from gateway_training.sources import Messages, Source

__all__ = ["SOURCES"]

_LICENCE = "Apache-2.0 (this project)"
_V = ["x", "y", "n", "t", "k", "a"]


def _poly(rng: random.Random, v: str) -> str:
    degree = rng.choice([2, 3, 4])
    terms = [f"{v}^{degree}"]
    for d in range(degree - 1, -1, -1):
        c = rng.randint(-9, 9)
        if c == 0:
            continue
        power = f"{v}^{d}" if d > 1 else (v if d == 1 else "")
        sign = "+" if c > 0 else "-"
        terms.append(f"{sign}{abs(c) if abs(c) != 1 or not power else ''}{power}")
    return "".join(terms)


def _problem(rng: random.Random) -> str:
    v = rng.choice(_V)
    a, b, c = rng.randint(2, 30), rng.randint(2, 2024), rng.randint(2, 99)
    p = _poly(rng, v)
    choices = [
        f"Solve {p}=0.",
        f"Find all real {v} with {p} = {rng.randint(-5, 20)}.",
        f"Find the maximum of {a}sin({v})+{c}cos({v}).",
        f"Compute the sum 1^{a % 5 + 2}+2^{a % 5 + 2}+...+n^{a % 5 + 2} in closed form.",
        f"lim_{{{v}->0}} (sin({a}{v}) - {a}{v})/{v}^3 = ?",
        f"Evaluate \\int_0^{a % 4 + 1} {v}^{c % 4 + 1} e^{{{v}}} d{v}",
        f"\\sum_{{k=1}}^{{{b}}} 1/(k(k+1)) = ?",
        f"For which {v} is {a}{v}^2 - {c}{v} + {b % 50} > 0?",
        f"Find f({b % 100}) if f(x+1) = f(x) + {a}x and f(0) = {c}.",
        f"gcd({a * c}, {b * c + a})?",
        f"{a}x ≡ {c} (mod {b % 97 + 3}), solve for x",
        f"Show that n^{a % 5 + 3} - n is divisible by {a % 5 + 3} for every integer n.",
        f"Determine all integers n such that n^2+{a}n+{c} is a perfect square.",
        f"Let a_1={a}, a_{{n+1}}=a_n^2-{c % 5 + 1}. Find a_{{{b % 9 + 3}}} mod {c}.",
        f"Prove that sqrt({a * a + 1}) is irrational.",
        f"det [[{a}, {c % 10}], [{b % 10}, {a % 7}]] and its inverse?",
        f"P(X ≥ {a % 5 + 1}) for X ~ Bin({a + 5}, 0.{c % 9 + 1})?",
        f"How many solutions does x+y+z={a} have in non-negative integers?",
        f"Find the remainder of {a}^{b} divided by {c % 11 + 2}.",
        f"If x+1/x={a % 6 + 2}, find x^{c % 4 + 3}+1/x^{c % 4 + 3}.",
    ]
    return rng.choice(choices)


_WRAP = ["{p}", "{p}", "{p}", "{p} Show your work.", "quick one: {p}", "Help: {p}", "{p} (homework)"]


def _draw(rng: random.Random) -> Messages:
    text = rng.choice(_WRAP).format(p=_problem(rng))
    if rng.random() < 0.15:
        return [
            {
                "role": "system",
                "content": rng.choice(["You are a maths tutor.", "You are a helpful assistant."]),
            },
            {"role": "user", "content": text},
        ]
    return [{"role": "user", "content": text}]


SOURCES = (Source("gen:math-notation", "hard", "math", _LICENCE, _draw),)
