"""The examples/ run end to end: the agent loop through the gateway, and the Telegram bot against a fake
Telegram Bot API on loopback, both in front of the simulated backends."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import httpx
import openai

from tests.support import AR_MODEL, DIFFUSION_MODEL, ServerThread

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"examples_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their annotations through sys.modules
    spec.loader.exec_module(module)
    return module


FakeTelegram = load("telegram_fake").FakeTelegram


def test_agent_loop_tool_turns_go_to_autoregressive_and_chit_chat_to_diffusion(gateway):
    agent = load("agent_loop")
    client = openai.OpenAI(base_url=gateway.base_url, api_key=gateway.key, max_retries=0)
    steps = agent.run(client, "What's the weather like in Lisbon?", "Thanks, have a lovely day!")
    assert [s.kind for s in steps] == ["tool_call", "answer", "answer"]
    call, answer, chit_chat = steps
    assert call.backend == "autoregressive" and call.route == "tool-heavy:tools"
    assert call.detail.startswith("get_weather(") and '"city"' in call.detail
    # The tool result went back: still tools on offer, and the conversation is mid-exchange.
    assert answer.backend == "autoregressive"
    assert set(answer.route.split(",")) == {"tool-heavy:tools", "tool-heavy:agent-loop"}
    assert answer.detail
    # The exchange is over and the turn offers no tools: the fast backend takes it.
    assert (
        chit_chat.backend == "diffusion" and chit_chat.route.startswith("default:score=") and chit_chat.detail
    )
    assert all(s.fallback is None for s in steps)


async def until(condition: Callable[[], bool], within: float = 15.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not condition():
        assert loop.time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def test_telegram_bot_end_to_end(make_gateway, diffusion_sim, ar_sim):
    gw = make_gateway()
    bot_module = load("telegram_bot")
    token = "123456:TEST-TOKEN"
    fake = FakeTelegram(token)
    chat = 42
    with ServerThread(fake.app) as api:
        config = bot_module.BotConfig(
            gateway_url=gw.base_url, api_key=gw.key, history_messages=4, edit_interval=0.0, pacing="300"
        )
        bot = bot_module.GatewayBot(config)
        application = bot_module.build_application(token, bot, base_url=api.url + "/bot")

        def answered(count: int) -> Callable[[], bool]:
            def check() -> bool:
                replies = fake.replies_to(chat)
                return (
                    len(replies) >= count
                    and replies[count - 1].text not in ("…",)
                    and not replies[count - 1].text.endswith(bot_module.CURSOR)
                )

            return check

        async with application:
            await application.start()
            assert application.updater is not None
            await application.updater.start_polling(poll_interval=0.0, timeout=1)
            try:
                # A chit-chat message: the gateway picks diffusion and paces its canvas.
                fake.say(chat, "Hello! Say something nice about rivers.")
                await until(answered(1))
                first = fake.replies_to(chat)[0]
                assert "typing" in fake.actions
                # The answer grew in several edits ("…", partial texts with a cursor, the final text).
                assert len(first.texts) >= 4 and first.texts[0] == "…"
                assert all(t.endswith(bot_module.CURSOR) for t in first.texts[1:-1])
                # ... and it is exactly what the backend answered for this conversation.
                asked = diffusion_sim.state.last_body["messages"]
                async with httpx.AsyncClient() as client:
                    response = await client.post(
                        gw.base_url + "/chat/completions",
                        json={"model": DIFFUSION_MODEL, "messages": asked},
                        headers={"authorization": f"Bearer {gw.key}"},
                    )
                direct = response.json()
                assert first.text == direct["choices"][0]["message"]["content"]

                fake.say(chat, "/route")
                await until(answered(2))
                route = fake.replies_to(chat)[1].text
                assert "diffusion (default:score=" in route and "paced over 300 ms" in route

                # /quality: the next answers come from the autoregressive backend.
                fake.say(chat, "/quality")
                await until(answered(3))
                fake.say(chat, "And about mountains?")
                await until(answered(4))
                assert ar_sim.state.last_body["model"] == AR_MODEL
                fake.say(chat, "/route")
                await until(answered(5))
                assert "autoregressive (explicit:header)" in fake.replies_to(chat)[4].text

                # The history is bounded: after more turns, the oldest message is no longer sent.
                for n in range(3):
                    fake.say(chat, f"Message number {n}.")
                    await until(answered(6 + n))
                sent = ar_sim.state.last_body["messages"]
                assert sent[0]["role"] == "system" and len(sent) == 1 + 4
                assert all("rivers" not in str(m.get("content")) for m in sent)
                assert sent[-1] == {"role": "user", "content": "Message number 2."}
            finally:
                await application.updater.stop()
                await application.stop()
    assert "getUpdates" in fake.calls and "editMessageText" in fake.calls


def run_offline_bot(gw, lines: list[str]) -> list[str]:
    """examples/telegram_bot.py --fake-telegram as a user runs it: lines typed, then end of input."""
    env = {**os.environ, "GATEWAY_URL": gw.base_url, "GATEWAY_API_KEY": gw.key, "EDIT_INTERVAL": "0"}
    env.pop("TELEGRAM_TOKEN", None)
    proc = subprocess.Popen(
        [sys.executable, str(EXAMPLES / "telegram_bot.py"), "--fake-telegram"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    answers: list[str] = []
    try:
        assert "Offline Telegram" in proc.stdout.readline()
        for line in lines:
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
            # One answer per line typed: the next line waits for it, as a person would.
            answer = proc.stdout.readline()
            assert answer.startswith("bot> "), (answer, proc.stderr.read() if proc.poll() else "")
            answers.append(answer[len("bot> ") :].rstrip("\n"))
        proc.stdin.close()
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return answers


def test_the_bot_runs_offline_against_the_fake_telegram_without_a_token(make_gateway, diffusion_sim):
    gw = make_gateway()
    answers = run_offline_bot(gw, ["Hello! Say something nice about rivers.", "/route"])
    assert answers[0] and answers[0] != "(no answer)"
    assert (
        diffusion_sim.state.last_body["messages"][-1]["content"] == "Hello! Say something nice about rivers."
    )
    assert answers[1].startswith("Mode: auto. Last answer: diffusion (")


def test_the_bot_says_slow_down_at_once_when_its_key_is_rate_limited(make_gateway):
    gw = make_gateway(limits={"requests_per_minute": 1})
    answers = run_offline_bot(gw, ["Hi there!", "Hi again!"])
    assert not answers[0].startswith("Slow down")
    assert answers[1].startswith("Slow down: this bot has reached its request limit. Try again in ")
