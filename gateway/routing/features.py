"""What the routing policy looks at in a request, read once, without I/O.

Only the newest user turn is scanned with regular expressions (bounded to ``_SCAN_CHARS``); the history is
checked with cheap substring tests, so a long multi-turn conversation costs little more than a short one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["CRASHING", "INCOMPATIBLE_PARAMS", "RequestFeatures", "extract_features"]

# Sampling parameters the diffusion backend answers with a 400 (docs/backends.md).
INCOMPATIBLE_PARAMS = ("seed", "min_p", "min_tokens", "logit_bias", "bad_words", "allowed_token_ids")
# Features that have crashed the diffusion engine (vLLM #56712 images, #45689 logprobs): never sent there.
CRASHING = frozenset({"image", "logprobs"})

_SCAN_CHARS = 8000


def _words(*alternatives: str) -> str:
    r"""``\b(?:a|b|...)``, written so that ``re`` can skip from one possible first letter to the next.

    ``re`` scans quickly only when every alternative of a pattern starts with a literal character; one
    leading ``\b`` made it try every alternative at every position (13x slower: 220 µs on 600 characters
    of prose, py-spy had feature extraction at ~10 % of the gateway's own CPU). The word boundary is
    checked by a one-character look-behind after the first letter instead, which matches the same text.
    """
    return "|".join(f"{a[0]}(?<=\\b{a[0]}){a[1:]}" for a in alternatives)


# Every top-level alternative starts with a literal character (see _words).
_CODE = re.compile(
    r"```|#include\s*<|=>\s*\{|Traceback \(most recent call last\)|Exception in thread|panicked at|"
    + _words(
        r"def \w+\s*\(",
        r"function\s+\w+\s*\(",
        r"class \w+\s*[:({]",
        r"fn \w+\s*\(",
        r"public (?:static )?\w+ \w+\s*\(",
        r"const \w+\s*=\s*\(",
        r"import \w+",
        r"SELECT\b.+\bFROM\b",
        r"at [\w.$]+\([\w.]+:\d+\)",
        r"error\[E\d{4}\]",
        r"Segmentation fault",
        r"TypeError:",
        r"ValueError:",
        r"NullPointerException",
    )
)
_CODE_VERBS = re.compile(
    r"\b(?:write|implement|debug|refactor|fix|optimi[sz]e|port|rewrite|review|code up|give me|generate"
    r"|create|build|make)\b"
    r"(?:\W+\w+){0,6}?\W+"
    r"(?:function|method|class|script|program|code|bug|api|endpoint|query|sql|regex|regexp|algorithm|module"
    r"|unit tests?|python|javascript|typescript|rust|golang|java|c\+\+|bash|shell|dockerfile|makefile"
    r"|kubernetes|yaml|json schema|compiler|parser|library)\b",
)
# Strong maths signals: notation or words that rarely appear outside mathematics. Every top-level
# alternative starts with a literal character (see _words), the arithmetic pattern apart.
_MATH = re.compile(
    r"\\(?:frac|int|sum|sqrt|lim|begin\{(?:align|equation)|mathbb)|\$\$|≤|≥|≠|∘|π|∑|∏|√|∞"
    r"|\^(?<=[\w)]\^)\(?\w|_(?<=\b[a-z]_)\(?[\dnkij]|"
    + _words(
        r"prove\b",
        r"proof\b",
        r"theorem\b",
        r"lemma\b",
        r"corollary\b",
        r"derivative\b",
        r"integral\b",
        r"differentiate\b",
        r"eigen\w*\b",
        r"polynomials?\b",
        r"solve for\b",
        r"equations?\b",
        r"inequalit(?:y|ies)\b",
        r"probability that\b",
        r"modulo\b",
        r"prime factor\w*\b",
        r"combinatori\w*\b",
        r"factori[sz]e\b",
        r"coefficients?\b",
        r"perfect squares?\b",
        r"closed[- ]form\b",
        r"recurrence\b",
        r"sqrt\(",
        r"mod \d",
    )
)
_ARITHMETIC = re.compile(r"\b\d+\s*[*/]\s*\d+\s*[-+*/=]")
# Weak maths signals: words common in maths problems but also in everyday questions; two different ones
# are needed.
_MATH_WORDS = re.compile(
    r"\b(?:integers?|real numbers?|positive numbers?|divisible|divides|remainder|digits?|primes?"
    r"|subsets?|permutations?|sequences?|minimum value|maximum value|smallest value|largest value"
    r"|how many ways|number of ways|in how many|arrangements?|triangles?|polygons?|sum of|product of)\b",
)
_REASONING = re.compile(
    r"\b(?:step[- ]by[- ]step|think (?:carefully|hard|it through)|reason (?:through|about)|multi-step"
    r"|work out|figure out why|explain why|walk me through|derive|puzzle|riddle|logic problem"
    r"|trade-?offs? between|pros and cons of .+ versus)\b",
)


@dataclass(frozen=True, slots=True)
class RequestFeatures:
    endpoint: str
    has_tools: bool = False
    tool_choice_forced: bool = False  # "required" or a named function
    # A tool call or result since the newest user turn: the model is in the middle of a tool exchange.
    # An exchange that ended (a user spoke since) leaves a chit-chat turn free to go to diffusion.
    agent_loop: bool = False
    code: bool = False
    math: bool = False
    reasoning: bool = False
    thinking: bool = False  # chat_template_kwargs.enable_thinking or reasoning_effort
    structured_output: bool = False
    image: bool = False
    logprobs: bool = False
    sampling: tuple[str, ...] = ()  # unsupported sampling parameters present
    temperature: float | None = None
    messages: int = 0
    prompt_chars: int = 0

    @property
    def incompatible(self) -> tuple[str, ...]:
        """What the diffusion backend rejects or has crashed on (temperature is handled apart)."""
        out = list(self.sampling)
        if self.structured_output:
            out.append("structured_output")
        if self.image:
            out.append("image")
        if self.logprobs:
            out.append("logprobs")
        return tuple(out)

    @property
    def temperature_unsupported(self) -> bool:
        return self.temperature is not None and self.temperature != 1.0


def _text(content: Any) -> tuple[str, bool]:
    """The text of a message's content, and whether it holds an image."""
    if isinstance(content, str):
        return content, False
    if not isinstance(content, list):
        return "", False
    parts: list[str] = []
    image = False
    for part in content:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("image_url", "input_image", "image", "video_url", "input_video"):
            image = True
        text = part.get("text")
        if isinstance(text, str):
            parts.append(text)
    return "\n".join(parts), image


def extract_features(payload: dict[str, Any], endpoint: str) -> RequestFeatures:
    tools = payload.get("tools")
    has_tools = isinstance(tools, list) and len(tools) > 0
    choice = payload.get("tool_choice")
    forced = choice == "required" or (isinstance(choice, dict) and choice.get("type") == "function")

    agent_loop = False
    image = False
    history_code = False
    last_user = ""
    prompt_chars = 0
    messages = payload.get("messages")
    count = 0
    if isinstance(messages, list):
        count = len(messages)
        for message in messages:
            if not isinstance(message, dict):
                continue
            role = message.get("role")
            if role in ("tool", "function") or message.get("tool_calls"):
                agent_loop = True
            elif role == "user":
                agent_loop = False
            text, has_image = _text(message.get("content"))
            image = image or has_image
            prompt_chars += len(text)
            if role == "user":
                last_user = text
            elif "```" in text:
                history_code = True
    else:
        prompt = payload.get("prompt")
        last_user = prompt if isinstance(prompt, str) else " ".join(str(p) for p in prompt or ())
        prompt_chars = len(last_user)

    scan = last_user[:_SCAN_CHARS]
    # The case-insensitive patterns run on a lowercased copy: re.IGNORECASE made each several times
    # slower (py-spy showed feature extraction at ~9 % of the gateway's CPU under load).
    lowered = scan.lower()
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
        tool_choice_forced=forced,
        agent_loop=agent_loop,
        code=history_code or bool(_CODE.search(scan) or _CODE_VERBS.search(lowered)),
        math=bool(_MATH.search(lowered) or _ARITHMETIC.search(lowered))
        or len(set(_MATH_WORDS.findall(lowered))) >= 2,
        reasoning=bool(_REASONING.search(lowered)),
        thinking=thinking,
        structured_output=structured,
        image=image,
        logprobs=bool(payload.get("logprobs")) or payload.get("top_logprobs") is not None,
        sampling=tuple(k for k in INCOMPATIBLE_PARAMS if payload.get(k) is not None),
        temperature=float(temperature)
        if isinstance(temperature, int | float) and not isinstance(temperature, bool)
        else None,
        messages=count,
        prompt_chars=prompt_chars,
    )
