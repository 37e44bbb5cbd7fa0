"""The caller as the limiter sees it: the few fields of ``gateway.auth.Principal`` that limits read.

A protocol rather than an import of the auth package: auth reads ``limits.settings`` (a key's or a tier's
own limits), so limits naming auth's class would tie the two packages in a circle. Any object with these
attributes is admitted the same way; auth's frozen dataclass is the one the gateway passes.
"""

from __future__ import annotations

from typing import Protocol

from gateway.limits.settings import LimitSettings

__all__ = ["Principal"]


class Principal(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def tier(self) -> str | None: ...

    # Its own limits (a key record's over its tier's); None leaves the limits: section in force.
    @property
    def limits(self) -> LimitSettings | None: ...
