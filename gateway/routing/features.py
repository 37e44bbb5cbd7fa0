"""What the routing policy looks at in a request, read once, without I/O.

Structural facts (tools, an agent loop, fields the diffusion backend rejects, code in the text) are read
here; how hard the request is comes from the difficulty scorer (``gateway.routing.scorer``), which reads
the newest user turn and, below it, the context ``conversation`` builds: every system and developer
message, then the ``CONTEXT_TURNS`` (two) user turns before the newest, joined, of which the scorer reads
the first ``blocks.CONTEXT_CHARS`` (1,500) characters. Only the newest turn is scanned with the code
patterns (bounded to ``_SCAN_CHARS``); the history is checked with cheap substring tests, so a long
conversation costs little more than a short one.
"""

from __future__ import annotations

import itertools
import operator
import re
from dataclasses import dataclass
from typing import Any

from gateway.chat_view import asks_logprobs, content_kind
from gateway.routing.scorer.model import Difficulty, ScorerModel
from gateway.wire import DIFFUSION_UNSUPPORTED_SAMPLING

__all__ = [
    "CRASHING",
    "INCOMPATIBLE_PARAMS",
    "Conversation",
    "RequestFeatures",
    "conversation",
    "extract_features",
    "tool_choice_forced",
]

# Sampling parameters the diffusion backend answers with a 400 (docs/backends.md).
INCOMPATIBLE_PARAMS = DIFFUSION_UNSUPPORTED_SAMPLING
# What crashes the diffusion engine (images: https://github.com/vllm-project/vllm/issues/56712; logprobs:
# https://github.com/vllm-project/vllm/issues/45689), and any other content that
# is not text (audio, files, embeddings: a text-only engine has no way to take them): never sent there.
CRASHING = frozenset({"image", "media", "logprobs"})

_SCAN_CHARS = 8000
# The code patterns read the head and the tail of the scanned turn; a fence anywhere in it counts.
_CODE_HEAD, _CODE_TAIL = 3000, 1000


def _words(*alternatives: str) -> str:
    r"""``\b(?:a|b|...)``, written so that ``re`` can skip from one possible first letter to the next.

    ``re`` scans quickly only when every alternative of a pattern starts with a literal character; one
    leading ``\b`` made it try every alternative at every position (13x slower: 220 µs on 600 characters
    of prose, py-spy had feature extraction at ~10 % of the gateway's own CPU). The word boundary is
    checked by a one-character look-behind after the first letter instead, which matches the same text.
    """
    return "|".join(f"{a[0]}(?<=\\b{a[0]}){a[1:]}" for a in alternatives)


# The code patterns, each behind a substring it cannot match without, in groups behind one more: a
# pattern runs only on a turn that holds its anchor, found by ``str.find`` in C. One alternation of them
# all tried its word alternatives at every "d", "f", "c", "i", "a", "e" and "p" of the text: ~75 µs of
# the 8,000-character turn's 400 µs budget for prose that holds no code. The matches are
# the same: any alternative matching anywhere is a match of the alternation. A group's gate is a
# single character or a word every anchor in it holds (one character is found fastest, by memchr); an
# anchor is a substring, or a pattern that starts with a literal character.
_Anchored = tuple[tuple[str | re.Pattern[str], re.Pattern[str] | None], ...]


def _anchored(*pairs: tuple[str | re.Pattern[str], str | re.Pattern[str] | None]) -> _Anchored:
    return tuple((anchor, None if pattern is None else re.compile(pattern)) for anchor, pattern in pairs)


_CODE_PATTERNS: tuple[tuple[str, _Anchored], ...] = (
    (
        "(",
        _anchored(
            ("Traceback (most recent call last)", None),
            ("def ", _words(r"def \w+\s*\(")),
            ("function", _words(r"function\s+\w+\s*\(")),
            ("fn ", _words(r"fn \w+\s*\(")),
            ("public ", _words(r"public (?:static )?\w+ \w+\s*\(")),
            ("const ", _words(r"const \w+\s*=\s*\(")),
            ("at ", _words(r"at [\w.$]+\([\w.]+:\d+\)")),
        ),
    ),
    ("#", _anchored(("#include", r"#include\s*<"))),
    (
        "=",
        _anchored(
            ("=>", r"=>\s*\{"),
            (" = [", None),
            (" = {", None),
            ("let ", _words(r"let (?:mut )?\w+(?:: ?\w+<[^=\n]{0,40}| ?)= ")),
        ),
    ),
    # One line of code pasted without a fence or backticks ("Can you explain this line: df.groupby(
    # 'city')['sales'].mean()"): a method call, a shell variable or loop, a git revision, a Rust or
    # JavaScript binding, a shell "&&". None of them appears in the easy training sources' 10,390
    # requests, and the scorer's words alone score such lines low.
    (".", _anchored((".", r"\.(?<=\w\.)[A-Za-z_]\w*\("))),
    ("~", _anchored(("~", r"~(?<=\w~)\d"))),
    ("$", _anchored(("$", r"\$[{(]"))),
    # A shell loop or condition on one line: "; do ... done", "; then ... fi" (each half alone is prose).
    (";", _anchored((re.compile(r";[ ]?(?:done|fi)\b"), r";[ ]?(?:do|then)\b"))),
    ("&", _anchored((" && ", None))),
    ("[", _anchored(("error[E", _words(r"error\[E\d{4}\]")))),
    ("Error", _anchored(("TypeError:", _words("TypeError:")), ("ValueError:", _words("ValueError:")))),
    (
        "Exception",
        _anchored(("Exception in thread", None), ("NullPointerException", _words("NullPointerException"))),
    ),
    (
        "import ",
        # An import statement on a line of its own (Python, Java, Go, JavaScript). Not "import \w+"
        # anywhere: "How do I import a car from Japan?" or "the nightly import job" is not code, and
        # the rule sent such questions to the autoregressive backend as hard:code.
        _anchored(
            (
                "import ",
                re.compile(
                    r"^[ \t]*(?:import [\w.]+(?:[ \t]+as[ \t]+\w+)?[ \t]*;?[ \t]*$|import [(\"]"
                    r"|from [\w.]+ import \w|import .{1,80}? from ['\"])",
                    re.MULTILINE,
                ),
            )
        ),
    ),
    (
        "",
        _anchored(
            ("panicked at", None),
            ("class ", _words(r"class \w+\s*[:({]")),
            # A crash of native code, however it is cased ("getting a segmentation fault as soon as I
            # call the C extension": the capitalised form only sent that to diffusion).
            ("egmentation fault", None),
            ("egfault", None),
            ("core dumped", None),
        ),
    ),
)


def _code_pattern(text: str) -> bool:
    for gate, group in _CODE_PATTERNS:
        if gate in text:
            for anchor, pattern in group:
                found = anchor in text if isinstance(anchor, str) else anchor.search(text)
                if found and (pattern is None or pattern.search(text)):
                    return True
    return False


# An inline code span (Markdown backticks) that holds code: a call, a path, an operator, an identifier
# joined by dots or underscores. Bounded and anchored on the backtick: linear in the text.
_INLINE_CODE = re.compile(r"`([^`\n]{1,200})`")
_CODE_PUNCTUATION = frozenset("()[]{}=/._:<>$|;&~*")
_INLINE_SPANS = 16


def _has_code(scan: str) -> bool:
    """Code in the newest turn: a fence anywhere in it, or a pattern in its head or tail.

    The patterns over all 8,000 characters cost ~100 µs, most of the decision's budget;
    a signature or a stack trace in the middle of a long turn that has no fence is rare.
    """
    if "`" in scan and "```" in scan:  # one character is found by memchr, 30x faster than three
        return True
    if len(scan) > _CODE_HEAD + _CODE_TAIL:
        scan = scan[:_CODE_HEAD] + "\n" + scan[-_CODE_TAIL:]
    return _code_pattern(scan) or _sql(scan) or ("`" in scan and _inline_code(scan))


def _inline_code(text: str) -> bool:
    """A backticked span with code's punctuation in it (`df.groupby('a')`, `chmod -R 755 /srv`): the
    difficulty scorer's words miss a one-line snippet in a short question, which reads as small talk to
    them. A backticked plain word (`serendipity`) is not code.
    """
    # The first spans only: a turn of thousands of backticked words costs what a short one does.
    spans = map(operator.itemgetter(1), itertools.islice(_INLINE_CODE.finditer(text), _INLINE_SPANS))
    return any(not _CODE_PUNCTUATION.isdisjoint(span) or " -" in span for span in spans)  # `ls -la`


def _sql(text: str) -> bool:
    """A SELECT with a FROM after it, within a statement's length.

    Two substring searches, not a pattern: ``SELECT\b.+\bFROM\b`` takes ~100 ms on a turn of
    "SELECT a SELECT a ...", and even a bounded ``[^;]{1,300}?`` scans 300 characters after
    every SELECT.
    """
    start = text.find("SELECT ")
    if start < 0:
        return False
    end = text.find(" FROM ", start)
    return 0 <= end - start <= 300


@dataclass(frozen=True, slots=True)
class RequestFeatures:
    endpoint: str
    has_tools: bool = False
    tool_choice_forced: bool = False  # "required" or a named function
    # A tool call or result since the newest user turn: the model is in the middle of a tool exchange.
    # An exchange that ended (a user spoke since) leaves a chit-chat turn free to go to diffusion.
    agent_loop: bool = False
    code: bool = False  # code in the text itself: a fence, a signature, a stack trace
    thinking: bool = False  # chat_template_kwargs.enable_thinking or reasoning_effort
    structured_output: bool = False
    image: bool = False
    media: bool = False  # content that is neither text nor an image: audio, a file, embeddings...
    logprobs: bool = False
    sampling: tuple[str, ...] = ()  # unsupported sampling parameters present
    temperature: float | None = None
    messages: int = 0
    prompt_chars: int = 0
    # The difficulty scorer's verdict (None when routing.scorer is off).
    difficulty: Difficulty | None = None

    @property
    def incompatible(self) -> tuple[str, ...]:
        """What the diffusion backend rejects or has crashed on (temperature is handled apart)."""
        out = list(self.sampling)
        if self.structured_output:
            out.append("structured_output")
        if self.image:
            out.append("image")
        if self.media:
            out.append("media")
        if self.logprobs:
            out.append("logprobs")
        return tuple(out)

    @property
    def temperature_unsupported(self) -> bool:
        return self.temperature is not None and self.temperature != 1.0


def _text(content: Any) -> tuple[str, str | None]:
    """The text of a message's content, and what else it holds at any depth (chat_view.content_kind)."""
    if isinstance(content, str):
        return content, None
    if not isinstance(content, list):
        return "", None if content is None else content_kind(content)
    parts = [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "\n".join(parts), content_kind(content)


@dataclass(frozen=True, slots=True)
class Conversation:
    """The texts the scorer reads: the newest user turn, and what came before it that matters."""

    newest: str
    # The system and developer prompts, and the user turns before the newest (at most CONTEXT_TURNS,
    # newest last): where a task stated once ("you are a maths olympiad coach", "prove that ...")
    # keeps a follow-up hard.
    system: str = ""
    earlier: str = ""
    agent_loop: bool = False
    image: bool = False
    media: bool = False
    history_code: bool = False
    prompt_chars: int = 0
    messages: int = 0


CONTEXT_TURNS = 2


def conversation(payload: dict[str, Any]) -> Conversation:
    """The conversation of a chat-shaped request (``messages``), or of a completions ``prompt``."""
    messages = payload.get("messages")
    if not isinstance(messages, list):
        prompt = payload.get("prompt")
        text = prompt if isinstance(prompt, str) else " ".join(str(p) for p in prompt or ())
        # vLLM's completions take a prompt as embeddings too: not text.
        embeds = payload.get("prompt_embeds") is not None
        return Conversation(newest=text, media=embeds, prompt_chars=len(text))
    agent_loop = image = media = history_code = False
    system: list[str] = []
    users: list[str] = []
    prompt_chars = 0
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role in ("tool", "function") or message.get("tool_calls"):
            agent_loop = True
        elif role == "user":
            agent_loop = False
        text, kind = _text(message.get("content"))
        image = image or kind == "image"
        media = media or kind == "media"
        prompt_chars += len(text)
        if role == "user":
            users.append(text)
        elif role in ("system", "developer"):
            system.append(text)
        elif "```" in text:
            history_code = True
    newest = users[-1] if users else ""
    earlier = users[-1 - CONTEXT_TURNS : -1]
    return Conversation(
        newest=newest,
        system="\n".join(t for t in system if t),
        earlier="\n".join(t for t in earlier if t),
        agent_loop=agent_loop,
        image=image,
        media=media,
        history_code=history_code,
        prompt_chars=prompt_chars,
        messages=len(messages),
    )


def extract_features(
    payload: dict[str, Any], endpoint: str, scorer: ScorerModel | None = None, *, explain: int = 0
) -> RequestFeatures:
    """What the policy reads in a request; ``scorer`` (the loaded model) adds its difficulty score."""
    tools = payload.get("tools")
    has_tools = isinstance(tools, list) and len(tools) > 0
    choice = payload.get("tool_choice")
    talk = conversation(payload)
    scan = talk.newest[:_SCAN_CHARS]
    kwargs = payload.get("chat_template_kwargs")
    effort = payload.get("reasoning_effort")
    # An explicit enable_thinking wins over a reasoning effort, as in vLLM's chat template arguments.
    enable = kwargs.get("enable_thinking") if isinstance(kwargs, dict) else None
    if isinstance(enable, bool):
        thinking = enable
    else:
        thinking = isinstance(effort, str) and effort not in ("none", "minimal")
    response_format = payload.get("response_format")
    structured = (
        isinstance(response_format, dict) and response_format.get("type") in ("json_schema", "json_object")
    ) or any(
        payload.get(k) is not None
        for k in ("structured_outputs", "guided_json", "guided_regex", "guided_choice", "guided_grammar")
    )
    temperature = payload.get("temperature")
    return RequestFeatures(
        endpoint=endpoint,
        has_tools=has_tools,
        tool_choice_forced=tool_choice_forced(choice),
        agent_loop=talk.agent_loop,
        code=talk.history_code or _has_code(scan),
        thinking=thinking,
        structured_output=structured,
        image=talk.image,
        media=talk.media,
        logprobs=asks_logprobs(payload, endpoint),  # per API: a count on completions, a flag on chat
        sampling=tuple(k for k in INCOMPATIBLE_PARAMS if payload.get(k) is not None),
        temperature=float(temperature)
        if isinstance(temperature, int | float) and not isinstance(temperature, bool)
        else None,
        messages=talk.messages,
        prompt_chars=talk.prompt_chars,
        difficulty=(
            None if scorer is None else scorer.score(talk.newest, talk.system, talk.earlier, explain=explain)
        ),
    )


def tool_choice_forced(choice: Any) -> bool:
    """``tool_choice`` obliges the model to call a tool: "required", or one function named."""
    return choice == "required" or (isinstance(choice, dict) and choice.get("type") == "function")
