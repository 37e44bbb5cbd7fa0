"""Hard: programming trouble told in words, and small pieces of code quoted inline (no fence).

Error messages paraphrased or quoted in a sentence, build and deploy failures, "what does this line do"
with the line in backticks or quotes: a family of code requests apart from code_questions.py, so that
either can be held out in the leave-one-source-out evaluation with the other still teaching the model.
"""

from __future__ import annotations

import random

from gateway_training.sources import Messages, Source

__all__ = ["SOURCES"]

_LICENCE = "Apache-2.0 (this project)"

_ERRORS = [
    "permission denied when my script writes to /var/log/app.log",
    "'module not found' for a package I just installed with pip",
    "a segmentation fault as soon as I call the C extension",
    "'cannot read properties of undefined (reading map)' in the browser console",
    "a 502 from nginx only when the upload is bigger than 1 MB",
    "an out-of-memory kill of the container after an hour",
    "'address already in use' when I restart the server",
    "a CORS error although the API sends Access-Control-Allow-Origin",
    "'detached HEAD' after I checked out a tag, and now my commits are gone",
    "a deadlock detected error from Postgres during the nightly import",
    "'too many open files' under load",
    "a timezone bug: timestamps are one hour off since the clocks changed",
    "the docker build fails at the step that installs requirements",
    "a flaky test that only fails on the CI runner",
    "the app crashes on start with 'port is not an integer'",
]
_ERROR_ASKS = [
    "I keep getting {e}. What causes it and how do I fix it?",
    "Getting {e} — any idea why?",
    "How do I debug {e}?",
    "We see {e} in production. Where would you start looking?",
    "Since yesterday: {e}. Nothing changed in the code. Ideas?",
    "{e}... I've tried restarting. What else?",
]
_LINES = [
    "x = [i * i for i in range(10) if i % 2]",
    "const total = items.reduce((a, b) => a + b.price, 0)",
    "SELECT name, COUNT(*) FROM orders GROUP BY name HAVING COUNT(*) > 2",
    "git rebase -i HEAD~3",
    "for f in *.png; do convert $f ${f%.png}.jpg; done",
    "df.groupby('city')['sales'].transform('mean')",
    "re.sub(r'(\\d+)-(\\d+)', r'\\2-\\1', s)",
    "awk -F, '{sum += $3} END {print sum}' data.csv",
    "Promise.all(urls.map(fetch)).then(rs => rs.map(r => r.json()))",
    "kubectl rollout undo deployment/web",
    "chmod -R 755 /srv/www && chown -R www-data /srv/www",
    "let v: Vec<_> = s.split(',').map(|x| x.trim()).collect();",
]
_LINE_ASKS = [
    "What does `{l}` do exactly?",
    "Can you explain this line: {l}",
    'Is "{l}" correct, or is there a bug in it?',
    "How would I make `{l}` faster?",
    "Rewrite `{l}` so a beginner can read it.",
    "What's the output of `{l}` and why?",
]


def _error(rng: random.Random) -> Messages:
    text = rng.choice(_ERROR_ASKS).format(e=rng.choice(_ERRORS))
    return [{"role": "user", "content": text[0].upper() + text[1:]}]


def _line(rng: random.Random) -> Messages:
    text = rng.choice(_LINE_ASKS).format(l=rng.choice(_LINES))
    if rng.random() < 0.15:
        return [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": text},
        ]
    return [{"role": "user", "content": text}]


SOURCES = (
    Source("gen:code-errors", "hard", "code", _LICENCE, _error),
    Source("gen:code-inline", "hard", "code", _LICENCE, _line),
)
