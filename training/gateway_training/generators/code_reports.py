"""Hard: software trouble reported from the outside: what users see, and how a described system performs.

code_questions.py names the failing part ("a context provider never fires"); these start from what a
customer, a support ticket or a dashboard shows (a double charge, a blank page, a p99 that tripled) and
the system around it, or from a developer's own "I did X, expected Y, got Z", and ask how to find and
fix the cause in the code. All need an engineer's reasoning about code they cannot see, which is where
the diffusion backend is weakest.
"""

from __future__ import annotations

import random
import re

from gateway_training.generators.code_common import LICENCE, surface
from gateway_training.sources import Messages, Source

__all__ = ["SOURCES"]

_STACKS = (
    "a Node backend with Postgres",
    "Django and MySQL",
    "a Go service behind nginx",
    "Rails with Sidekiq",
    "Spring Boot and Oracle",
    "a Next.js front end talking to a Python API",
    "Laravel with Redis",
    "an ASP.NET Core API and SQL Server",
    "a Flutter app with a Firebase backend",
    "FastAPI with SQLAlchemy",
    "Phoenix and Postgres",
    "an Express server on Lambda",
)

# --- bug reports from the user's side -----------------------------------------------------------------

_WHEN = (
    "they press back after paying",
    "they upload a photo taken on an iPhone",
    "two people edit the same document",
    "they change their email address",
    "they log in on a second device",
    "the clocks change for daylight saving",
    "they paste text with emojis into the name field",
    "their basket has more than {n}0 items",
    "they reset their password twice in a row",
    "they switch the app to French",
    "the mobile connection drops halfway through checkout",
    "they sign up with an address that has a plus sign in it",
)
_WHAT_HAPPENS = (
    "the order shows up twice and they get charged twice",
    "the page goes blank and nothing loads until they refresh",
    "one person's changes silently overwrite the other's",
    "they get logged out everywhere",
    "the dates on their invoices move by a day",
    "the total is off by a few cents",
    "they never receive the confirmation email",
    "the app freezes for {n} or {m} seconds",
    "they see somebody else's name in the header for a moment",
    "the upload spins forever",
)
_HOW_OFTEN = (
    "It only happens to a handful of users.",
    "We can't reproduce it locally.",
    "Support gets about {n} tickets a week about it.",
    "It started after last Tuesday's release.",
    "It happens maybe one time in {n}0.",
    "",
)
_REPORT = (
    "Customers tell us that when {when}, {what}. {often} We run {stack}. How would you track this "
    "down and fix it?",
    "Bug report from support: when {when}, {what}. {often} Stack is {stack}. Where in the code "
    "would you start?",
    "Users complain that {what} whenever {when}. {often} ({stack}.) What's the likely cause and the "
    "proper fix?",
    "Our testers found that if {when}, {what}. {often} It's {stack}. How do we debug it and stop it "
    "happening again?",
    "Some users say {what} after {when}, and my boss wants a fix today. {often} We're on {stack}. "
    "What do I look at first?",
)


def _bug_report(rng: random.Random) -> Messages:
    n = rng.randint(2, 9)
    slots = {"n": n, "m": n + rng.randint(1, 5)}
    text = _REPORT[rng.randrange(len(_REPORT))].format(
        when=_WHEN[rng.randrange(len(_WHEN))].format(**slots),
        what=_WHAT_HAPPENS[rng.randrange(len(_WHAT_HAPPENS))].format(**slots),
        often=_HOW_OFTEN[rng.randrange(len(_HOW_OFTEN))].format(**slots),
        stack=_STACKS[rng.randrange(len(_STACKS))],
    )
    text = " ".join(text.split())  # an empty {often} leaves a double space
    return surface(rng, text)


# --- performance of a described system ----------------------------------------------------------------

_SYSTEM = (
    "our search endpoint",
    "the nightly import job",
    "our public API",
    "the report export",
    "a queue worker that resizes images",
    "the feed on our home page",
    "our GraphQL gateway",
    "a service that computes shipping prices",
    "the analytics dashboard",
)
_SLOW = (
    "p99 latency went from {a} ms to {b} ms after we {change}",
    "it takes {s} seconds to return {k} rows",
    "CPU sits at 100 % on one core while the others idle",
    "memory climbs by about {k} MB an hour until the pod is killed",
    "throughput tops out at {k} requests per second no matter how many instances we add",
    "the job used to take {a} minutes and now takes {b}",
    "the database shows thousands of nearly identical queries per page view",
)
_CHANGE = (
    "added an ORM",
    "turned on request logging",
    "moved to a bigger instance",
    "switched JSON libraries",
    "added a feature flag check to every request",
    "upgraded the framework",
)
_PERF = (
    "On {stack}, {system}: {slow}. Where would you look first, and how would you fix it?",
    "{system} is slow: {slow}. It's {stack}. How do I find the bottleneck?",
    "Performance question. {system} ({stack}): {slow}. What are the usual causes, and what should I measure?",
    "We're seeing this with {system}: {slow}. {stack}. How would you profile and speed it up?",
    "How do I make {system} faster? {slow}, running {stack}.",
)


def _perf(rng: random.Random) -> Messages:
    a = rng.randint(3, 40) * 10
    slots = {
        "a": a,
        "b": a * rng.randint(3, 12),
        "s": rng.randint(3, 45),
        "k": rng.randint(2, 90) * 100,
        "change": _CHANGE[rng.randrange(len(_CHANGE))],
    }
    text = _PERF[rng.randrange(len(_PERF))].format(
        stack=_STACKS[rng.randrange(len(_STACKS))],
        system=_SYSTEM[rng.randrange(len(_SYSTEM))],
        slow=_SLOW[rng.randrange(len(_SLOW))].format(**slots),
    )
    # a sentence may start with a slot ("... faster? throughput tops out ..."): capitalise it
    text = re.sub(r"(^|[.?!] )([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)
    return surface(rng, text)


# --- what I did, what I expected, what happened instead (the developer's own report) -----------------

_DID = (
    ("I ran the database migration on staging", "the new column to show up", "the table looks unchanged"),
    ("I bumped the framework by one minor version", "nothing to change", "half the tests now fail to start"),
    ("I set the cache lifetime to {n} minutes", "fresh data after that", "users see old prices for hours"),
    ("I added a second worker process", "the queue to drain twice as fast", "jobs run twice"),
    ("I moved the app into a container", "it to behave the same", "it can't reach the database any more"),
    ("I switched the logger to write JSON", "the same lines in a new format", "some lines are missing"),
    ("I rebased my branch onto main", "a clean history", "my last {n} commits seem to have vanished"),
    ("I turned on HTTPS for the API", "the mobile app to keep working", "older phones can't connect"),
    ("I set a memory limit on the pod", "it to stay under the limit", "it restarts every few hours"),
    ("I reran the nightly export by hand", "yesterday's rows", "it exported today's rows twice"),
    ("I upgraded the database driver", "faster queries", "every request now opens a new connection"),
    ("I changed the server's time zone to UTC", "timestamps to line up", "reports are off by {n} hours"),
)
_TRIED = (
    "I've already cleared every cache I know of.",
    "Rolling back fixes it, so it's definitely that change.",
    "The logs show nothing unusual.",
    "It works on my machine, of course.",
    "A colleague looked and is as confused as me.",
    "",
)
_EXPECT = (
    "{did}. I expected {want}, but {got}. {tried} What's going on, and how do I fix it?",
    "{did}, expecting {want}. Instead {got}. {tried} Why?",
    "Expected: {want}. Actual: {got}. Context: {did}. {tried} Where's my mistake?",
    "So {did} and now {got}, when I expected {want}. {tried} How do I debug this?",
)


def _expected(rng: random.Random) -> Messages:
    did, want, got = _DID[rng.randrange(len(_DID))]
    n = str(rng.randint(2, 9))
    did, got = did.format(n=n), got.format(n=n)
    text = _EXPECT[rng.randrange(len(_EXPECT))].format(
        did=did,
        want=want,
        got=got,
        tried=_TRIED[rng.randrange(len(_TRIED))],
    )
    text = " ".join(text.split())  # an empty {tried} leaves a double space
    return surface(rng, text[0].upper() + text[1:])


SOURCES: tuple[Source, ...] = (
    Source("gen:code-bug-report", "hard", "code", LICENCE, _bug_report),
    Source("gen:code-perf", "hard", "code", LICENCE, _perf),
    Source("gen:code-expected", "hard", "code", LICENCE, _expected),
)
