"""Resilience: the probe, the endpoint, the classifier and the back-off."""

from __future__ import annotations

import socket
import time

import pytest

from flower.runtime.resilience import RESUME_PROMPT, Resilience, classify, endpoint, reachable
from flower.testing import ScriptedModel
from flower_plugins.resilience import FATAL, TRANSIENT, classify_text


def test_documented_defaults() -> None:
    r = Resilience()
    assert (r.enabled, r.max_attempts, r.base_delay, r.max_delay) == (True, 6, 4.0, 120.0)
    assert (r.probe_timeout, r.probe_interval, r.max_offline_wait) == (5.0, 15.0, 3600.0)
    assert r.retry_unknown is True
    assert r.resume_prompt == RESUME_PROMPT
    assert r.cli_retries is None


def test_resume_prompt_names_no_error_detail() -> None:
    for detail in ("ENOTFOUND", "503", "529", "error", "Error", "API"):
        assert detail not in RESUME_PROMPT
    assert "接着做" in RESUME_PROMPT and "不要从头开始" in RESUME_PROMPT


@pytest.mark.parametrize(
    ("attempt", "base"),
    [(1, 4.0), (2, 8.0), (3, 16.0), (5, 64.0), (6, 120.0), (30, 120.0), (5000, 120.0)],
)
def test_delay_doubles_up_to_the_cap_with_quarter_jitter(attempt: int, base: float) -> None:
    r = Resilience()
    delays = [r.delay_for(attempt) for _ in range(400)]
    assert min(delays) >= base * 0.75 - 1e-9
    assert max(delays) <= base * 1.25 + 1e-9
    assert max(delays) - min(delays) > base * 0.3  # really jittered, not a constant


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, ("api.anthropic.com", 443)),
        ({"ANTHROPIC_BASE_URL": "http://127.0.0.1:8123"}, ("127.0.0.1", 8123)),
        ({"ANTHROPIC_BASE_URL": "http://gateway.local"}, ("gateway.local", 80)),
        ({"ANTHROPIC_BASE_URL": "https://gw.example.com/anthropic/v1"}, ("gw.example.com", 443)),
        ({"ANTHROPIC_BASE_URL": "gw.example.com:8443"}, ("gw.example.com", 8443)),
        (
            {"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "eu-west-1"},
            ("bedrock-runtime.eu-west-1.amazonaws.com", 443),
        ),
        (
            {"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_DEFAULT_REGION": "ap-south-1"},
            ("bedrock-runtime.ap-south-1.amazonaws.com", 443),
        ),
        ({"CLAUDE_CODE_USE_BEDROCK": "1"}, ("bedrock-runtime.us-east-1.amazonaws.com", 443)),
        ({"ANTHROPIC_BASE_URL": "https://gw.example.com:99999"}, ("gw.example.com", 443)),
        (
            {"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "us-east5"},
            ("us-east5-aiplatform.googleapis.com", 443),
        ),
        ({"CLAUDE_CODE_USE_VERTEX": "1"}, ("us-east5-aiplatform.googleapis.com", 443)),
        (
            {"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "global"},
            ("aiplatform.googleapis.com", 443),
        ),
        ({"CLAUDE_CODE_USE_BEDROCK": "0", "ANTHROPIC_BASE_URL": "http://h:1"}, ("h", 1)),
    ],
)
def test_endpoint_follows_the_base_url(env: dict[str, str], expected: tuple[str, int]) -> None:
    assert endpoint(env) == expected


def test_endpoint_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:4567")
    assert endpoint() == ("127.0.0.1", 4567)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_reachable_is_one_handshake() -> None:
    with ScriptedModel() as model:
        assert reachable("127.0.0.1", model.port, timeout=1.0)
        port = model.port
    assert not reachable("127.0.0.1", port, timeout=1.0)
    assert not reachable("127.0.0.1", _free_port(), timeout=0.5)


def test_a_name_that_does_not_resolve_is_unreachable(monkeypatch: pytest.MonkeyPatch) -> None:
    # The lookup fails here, not at the system resolver: no test may reach past loopback.
    asked: list[tuple[str, int]] = []

    def no_such_name(host: str, port: int, *args: object, **kwargs: object) -> list[object]:
        asked.append((host, port))
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_such_name)
    assert not reachable("no-such-host.invalid", 443, timeout=1.0)
    assert asked == [("no-such-host.invalid", 443)]


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        (
            "API Error: 529 Overloaded. This is a server-side issue, usually temporary"
            " (HTTP 529, server_error)",
            "transient",
        ),
        ("API Error: 500 Internal server error (HTTP 500)", "transient"),
        ("API Error: 429 rate limited (HTTP 429, rate_limit)", "transient"),
        (
            "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)",
            "transient",
        ),
        ("API Error: Connection dropped (ECONNRESET). Check the gateway", "transient"),
        ("getaddrinfo ENOTFOUND api.anthropic.com", "transient"),
        ("Request timed out.", "transient"),
        ("Invalid API key · Fix external API key (HTTP 401, authentication_failed)", "fatal"),
        ("authentication_error: connection rejected, invalid x-api-key (HTTP 401)", "fatal"),
        ("API Error: 400 Bad Request (HTTP 400, unknown)", "fatal"),
        ("API Error: 403 Forbidden (HTTP 403)", "fatal"),
        ("Your credit balance is too low; try again later", "fatal"),
        ("error_max_turns: Reached maximum number of turns (4)", "fatal"),
        ("error_max_budget_usd", "fatal"),
        ("Not logged in · Please run /login", "fatal"),
        ("Command failed with exit code 1", "unknown"),
        ("", "unknown"),
    ],
)
def test_default_classifier(text: str, verdict: str) -> None:
    assert classify_text(text) == verdict
    assert classify(text) == verdict  # through the hook, the default answering last


#: Fatal texts that also carry a transient pattern: only checking fatal first gets them right
#: (the other order would wait forever on a bad key or an empty balance).
BOTH = [
    "authentication_error: connection refused, invalid x-api-key (HTTP 401)",
    "Invalid API key · connection reset by the gateway (HTTP 401, authentication_failed)",
    "Your credit balance is too low (HTTP 400, rate_limit); try again later",
    "API Error: 403 Forbidden: the network policy denies this request (HTTP 403)",
    "error_max_turns: Reached maximum number of turns (4) after the request timed out",
    "Not logged in · Please run /login (ECONNREFUSED)",
    "API Error: 500 Internal server error (HTTP 500, authentication_failed)",
]


@pytest.mark.parametrize("text", BOTH)
def test_fatal_is_checked_before_transient(text: str) -> None:
    assert FATAL.search(text) and TRANSIENT.search(text)  # the case really is ambiguous
    assert classify_text(text) == "fatal"
    assert classify(text) == "fatal"
    assert not Resilience().retryable(text)


def test_retryable_honours_retry_unknown() -> None:
    assert Resilience().retryable("something odd")
    assert not Resilience(retry_unknown=False).retryable("something odd")
    assert Resilience(retry_unknown=False).retryable("(HTTP 529)")
    assert not Resilience().retryable("(HTTP 401)")


def test_a_plugin_classifier_overrides_the_default() -> None:
    from flower import hookimpl
    from flower.plugins import get_plugin_manager

    class QuotaPlugin:
        @hookimpl
        def flower_classify_error(self, text: str) -> str | None:
            return "fatal" if "my-gateway: quota" in text else None

    pm = get_plugin_manager()
    plugin = QuotaPlugin()
    pm.register(plugin, name="test-quota")
    try:
        assert classify("my-gateway: quota exhausted (HTTP 529)") == "fatal"
        assert classify("(HTTP 529)") == "transient"  # no opinion -> the default decides
    finally:
        pm.unregister(plugin)


@pytest.mark.anyio
async def test_wait_online_returns_when_the_endpoint_comes_back() -> None:
    model = ScriptedModel()
    model.start()
    env = {"ANTHROPIC_BASE_URL": model.base_url}
    model.stop()
    seen: list[tuple[float, float]] = []
    model.restart(after=0.6)
    try:
        started = time.monotonic()
        online = await Resilience(probe_interval=0.1, probe_timeout=0.5).wait_online(
            env, on_offline=lambda waited, next_in: seen.append((waited, next_in))
        )
        assert online
        assert 0.5 < time.monotonic() - started < 5
        assert len(seen) >= 3 and all(next_in == pytest.approx(0.1) for _, next_in in seen)
        assert seen == sorted(seen)
    finally:
        model.stop()


@pytest.mark.anyio
async def test_wait_online_gives_up_after_max_offline_wait() -> None:
    env = {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{_free_port()}"}
    started = time.monotonic()
    online = await Resilience(
        probe_interval=0.05, probe_timeout=0.2, max_offline_wait=0.4
    ).wait_online(env)
    assert not online
    assert 0.35 < time.monotonic() - started < 3


@pytest.mark.anyio
async def test_the_last_wait_is_cut_to_what_is_left_of_max_offline_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a clock that only the waits move: probes at 0, 4, 8 and 10 s, never a wait past
    the limit, and no probe after it."""
    import flower.runtime.resilience as resilience

    clock = [0.0]
    probes: list[float] = []

    def unreachable(*_: object) -> bool:
        probes.append(clock[0])
        assert len(probes) < 10, f"still probing at {clock[0]} s"
        return False

    monkeypatch.setattr(resilience.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(resilience, "reachable", unreachable)

    async def advance(seconds: float) -> None:
        clock[0] += seconds

    seen: list[tuple[float, float]] = []
    online = await Resilience(probe_interval=4, max_offline_wait=10).wait_online(
        {}, on_offline=lambda waited, next_in: seen.append((waited, next_in)), sleep=advance
    )
    assert not online
    assert seen == [(0.0, 4.0), (4.0, 4.0), (8.0, 2.0)] and probes == [0.0, 4.0, 8.0, 10.0]


@pytest.mark.anyio
async def test_cancelling_wait_online_does_not_wait_for_a_hanging_probe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A probe can hang for its whole timeout (a dropped SYN) or longer (a slow DNS
    # server); quitting while offline (Ctrl-C) must not wait for it.
    import anyio

    import flower.runtime.resilience as resilience

    def hanging(host: str, port: int, timeout: float = 5.0) -> bool:
        time.sleep(5)
        return False

    monkeypatch.setattr(resilience, "reachable", hanging)
    started = time.monotonic()
    with anyio.move_on_after(0.2):
        await Resilience().wait_online({"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    assert time.monotonic() - started < 2.5
