"""A Telegram chat bot that talks to the gateway with the openai SDK.

    pip install -e '.[examples]'
    TELEGRAM_TOKEN=123:abc GATEWAY_URL=http://127.0.0.1:8080/v1 GATEWAY_API_KEY=gw-... \\
        python examples/telegram_bot.py

Without a Telegram account, ``--fake-telegram`` runs the same bot against a fake Bot API on loopback
(examples/telegram_fake.py): type messages in the terminal, the bot's answers print there.

    GATEWAY_API_KEY=gw-... python examples/telegram_bot.py --fake-telegram

* Each chat keeps its own history, bounded to the last ``HISTORY_MESSAGES`` messages.
* Answers stream into one Telegram message that is edited as text arrives, at most once per
  ``EDIT_INTERVAL`` seconds (Telegram limits edits per chat). The gateway paces diffusion streams
  (``x-gateway-pacing``), so the text grows steadily instead of jumping one 256-token canvas at a time.
* Over its rate limit the bot says so at once: the client makes no retries of its own (the gateway
  already falls back between backends, and an SDK retry after a 429 sleeps until the limit resets while
  the chat shows "…").
* ``/fast`` sends the chat's requests to the diffusion backend, ``/quality`` to the autoregressive one,
  ``/auto`` lets the gateway decide (the default); ``/route`` shows where the last answer went and why;
  ``/reset`` forgets the history. ``/fast`` and ``/quality`` need a key that may choose its route.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from openai import APIError, AsyncOpenAI, RateLimitError
from telegram import Update
from telegram.constants import ChatAction
from telegram.ext import Application, CommandHandler, ContextTypes, MessageHandler, filters

log = logging.getLogger("telegram_bot")

TELEGRAM_LIMIT = 4096  # characters per message
CURSOR = " ▍"


@dataclass
class BotConfig:
    gateway_url: str  # the gateway's OpenAI base URL, ending in /v1
    api_key: str
    model: str = "auto"
    history_messages: int = 20
    edit_interval: float = 1.0
    pacing: str = "on"  # x-gateway-pacing: on, off, or a budget in milliseconds
    routes: dict[str, str | None] = field(
        default_factory=lambda: {"fast": "diffusion", "quality": "autoregressive", "auto": None}
    )
    system_prompt: str = "You are a friendly assistant in a Telegram chat. Answer briefly."


@dataclass
class ChatState:
    history: deque[dict[str, str]]
    route: str = "auto"
    last_route: str = "no answer yet"


class GatewayBot:
    def __init__(self, config: BotConfig, client: AsyncOpenAI | None = None) -> None:
        self.config = config
        self.client = client or AsyncOpenAI(
            base_url=config.gateway_url, api_key=config.api_key, max_retries=0
        )
        self.chats: dict[int, ChatState] = {}

    def chat(self, chat_id: int) -> ChatState:
        if chat_id not in self.chats:
            self.chats[chat_id] = ChatState(history=deque(maxlen=self.config.history_messages))
        return self.chats[chat_id]

    # ---- commands --------------------------------------------------------------------------------------

    async def start(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None
        await update.effective_message.reply_text(
            "Hi! Send me a message. /fast, /quality or /auto choose the model, /route shows where the "
            "last answer went, /reset forgets this chat."
        )

    async def choose(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None and update.effective_chat is not None
        text = update.effective_message.text or ""
        name = text.split()[0].lstrip("/").split("@")[0]
        self.chat(update.effective_chat.id).route = name
        backend = self.config.routes[name] or "chosen by the gateway"
        await update.effective_message.reply_text(f"Route: {name} ({backend}).")

    async def route(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None and update.effective_chat is not None
        state = self.chat(update.effective_chat.id)
        await update.effective_message.reply_text(f"Mode: {state.route}. Last answer: {state.last_route}")

    async def reset(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message is not None and update.effective_chat is not None
        self.chat(update.effective_chat.id).history.clear()
        await update.effective_message.reply_text("Forgotten.")

    # ---- conversation ----------------------------------------------------------------------------------

    async def answer(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.effective_message
        if message is None or update.effective_chat is None or not message.text:
            return
        state = self.chat(update.effective_chat.id)
        state.history.append({"role": "user", "content": message.text})
        await context.bot.send_chat_action(update.effective_chat.id, ChatAction.TYPING)
        reply = await message.reply_text("…")
        headers = {"x-gateway-pacing": self.config.pacing}
        chosen = self.config.routes.get(state.route)
        if chosen:
            headers["x-gateway-route"] = chosen
        messages: list[Any] = [{"role": "system", "content": self.config.system_prompt}, *state.history]
        text = ""
        try:
            raw = await self.client.chat.completions.with_raw_response.create(
                model=self.config.model, messages=messages, stream=True, extra_headers=headers
            )
            state.last_route = _describe(raw.headers)
            stream = raw.parse()  # the stream itself; its headers were read above
            shown = ""
            last_edit = time.monotonic()
            async for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    text += chunk.choices[0].delta.content
                if text != shown and time.monotonic() - last_edit >= self.config.edit_interval:
                    reply = await self._show(reply, text, final=False)
                    shown, last_edit = text, time.monotonic()
        except RateLimitError as exc:
            state.history.pop()
            wait = exc.response.headers.get("retry-after")
            later = f" Try again in {wait} s." if wait and wait.isdigit() else ""
            await reply.edit_text(f"Slow down: this bot has reached its request limit.{later}")
            return
        except APIError as exc:
            log.warning("gateway error: %s", exc)
            state.history.pop()  # the question was not answered: do not keep it
            await reply.edit_text(f"Sorry, the model is unavailable right now ({_code(exc)}).")
            return
        state.history.append({"role": "assistant", "content": text})
        await self._show(reply, text or "(no answer)", final=True)

    async def _show(self, reply: Any, text: str, *, final: bool) -> Any:
        """Edit the answer into ``reply``; text past Telegram's limit continues in new messages."""
        while len(text) > TELEGRAM_LIMIT:
            head, text = text[:TELEGRAM_LIMIT], text[TELEGRAM_LIMIT:]
            if reply.text != head:
                await reply.edit_text(head)
            reply = await reply.reply_text("…")
        shown = text if final else text + CURSOR
        if reply.text != shown:
            reply = await reply.edit_text(shown)
        return reply


def _describe(headers: Any) -> str:
    route = f"{headers.get('x-gateway-backend', '?')} ({headers.get('x-gateway-route', '?')})"
    if headers.get("x-gateway-fallback"):
        route += f", fell back: {headers['x-gateway-fallback']}"
    if headers.get("x-gateway-pacing"):
        route += f", paced over {headers['x-gateway-pacing']} ms"
    return route


def _code(exc: APIError) -> str:
    return str(getattr(exc, "code", None) or getattr(exc, "status_code", None) or "error")


def build_application(token: str, bot: GatewayBot, *, base_url: str | None = None) -> Application:  # type: ignore[type-arg]
    """The python-telegram-bot application; ``base_url`` points it at another Bot API server."""
    builder = Application.builder().token(token)
    if base_url is not None:
        builder = builder.base_url(base_url).base_file_url(base_url.replace("/bot", "/file/bot"))
    application = builder.build()
    application.add_handler(CommandHandler("start", bot.start))
    application.add_handler(CommandHandler(["fast", "quality", "auto"], bot.choose))
    application.add_handler(CommandHandler("route", bot.route))
    application.add_handler(CommandHandler("reset", bot.reset))
    application.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, bot.answer))
    application.add_error_handler(_log_error)
    return application


async def _log_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    log.error("update failed: %r", context.error)


def run_fake_telegram(config: BotConfig) -> None:
    """The bot against a fake Bot API on loopback, driven from the terminal: one chat, your lines."""
    import socket

    import uvicorn
    from telegram_fake import FakeTelegram, Shown  # beside this file

    def show(message: Shown) -> None:
        if message.text != "…" and not message.text.endswith(CURSOR):
            print(f"bot> {message.text}", flush=True)

    token = "0:offline"  # noqa: S105 - the fake accepts any token; this one only names the mode
    fake = FakeTelegram(token, on_change=show)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(fake.app, log_level="warning"))
    threading.Thread(target=lambda: server.run(sockets=[sock]), daemon=True).start()
    base_url = f"http://127.0.0.1:{sock.getsockname()[1]}/bot"

    def read_terminal() -> None:
        while not server.started:
            time.sleep(0.05)
        print("Offline Telegram: type a message (or /fast, /quality, /route); Ctrl-D quits.", flush=True)
        for line in sys.stdin:
            if line.strip():
                fake.say(1, line.strip())
        # End of input: stop polling the way Ctrl-C would.
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=read_terminal, daemon=True).start()
    build_application(token, GatewayBot(config), base_url=base_url).run_polling()
    server.should_exit = True


def main() -> None:
    parser = argparse.ArgumentParser(description="A Telegram bot in front of the gateway.")
    parser.add_argument(
        "--fake-telegram",
        action="store_true",
        help="use a fake Telegram Bot API on loopback and chat from this terminal (no token needed)",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING if args.fake_telegram else logging.INFO)
    config = BotConfig(
        gateway_url=os.environ.get("GATEWAY_URL", "http://127.0.0.1:8080/v1"),
        api_key=os.environ["GATEWAY_API_KEY"],
        model=os.environ.get("GATEWAY_MODEL", "auto"),
        history_messages=int(os.environ.get("HISTORY_MESSAGES", "20")),
        edit_interval=float(os.environ.get("EDIT_INTERVAL", "1.0")),
        pacing=os.environ.get("GATEWAY_PACING", "on"),
    )
    if args.fake_telegram:
        run_fake_telegram(config)
        return
    application = build_application(
        os.environ["TELEGRAM_TOKEN"], GatewayBot(config), base_url=os.environ.get("TELEGRAM_API_URL")
    )
    application.run_polling()


if __name__ == "__main__":
    main()
