"""A local fake of the Telegram Bot API, enough for python-telegram-bot's polling bot.

It serves ``/bot<token>/<method>`` on loopback: getMe, deleteWebhook, getUpdates (long polling on a
queue that ``say`` fills), sendMessage, editMessageText, sendChatAction, and keeps every message as the
chat shows it, with the history of its edits. ``telegram_bot.py --fake-telegram`` runs the bot against it
from a terminal, and the tests drive it directly; neither needs a Telegram account or the internet.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["FakeTelegram"]

BOT = {"id": 1000, "is_bot": True, "first_name": "Gateway", "username": "gateway_test_bot"}
USER = {"id": 7, "is_bot": False, "first_name": "Ada"}


@dataclass
class Shown:
    """A message the bot sent, as the chat shows it now, and every text it had."""

    message_id: int
    chat_id: int
    texts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.texts[-1]


class FakeTelegram:
    def __init__(self, token: str, on_change: Callable[[Shown], None] | None = None) -> None:
        self.token = token
        # Called with a message each time the bot sends or edits one (the terminal mode prints it).
        self.on_change = on_change
        self.updates: list[dict[str, Any]] = []
        self.sent: list[Shown] = []
        self.calls: list[str] = []
        self.actions: list[str] = []
        self._ids = itertools.count(1)
        self._update_ids = itertools.count(1)
        self._lock = threading.Lock()
        self.app = Starlette(routes=[Route("/bot{token}/{method}", self._api, methods=["GET", "POST"])])

    # ---- what a test does --------------------------------------------------------------------------

    def say(self, chat_id: int, text: str) -> int:
        """A user writes ``text`` in a private chat with the bot; returns the message id."""
        message_id = next(self._ids)
        message: dict[str, Any] = {
            "message_id": message_id,
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": "private", "first_name": USER["first_name"]},
            "from": USER,
            "text": text,
        }
        if text.startswith("/"):
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
        with self._lock:
            self.updates.append({"update_id": next(self._update_ids), "message": message})
        return message_id

    def replies_to(self, chat_id: int) -> list[Shown]:
        with self._lock:
            return [m for m in self.sent if m.chat_id == chat_id]

    # ---- the Bot API -------------------------------------------------------------------------------

    async def _api(self, request: Request) -> Response:
        if request.path_params["token"] != self.token:
            return _result({"ok": False, "error_code": 401, "description": "Unauthorized"}, 401)
        method = request.path_params["method"]
        params = {k: v[-1] for k, v in parse_qs((await request.body()).decode()).items()}
        self.calls.append(method)
        if method == "getMe":
            return _ok(BOT)
        if method in ("deleteWebhook", "setMyCommands", "close", "logOut"):
            return _ok(True)
        if method == "getUpdates":
            return _ok(await self._poll(int(params.get("offset", 0)), float(params.get("timeout", 0))))
        if method == "sendChatAction":
            self.actions.append(params.get("action", ""))
            return _ok(True)
        if method == "sendMessage":
            chat_id = int(params["chat_id"])
            shown = Shown(next(self._ids), chat_id, [params["text"]])
            with self._lock:
                self.sent.append(shown)
            self._changed(shown)
            return _ok(self._message(shown))
        if method == "editMessageText":
            message_id = int(params["message_id"])
            with self._lock:
                shown = next(m for m in self.sent if m.message_id == message_id)
                if shown.text == params["text"]:
                    # Telegram refuses an edit that changes nothing.
                    description = "Bad Request: message is not modified"
                    return _result({"ok": False, "error_code": 400, "description": description}, 400)
                shown.texts.append(params["text"])
            self._changed(shown)
            return _ok(self._message(shown))
        return _result({"ok": False, "error_code": 404, "description": "Not Found"}, 404)

    def _changed(self, shown: Shown) -> None:
        if self.on_change is not None:
            self.on_change(shown)

    async def _poll(self, offset: int, wait: float) -> list[dict[str, Any]]:
        deadline = time.monotonic() + min(wait, 1.0)
        while True:
            with self._lock:
                # Updates below the offset are confirmed: Telegram forgets them.
                self.updates = [u for u in self.updates if u["update_id"] >= offset]
                if self.updates:
                    return list(self.updates)
            if time.monotonic() >= deadline:
                return []
            await asyncio.sleep(0.01)

    def _message(self, shown: Shown) -> dict[str, Any]:
        return {
            "message_id": shown.message_id,
            "date": int(time.time()),
            "chat": {"id": shown.chat_id, "type": "private", "first_name": USER["first_name"]},
            "from": BOT,
            "text": shown.text,
        }


def _ok(result: Any) -> Response:
    return _result({"ok": True, "result": result})


def _result(body: dict[str, Any], status: int = 200) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json")
