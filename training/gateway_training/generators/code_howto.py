"""Hard: programming requests told in prose, in three shapes the other code sources do not write.

"How do I <task> in <language>?" questions (the everyday shape of a programming question), a code
review where the asker describes their code in words instead of pasting it, and migration or port
requests between stacks. None has a fence, a backtick or a signature for the structural rules to catch,
so the scorer has to learn them from their wording; each shape is one source so that the
leave-one-source-out evaluation can hold one out and still train on the other code sources.
"""

from __future__ import annotations

import random

from gateway_training.generators.code_common import LICENCE, surface
from gateway_training.sources import Messages, Source

__all__ = ["SOURCES"]

_LANGS = (
    "Python", "JavaScript", "TypeScript", "Go", "Rust", "Java", "C#", "Kotlin", "C++", "Ruby", "PHP",
    "Swift", "Elixir", "Scala", "Node", "bash",
)  # fmt: skip

# --- how-to questions ---------------------------------------------------------------------------------

_TASKS = (
    "read a huge log file line by line without loading it all into memory",
    "parse command-line flags with default values",
    "make an HTTP request with a timeout and retry it twice",
    "sort a list of records by two fields, one ascending and one descending",
    "run two database queries at the same time and wait for both",
    "hash and check passwords properly",
    "watch a folder and react when a new file appears",
    "send an email with a PDF attachment",
    "run a job every night at 2 am",
    "fake the current time in a unit test",
    "read settings from environment variables with fallbacks",
    "stream a large download to the client instead of buffering it",
    "validate an incoming JSON body against a schema",
    "memoise an expensive function with an expiry",
    "unit test a function that calls a third-party API",
    "shut down cleanly on Ctrl+C and finish the job in progress",
    "upload a big file to S3 in chunks",
    "compare two timestamps from different time zones",
    "deep copy a nested structure",
    "limit downloads to five at a time",
    "split a list into batches of 100",
    "generate a random token that is safe for password resets",
    "read an Excel sheet and write it out as CSV",
    "detect the encoding of a text file before reading it",
    "pretty-print a nested dictionary as an indented tree",
    "measure how long each function call takes",
    "resize images while keeping their aspect ratio",
    "paginate results from a REST API that returns a next-page cursor",
    "write a websocket client that reconnects when the connection drops",
    "lock a file so two processes don't write to it at once",
)
_HOWTO = (
    "How do I {task} in {lang}?",
    "What's the cleanest way to {task} in {lang}?",
    "In {lang}, how would I go about it if I need to {task}?",
    "Is there a built-in way in {lang} to {task}, or do I write it myself?",
    "{lang} newbie here. How can I {task}?",
    "What's the idiomatic {lang} approach to {task_ing}?",
    "Best way to {task} using {lang}? Performance matters.",
    "how would you {task} in {lang}",
    "Could you show me how to {task}? We use {lang}.",
    "I need to {task}. What would that look like in {lang}?",
)


def _ing(task: str) -> str:
    """ "read a file" -> "reading a file", for the one template that needs a gerund."""
    verb, _, rest = task.partition(" ")
    if verb.endswith("e") and not verb.endswith("ee"):
        verb = verb[:-1]
    elif verb in ("run", "split", "set"):
        verb += verb[-1]
    return f"{verb}ing {rest}"


def _howto(rng: random.Random) -> Messages:
    task = _TASKS[rng.randrange(len(_TASKS))]
    template = _HOWTO[rng.randrange(len(_HOWTO))]
    text = template.format(task=task, task_ing=_ing(task), lang=_LANGS[rng.randrange(len(_LANGS))])
    return surface(rng, text)


# --- code review described in words -------------------------------------------------------------------

_WHAT_IT_DOES = (
    "My function takes a list of orders, loops over them, and for each one asks the database for "
    "the customer",
    "I have one class that reads the config file, opens the database connection, fetches every row "
    "and writes the report",
    "Our checkout handler reserves stock, charges the card and then sends the email, all in one long method",
    "I wrote a recursive function that walks a folder tree and collects file sizes into a global list",
    "The service keeps every user session in a plain dictionary in memory and never removes anything",
    "I catch every exception at the top of the request handler and just log 'something went wrong'",
    "Our login code compares the submitted password with the stored one using a normal string comparison",
    "I build the SQL for the search page by gluing the user's filters into one string",
    "The importer reads the whole 2 GB CSV into a list before it inserts anything",
    "Each React page fetches the same user profile on its own when it mounts",
    "My retry loop calls the payment API again right away, up to ten times, when it fails",
    "The cron script copies yesterday's files, deletes the originals, then checks whether the copy worked",
    "I use a boolean flag shared between two threads to tell the worker to stop",
    "Every microservice has its own copy of the date-formatting helpers, slightly different in each",
    "We parse dates from the API with a hand-written split on slashes",
)
_CONCERN = (
    "A reviewer said it won't scale.",
    "My lead called it a code smell but didn't say why.",
    "It works, but it feels wrong.",
    "Tests pass, yet production had an incident last week.",
    "Someone on the team says it's a security hole.",
    "It's getting slower every month as we grow.",
    "",
)
_REVIEW_ASK = (
    "What would you change, and in what order?",
    "Can you review this design and suggest a better structure?",
    "What are the bugs waiting to happen here?",
    "How would you refactor it without breaking callers?",
    "Is my reviewer right? What should the code look like instead?",
    "Give me a concrete plan for fixing it.",
    "What tests should I add before touching it?",
)


def _review(rng: random.Random) -> Messages:
    lang = _LANGS[rng.randrange(len(_LANGS))]
    what = _WHAT_IT_DOES[rng.randrange(len(_WHAT_IT_DOES))]
    if rng.random() < 0.5:
        what += f" ({lang})"
    concern = _CONCERN[rng.randrange(len(_CONCERN))]
    ask = _REVIEW_ASK[rng.randrange(len(_REVIEW_ASK))]
    text = " ".join(p for p in (what + ".", concern, ask) if p)
    return surface(rng, text)


# --- migrations and ports -----------------------------------------------------------------------------

_MOVES = (
    ("Python 2", "Python 3"),
    ("jQuery", "React"),
    ("AngularJS", "Vue 3"),
    ("a REST API", "gRPC"),
    ("MySQL", "PostgreSQL"),
    ("cron jobs on one VM", "Kubernetes CronJobs"),
    ("callbacks", "async/await"),
    ("a monolith", "a few services"),
    ("Java 8", "Java 21"),
    ("Jenkins", "GitHub Actions"),
    ("Objective-C", "Swift"),
    ("Flask", "FastAPI"),
    ("Webpack", "Vite"),
    ("a MongoDB collection", "relational tables"),
    ("Perl scripts", "Go"),
    ("class components", "hooks"),
    ("a hand-rolled ORM", "SQLAlchemy"),
    ("Celery", "a managed queue"),
    ("on-premise servers", "AWS Lambda"),
    ("REST polling", "websockets"),
)
_SIZE = (
    "about {n}0 thousand lines",
    "{n} developers working on it daily",
    "no tests to speak of",
    "decent test coverage",
    "customers on it around the clock",
    "a hard deadline in {n} months",
    "a team that has never used the new stack",
)
_PORT = (
    "We need to move our {what} from {old} to {new}. It has {size}. How should we plan the port?",
    "Porting our {what} from {old} to {new}: what usually breaks, and how do we do it step by step?",
    "What's a safe way to migrate our {what} from {old} to {new} without downtime? We have {size}.",
    "My manager wants our {what} off {old} and on {new} this quarter. Which parts would you port "
    "first and why?",
    "Can we run {old} and {new} side by side while we move our {what} over? What would that look like?",
    "Thinking of rewriting our {what} in {new} (currently {old}, with {size}). Migrate in place or rewrite?",
)
_WHAT = ("billing service", "admin dashboard", "data pipeline", "mobile backend", "internal tools", "shop")


def _port(rng: random.Random) -> Messages:
    old, new = _MOVES[rng.randrange(len(_MOVES))]
    size = _SIZE[rng.randrange(len(_SIZE))].format(n=rng.randint(2, 9))
    text = _PORT[rng.randrange(len(_PORT))].format(
        what=_WHAT[rng.randrange(len(_WHAT))], old=old, new=new, size=size
    )
    return surface(rng, text)


SOURCES: tuple[Source, ...] = (
    Source("gen:code-howto", "hard", "code", LICENCE, _howto),
    Source("gen:code-review-words", "hard", "code", LICENCE, _review),
    Source("gen:code-port", "hard", "code", LICENCE, _port),
)
