"""Programming requests written in plain words, without a code fence or a signature to catch.

Debugging a framework's behaviour, asking for a function, choosing a data structure: precise code is
where the diffusion backend is weakest, and no keyword list holds every way of asking. (The routing design's
own example prompts are regression tests, so none of them, nor their wording, is generated here.)
"""

from __future__ import annotations

import random

from gateway_training.sources import Messages, Source

__all__ = ["SOURCES"]

_LICENCE = "Apache-2.0 (this project)"

_STACKS = [
    ("React", ["useState", "useMemo", "a context provider", "React Router", "Suspense", "a custom hook"]),
    ("Django", ["a migration", "select_related", "a signal handler", "the ORM", "a class-based view"]),
    ("Flask", ["the app context", "a blueprint", "SQLAlchemy sessions", "Jinja templates"]),
    ("Spring Boot", ["a @Transactional method", "a bean", "JPA lazy loading", "a REST controller"]),
    ("Node.js", ["an async handler", "the event loop", "a stream pipe", "Express middleware"]),
    ("Go", ["a goroutine", "a channel", "a context cancel", "a mutex", "an http.Handler"]),
    ("Rust", ["the borrow checker", "a lifetime", "an Arc<Mutex>", "tokio::spawn", "a trait object"]),
    ("pandas", ["groupby", "a merge", "a MultiIndex", "apply with axis=1", "datetime parsing"]),
    ("Kubernetes", ["a readiness probe", "a ConfigMap", "an init container", "a HorizontalPodAutoscaler"]),
    ("PostgreSQL", ["a left join", "an index", "a window function", "a deadlock", "a CTE"]),
    ("Vue", ["a computed property", "a watcher", "v-model", "Pinia"]),
    ("Swift", ["SwiftUI state", "async/await", "Core Data", "a Combine publisher"]),
    ("Kotlin", ["a coroutine", "a Flow", "Room", "a ViewModel"]),
    ("TypeScript", ["a generic type", "a discriminated union", "type narrowing", "a mapped type"]),
    ("Python asyncio", ["a task group", "gather", "a cancelled task", "an event loop in a thread"]),
]
_SYMPTOMS = [
    "executes more often than expected",
    "never fires",
    "fires on every render",
    "leaks memory over a few hours",
    "returns stale data",
    "hangs under load",
    "is slow on large inputs",
    "throws only in production",
    "works locally but fails in CI",
    "sends the same request again on reload",
    "loses updates when two users save at once",
    "deadlocks now and then",
    "gives a different result on every run",
]
_QUESTIONS = [
    "In my {stack} app {part} {symptom}; what is going on?",
    "Why does {part} in {stack} {symptom}? What's the proper fix?",
    "I'm using {part} ({stack}) and it {symptom}. What am I doing wrong?",
    "{stack} question: {part} {symptom} since I upgraded. How should I debug this?",
    "how do i stop {part} from {gerund} in {stack}",
    "Our {stack} service: {part} {symptom}, only sometimes. Walk me through finding the cause.",
    "{part} {symptom} in my {stack} project — race condition? how to fix properly",
]
_TASKS = [
    "a function that merges overlapping intervals",
    "a function that checks whether a string is a valid IPv4 address",
    "an LRU cache with O(1) get and put",
    "a rate limiter that allows N requests per sliding minute",
    "a parser for simple arithmetic expressions with parentheses",
    "a function that finds the shortest path in a grid with walls",
    "a thread-safe queue with a timeout on pop",
    "a function that returns all permutations of a list without duplicates",
    "a retry helper with exponential backoff and jitter",
    "a function that detects a cycle in a directed graph",
    "a debounce utility",
    "a trie with insert, search and prefix count",
    "a function that converts Roman numerals to integers and back",
    "a CSV reader that handles quoted fields with commas",
    "a binary search that returns the first index not less than a target",
    "a function that validates a sudoku board",
    "a scheduler that runs tasks respecting their dependencies",
    "a diff of two lists that reports inserted and removed items",
]
_LANGS = ["Python", "JavaScript", "TypeScript", "Go", "Rust", "Java", "C#", "Kotlin", "C++", "Ruby"]
_WRITE = [
    "Write {task} in {lang}.",
    "Can you implement {task} in {lang}? Include tests.",
    "I need {task}, {lang} please, with edge cases handled.",
    "{lang}: {task}. Keep it efficient and explain the complexity.",
    "Implement {task}. Language: {lang}.",
    "give me {task} in {lang}",
    "How would you write {task} in {lang}, and what's its time complexity?",
]
_DESIGN = [
    "Should I use a {a} or a {b} to store {what} that I look up by {key} and iterate in order? Justify it.",
    "What's the time complexity of {op} on a {a}, and when does it degrade?",
    "Design the database schema for {domain}: which tables, keys and indexes, and why?",
    "How do I make {op} idempotent in a distributed system where {domain} messages can arrive twice?",
    "Explain how I'd shard {domain} data across servers without hot spots.",
]
_STRUCTS = ["hash map", "balanced tree", "skip list", "heap", "sorted array", "trie", "B-tree", "linked list"]
_DOMAINS = ["a ride-sharing app", "an online bookshop", "a chat service", "a bank ledger", "a ticketing site"]
_OPS = ["insertion", "deletion", "range queries", "the payment step", "order creation", "an upsert"]
_SYSTEMS = ["You are a senior software engineer.", "You are a helpful assistant.", "Answer concisely."]


def _user(rng: random.Random, text: str) -> Messages:
    if rng.random() < 0.2:
        return [{"role": "system", "content": rng.choice(_SYSTEMS)}, {"role": "user", "content": text}]
    return [{"role": "user", "content": text}]


def _debug(rng: random.Random) -> Messages:
    stack, parts = rng.choice(_STACKS)
    symptom = rng.choice(_SYMPTOMS)
    gerund = symptom.split(" ")[0].rstrip("s") + "ing " + " ".join(symptom.split(" ")[1:])
    text = rng.choice(_QUESTIONS).format(stack=stack, part=rng.choice(parts), symptom=symptom, gerund=gerund)
    return _user(rng, text[0].upper() + text[1:] if rng.random() < 0.8 else text.lower())


def _write(rng: random.Random) -> Messages:
    return _user(rng, rng.choice(_WRITE).format(task=rng.choice(_TASKS), lang=rng.choice(_LANGS)))


def _design(rng: random.Random) -> Messages:
    a, b = rng.sample(_STRUCTS, 2)
    text = rng.choice(_DESIGN).format(
        a=a,
        b=b,
        what=rng.choice(["user sessions", "prices", "events", "orders"]),
        key=rng.choice(["id", "timestamp", "name"]),
        op=rng.choice(_OPS),
        domain=rng.choice(_DOMAINS),
    )
    return _user(rng, text)


_VERBS = [
    "refactor",
    "optimise",
    "speed up",
    "port",
    "parallelise",
    "add unit tests to",
    "add type hints to",
    "profile",
    "make thread-safe",
    "fix the memory leak in",
    "clean up",
    "reduce the allocations in",
    "rewrite",
    "harden",
    "vectorise",
    "debug",
]
_ARTIFACTS = [
    "parser",
    "web scraper",
    "CLI tool",
    "REST client",
    "Dockerfile",
    "SQL query",
    "regex",
    "bash script",
    "CI pipeline",
    "React component",
    "Django model",
    "Kafka consumer",
    "Terraform module",
    "matrix multiplication",
    "image resizer",
    "login handler",
    "cron job",
    "state machine",
]
_PURPOSES = [
    "for speed",
    "so it handles unicode",
    "to stream instead of buffering",
    "to use async",
    "without breaking the API",
    "for readability",
    "to cut its memory use",
    "so it survives retries",
    "",
]
_TERSE = [
    "{verb} my {lang} {artifact} {purpose}",
    "Please {verb} my {artifact} {purpose}",
    "can you {verb} this {lang} {artifact} {purpose}?",
    "Help me {verb} our {artifact} ({lang}) {purpose}",
    "{verb} the {artifact} {purpose} — it's {lang}",
    "I want to {verb} a {lang} {artifact} {purpose}. Where do I start, concretely?",
]
_SNIPPETS = [
    "a regex that matches {thing}",
    "a SQL query that returns {report}",
    "a bash one-liner that {shell}",
    "a jq filter that {json}",
]
_THINGS = ["valid email addresses", "ISO dates", "hex colours", "UK postcodes", "semantic version numbers"]
_REPORTS = [
    "the top 3 customers by revenue per month",
    "users who ordered twice in one week",
    "the running total of sales per region",
    "each employee's manager's manager",
]
_SHELL = [
    "renames every .jpeg to .jpg recursively",
    "counts unique IPs in an access log",
    "finds the 10 largest files under a folder",
    "deletes branches already merged into main",
]
_JSON = ["flattens nested arrays of users", "sums the price of every item", "keeps only failed jobs"]
_SNIPPET_ASKS = ["Write {s}.", "I need {s}", "Give me {s}, and explain each part.", "{s}? please"]


def _terse(rng: random.Random) -> Messages:
    text = rng.choice(_TERSE).format(
        verb=rng.choice(_VERBS),
        lang=rng.choice(_LANGS),
        artifact=rng.choice(_ARTIFACTS),
        purpose=rng.choice(_PURPOSES),
    )
    text = " ".join(text.split()).replace(" ?", "?").replace(" .", ".")
    return _user(rng, text[0].upper() + text[1:] if rng.random() < 0.7 else text)


def _snippet(rng: random.Random) -> Messages:
    s = rng.choice(_SNIPPETS).format(
        thing=rng.choice(_THINGS),
        report=rng.choice(_REPORTS),
        shell=rng.choice(_SHELL),
        json=rng.choice(_JSON),
    )
    text = rng.choice(_SNIPPET_ASKS).format(s=s)
    return _user(rng, text[0].upper() + text[1:])


SOURCES = (
    Source("gen:code-debug", "hard", "code", _LICENCE, _debug),
    Source("gen:code-write", "hard", "code", _LICENCE, _write),
    Source("gen:code-design", "hard", "code", _LICENCE, _design),
    Source("gen:code-terse", "hard", "code", _LICENCE, _terse),
    Source("gen:code-snippets", "hard", "code", _LICENCE, _snippet),
)
