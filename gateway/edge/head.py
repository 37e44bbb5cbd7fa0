"""What a request's head may cost before it is complete: one connection's count against the edge's
bounds (``edge.max_header_bytes``, ``max_headers``, ``max_header_line_bytes``).

uvicorn keeps every header field a client sends until the head ends, and httptools builds each field's
name and value by concatenation until its line ends: a client streaming small header lines, or one
endless value, grew the process by hundreds of megabytes per connection within the header deadline.
Fields are counted as httptools hands them over (the request target piece by piece, each field once
whole); a line httptools is still building is invisible to its callbacks, so the bytes received after
the last line break bound it (:meth:`HeadBounds.received`).

The same bounds cover a chunked body's trailer section, which httptools parses as fields too. Body bytes
never count: a section is open only from a request's first byte to the end of its headers, and after a
chunk's size line until body bytes follow (after the last chunk: the trailer fields).
"""

from __future__ import annotations

from gateway.edge.settings import EdgeSettings

__all__ = ["HeadBounds"]


class HeadBounds:
    """One connection's count; each method returns why the request is refused (a 431's message) once a
    bound is passed, else None."""

    __slots__ = (
        "_ended",
        "_field_bytes",
        "_fields",
        "_split",
        "_unfinished",
        "max_bytes",
        "max_fields",
        "max_line",
        "section",
    )

    def __init__(self, settings: EdgeSettings) -> None:
        self.max_bytes = settings.max_header_bytes
        self.max_fields = settings.max_headers
        self.max_line = settings.max_header_line_bytes
        # "head" from a request's first byte to the end of its headers, "trailer" after a chunk's size line
        # until body bytes follow, else None (body bytes, or between requests).
        self.section: str | None = None
        self._field_bytes = 0  # the request target's and the fields' names and values
        self._fields = 0
        self._unfinished = 0  # bytes received after the last line break while in a section
        self._ended = False  # a request ended in the bytes being parsed...
        self._split = False  # ... and the next one began in them: where, the parser does not say

    # ---- the parser's events ---------------------------------------------------------------------------

    def read_starts(self) -> None:
        self._ended = self._split = False

    def message_begins(self) -> None:
        self.section = "head"
        self._field_bytes = self._fields = self._unfinished = 0
        self._split = self._ended

    def headers_complete(self) -> None:
        self.section = None

    def chunk_header(self) -> None:
        self.section = "trailer"  # until on_body says this chunk has data
        self._unfinished = 0

    def body(self) -> None:
        self.section = None

    def message_complete(self) -> None:
        self.section = None
        self._ended = True

    # ---- the counts ------------------------------------------------------------------------------------

    def target(self, piece: int, whole: int) -> str | None:
        """A piece of the request target arrived (``piece`` bytes; ``whole`` so far)."""
        self._field_bytes += piece
        if whole > self.max_line:
            return f"The request line is longer than {self.max_line} bytes."
        return self._total()

    def field(self, name: bytes, value: bytes) -> str | None:
        size = len(name) + len(value)
        self._field_bytes += size
        self._fields += 1
        if size > self.max_line:
            return f"A header line is longer than {self.max_line} bytes."
        if self._fields > self.max_fields:
            return f"The request has more than {self.max_fields} header fields."
        return self._total()

    def received(self, data: bytes) -> str | None:
        """After the parser has had ``data``: the line it is still building, as its bytes arrive."""
        if self.section is None:
            return None
        end = data.rfind(b"\n")
        if self._split:
            # The bytes where the request began are unknown: its unfinished line counts from the next read
            # on (one read late at most; a line it finishes meanwhile is counted whole by field()).
            self._unfinished = 0
        elif end < 0:
            self._unfinished += len(data)
        else:
            self._unfinished = len(data) - end - 1
        if self._unfinished > self.max_line:
            return f"A header line is longer than {self.max_line} bytes."
        return self._total(self._unfinished)

    def _total(self, unfinished: int = 0) -> str | None:
        if self._field_bytes + unfinished > self.max_bytes:
            return f"The request's header fields are larger than {self.max_bytes} bytes."
        return None
