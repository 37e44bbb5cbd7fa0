"""Facts about the backends' wire protocol that both the gateway and the simulator rely on.

A leaf module: it imports nothing from the package, so any layer (routing, proxy, the simulator) may read
it without depending on another.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["BACKEND_HEADER", "DIFFUSION_UNSUPPORTED_SAMPLING", "Endpoint"]

# The four APIs vLLM serves and the gateway proxies: chat and completions (OpenAI's), Responses (OpenAI's
# newer API) and Messages (Anthropic's).
Endpoint = Literal["chat", "completions", "responses", "messages"]

# The response header naming the backend that answered (or failed): set by the proxy, kept on errors.
BACKEND_HEADER = "x-gateway-backend"

# Sampling parameters the diffusion backend answers with a 400 (docs/backends.md); temperature is refused
# too unless it is 1.0, which is a value check rather than a name and is made where it is used.
DIFFUSION_UNSUPPORTED_SAMPLING = (
    "seed",
    "min_p",
    "min_tokens",
    "logit_bias",
    "bad_words",
    "allowed_token_ids",
)
