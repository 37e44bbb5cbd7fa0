"""Who is calling: API keys and JWTs, turned into a :class:`Principal` or a 401/403/503."""

from gateway.auth.authenticator import Authenticator
from gateway.auth.principal import Principal

__all__ = ["Authenticator", "Principal"]
