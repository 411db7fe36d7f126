"""Secrets never reach what flower writes or hands on: which values, markers, every writer.

The end-to-end proof (the real CLI printing the key) is in ``test_secrets_e2e.py``; here
each piece is pinned: which variables count, what is ignored, the markers, URL passwords,
the JSON-escaped forms a store line holds, when the set is collected again, and every
writer that now redacts (atomic_write, the spill guard, the trim spill, the store, the
bequest) next to the one that must not (``flower setup``'s credential file).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flower.kernel import redact as redact_mod
from flower.kernel.files import atomic_write
from flower.kernel.redact import (
    URL_MARKER,
    Redactor,
    collect,
    current,
    is_secret_name,
    is_secret_value,
    marker,
    redact_guard,
    watch,
)
from flower.records.workbench import Workbench
from flower.roles.guard import BULKY, spill_guard, spill_text
from flower.workflow.bequest_block import normalise_body

pytestmark = pytest.mark.anyio

#: A decoy in the shape of an Anthropic key, long enough to count.
DECOY = "sk-ant-api03-DECOY-unit-0123456789abcdef"
GITHUB = "ghp_decoyTOKEN0123456789abcdefghij"


@pytest.fixture(autouse=True)
def _known(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """The decoy is the process's API key; the user config is this test's own; what a
    test watches is forgotten afterwards (decoys must not follow other tests around)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", DECOY)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("FLOWER_ENV", raising=False)
    redact_mod.forget_watched()
    yield
    redact_mod.forget_watched()


async def post(matcher: Any, tool: str, response: Any, tool_input: Any = None, **extra: Any) -> Any:
    """Run a PostToolUse matcher's hook as the CLI would; return its answer."""
    data = {
        "hook_event_name": "PostToolUse",
        "tool_name": tool,
        "tool_input": tool_input or {},
        "tool_response": response,
        **extra,
    }
    return await matcher.hooks[0](data, "toolu_1", {"signal": None})


def updated(answer: Any) -> Any:
    out = answer["hookSpecificOutput"]
    assert out["hookEventName"] == "PostToolUse"
    return out["updatedToolOutput"]


def bash(stdout: str, stderr: str = "") -> dict[str, Any]:
    return {"stdout": stdout, "stderr": stderr, "interrupted": False, "isImage": False}


# --- which values ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "GITHUB_TOKEN",
        "DB_PASSWORD",
        "MYSQL_PASSWD",
        "GOOGLE_CREDENTIAL",
        "OPENAI_APIKEY",
        "basic_auth",
    ],
)
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "HOME",
        "PATH",
        "ANTHROPIC_BASE_URL",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "SSH_AUTH_SOCK",
        "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
        "GPG_KEY_FILE",
    ],
)
def test_names_that_only_look_secret(name: str) -> None:
    assert not is_secret_name(name)


@pytest.mark.parametrize(
    "value",
    ["short", "1234567", "true", "false", "123456789", "https://api.example.com/v1", "/tmp"],
)
def test_obvious_non_secrets_and_short_values_are_ignored(value: str) -> None:
    assert not is_secret_value(value)


@pytest.mark.parametrize(
    "value", [DECOY, "12345678a", "https://user:pa55word@host/x", "/not/an/existing/path-xyz"]
)
def test_secret_values(value: str) -> None:
    assert is_secret_value(value)


def test_collect_reads_the_environment_and_every_env_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    user = tmp_path / "xdg" / "flower" / ".env"
    user.parent.mkdir(parents=True)
    user.write_text("ANTHROPIC_API_KEY='sk-ant-saved-by-setup-0001'\nMODEL=claude-opus-4\n")
    (ws / ".env").write_text("export GITHUB_TOKEN=ghp_workspace_0123456789\nNAME=long-but-fine\n")
    (here / ".env").write_text('DB_PASSWORD="quoted pass word"  # a comment\nX_TOKEN=short\n')
    named = tmp_path / "named.env"
    named.write_text("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n")
    environ = {
        "ANTHROPIC_API_KEY": DECOY,
        "FLOWER_ENV": str(named),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "GIT_AUTHOR_NAME": "Jane Q. Developer",
        "DATABASE_URL": "postgresql://app:db-pass-0123@db.internal/app",
        "HOME": str(tmp_path),
    }

    found = collect(environ, workspaces=[ws], extra={"SESSION_TOKEN": "tok-from-the-spec-env"})

    assert found == {
        DECOY: "ANTHROPIC_API_KEY",
        "db-pass-0123": "DATABASE_URL",
        "tok-from-the-spec-env": "SESSION_TOKEN",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY": "AWS_SECRET_ACCESS_KEY",
        "quoted pass word": "DB_PASSWORD",
        "ghp_workspace_0123456789": "GITHUB_TOKEN",
        "sk-ant-saved-by-setup-0001": "ANTHROPIC_API_KEY",
    }


def test_an_unreadable_env_file_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_bytes(b"GITHUB_TOKEN=\xff\xfe not utf-8 at all\n")
    assert collect({"ANTHROPIC_API_KEY": DECOY}) == {DECOY: "ANTHROPIC_API_KEY"}


# --- markers -----------------------------------------------------------------------------


def test_each_value_becomes_a_marker_naming_its_variable() -> None:
    r = Redactor({DECOY: "ANTHROPIC_API_KEY", GITHUB: "GITHUB_TOKEN"})
    text = f"ANTHROPIC_API_KEY={DECOY}\nGITHUB_TOKEN={GITHUB} and again {DECOY}"
    assert r.redact(text) == (
        "ANTHROPIC_API_KEY=[已隐去 ANTHROPIC_API_KEY]\n"
        "GITHUB_TOKEN=[已隐去 GITHUB_TOKEN] and again [已隐去 ANTHROPIC_API_KEY]"
    )
    assert marker("ANTHROPIC_API_KEY") == "[已隐去 ANTHROPIC_API_KEY]"


def test_a_value_containing_another_is_replaced_whole() -> None:
    r = Redactor({"abcdefgh": "SHORT_KEY", "abcdefgh-and-more": "LONG_KEY"})
    assert r.redact("x abcdefgh-and-more y abcdefgh") == "x [已隐去 LONG_KEY] y [已隐去 SHORT_KEY]"


def test_url_passwords_are_hidden_even_unknown() -> None:
    r = Redactor({})
    assert r.redact("git remote: https://bob:s3cr3t-token@github.com/x.git") == (
        "git remote: https://bob:[已隐去]@github.com/x.git"
    )
    assert (
        r.redact("postgresql+psycopg://app:pw@db/app") == "postgresql+psycopg://app:[已隐去]@db/app"
    )
    for plain in (
        "https://github.com/x.git",
        "ssh://git@github.com/x",
        "git@github.com:x/y.git",
        "http://localhost:8080/a@b",
        "mail bob@example.com",
    ):
        assert r.redact(plain) is plain


def test_unchanged_text_is_the_same_object_and_short_values_never_count() -> None:
    r = Redactor({"short": "X_TOKEN", DECOY: "ANTHROPIC_API_KEY"})
    text = "a short text with no key"
    assert r.redact(text) is text
    assert r.values == [DECOY]


def test_a_value_inside_a_marker_is_not_used() -> None:
    """A value that is part of a marker would be put back by its own replacement."""
    r = Redactor({"ANTHROPIC_API": "ANTHROPIC_API_KEY", "[已隐去 X]": "X"})
    assert r.values == []


def test_json_escaped_forms_are_found_too() -> None:
    secret = 'pa"ss\\word-0123'
    r = Redactor({secret: "DB_PASSWORD"})
    line = json.dumps({"content": f"value {secret}"})
    assert secret not in line and r.holds(line)
    assert json.loads(r.redact(line)) == {"content": "value [已隐去 DB_PASSWORD]"}


def test_redact_value_keeps_structure_and_identity() -> None:
    r = Redactor({DECOY: "ANTHROPIC_API_KEY"})
    clean = {"stdout": "ok", "n": 3, "list": ["a", {"b": "c"}]}
    assert r.redact_value(clean) is clean
    dirty = {"stdout": f"key {DECOY}", "stderr": "", "interrupted": False, "files": ["x", DECOY]}
    out = r.redact_value(dirty)
    assert out == {
        "stdout": "key [已隐去 ANTHROPIC_API_KEY]",
        "stderr": "",
        "interrupted": False,
        "files": ["x", "[已隐去 ANTHROPIC_API_KEY]"],
    }
    assert dirty["stdout"] == f"key {DECOY}", "the input is not changed"
    assert r.redact_value({"uuid": DECOY, "t": DECOY}, frozenset({"uuid"})) == {
        "uuid": DECOY,
        "t": "[已隐去 ANTHROPIC_API_KEY]",
    }
    assert r.redact_value({DECOY: 1}) == {DECOY: 1}, "keys are never changed"


_SECRET_CHARS = st.characters(codec="utf-8", exclude_categories=("Cs",))
_secrets = st.dictionaries(
    st.text(_SECRET_CHARS, min_size=8, max_size=24),
    st.from_regex(r"[A-Z][A-Z_]{0,10}_KEY", fullmatch=True),
    max_size=5,
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(secrets=_secrets, pieces=st.lists(st.text(_SECRET_CHARS, max_size=20), max_size=6))
def test_redaction_leaves_no_known_secret_and_is_idempotent(
    secrets: dict[str, str], pieces: list[str]
) -> None:
    r = Redactor(secrets)
    values = list(secrets)
    # text built from the secrets themselves, glued with arbitrary pieces
    text = "".join(p + (values[i % len(values)] if values else "") for i, p in enumerate(pieces))
    once = r.redact(text)
    for needle in r.values:
        assert needle not in once
    assert r.redact(once) == once


@given(password=st.from_regex(r"[A-Za-z0-9._~!$&'()*+,;=%-]{1,30}", fullmatch=True))
def test_any_url_password_is_hidden(password: str) -> None:
    out = Redactor({}).redact(f"clone https://user:{password}@example.com/repo now")
    assert out == f"clone https://user:{URL_MARKER}@example.com/repo now"


# --- when the set is collected -----------------------------------------------------------


def test_current_is_cached_and_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    first = current()
    assert current() is first, "nothing changed: the same redactor"
    assert DECOY in first.values
    monkeypatch.setenv("GITHUB_TOKEN", GITHUB)
    second = current()
    assert second is not first and GITHUB in second.values


def test_current_follows_a_key_saved_to_the_user_env(tmp_path: Path) -> None:
    """What ``flower setup`` does: a new key in the user's .env is known at the next use."""
    from flower.commands.setup import save_env

    before = current()
    saved = "sk-ant-api03-SAVED-by-setup-9876543210"
    path = tmp_path / "xdg" / "flower" / ".env"
    save_env(path, {"ANTHROPIC_API_KEY": saved})
    assert saved in path.read_text(), "setup's own file keeps the key: it is not redacted"
    after = current()
    assert after is not before and saved in after.values


def test_watch_adds_a_sessions_env_and_a_workspaces_env_file(tmp_path: Path) -> None:
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / ".env").write_text("GITHUB_TOKEN=ghp_project_env_0123456789\n")
    assert "ghp_project_env_0123456789" not in current().values
    watch(env={"MY_SERVICE_TOKEN": "service-token-0123", "DEBUG": "verbose-mode"}, workspace=ws)
    known = current().values
    assert "service-token-0123" in known and "ghp_project_env_0123456789" in known
    assert "verbose-mode" not in known


# --- the writers ---------------------------------------------------------------------------


def test_atomic_write_and_workbench_write_redact(workspace: Path) -> None:
    target = workspace / "doc.md"
    atomic_write(target, f"the key is {DECOY}\n")
    assert target.read_text() == "the key is [已隐去 ANTHROPIC_API_KEY]\n"
    wb = Workbench(workspace)
    path = wb.write(f"note {DECOY}", "notes", "n.md")
    assert path.read_text() == "note [已隐去 ANTHROPIC_API_KEY]"
    atomic_write(target, DECOY, redact=False)
    assert target.read_text() == DECOY


def test_state_files_stay_valid_json(workspace: Path) -> None:
    target = workspace / "state.json"
    atomic_write(target, json.dumps({"said": f"{DECOY} and https://u:p@h"}, ensure_ascii=False))
    assert json.loads(target.read_text()) == {
        "said": "[已隐去 ANTHROPIC_API_KEY] and https://u:[已隐去]@h"
    }


def test_the_bequest_body_is_redacted() -> None:
    assert DECOY not in normalise_body(f"# 交代\nkey {DECOY}\n")


def test_the_human_channel_log_is_redacted(tmp_path: Path) -> None:
    from flower.human.channel import HumanChannel

    channel = HumanChannel(log_path=tmp_path / "log.md")
    channel._log(f"答:{DECOY}\n")
    assert DECOY not in (tmp_path / "log.md").read_text()


# --- the spill guard and the redact guard ---------------------------------------------------


async def test_a_spilled_result_is_redacted_in_the_file_and_in_the_head(workspace: Path) -> None:
    wb = Workbench(workspace)
    long = f"ANTHROPIC_API_KEY={DECOY}\n" + "x" * 5000
    answer = updated(await post(spill_guard(wb, threshold=100), "Bash", bash(long)))
    clean = long.replace(DECOY, "[已隐去 ANTHROPIC_API_KEY]")
    assert set(answer) == {"stdout", "stderr", "interrupted", "isImage"}
    assert DECOY not in answer["stdout"] and "[已隐去 ANTHROPIC_API_KEY]" in answer["stdout"]
    (spilled,) = wb.spill.glob("*.txt")
    assert spilled.read_text() == clean
    assert str(spilled) in answer["stdout"]


async def test_an_unspilled_result_of_a_spill_tool_is_redacted_by_the_spill_guard(
    workspace: Path,
) -> None:
    wb = Workbench(workspace)
    m = spill_guard(wb, threshold=4000, main_only=True)
    for extra in ({}, {"agent_id": "a1"}):  # main thread, and a subagent main_only skips
        answer = updated(await post(m, "Bash", bash(f"k={DECOY}", stderr=DECOY), **extra))
        assert answer["stdout"] == "k=[已隐去 ANTHROPIC_API_KEY]"
        assert answer["stderr"] == "[已隐去 ANTHROPIC_API_KEY]"
    assert await post(m, "Bash", bash("nothing secret")) == {}
    assert not wb.spill.exists()


async def test_reading_a_spill_file_is_not_spilled_but_still_redacted(workspace: Path) -> None:
    wb = Workbench(workspace)
    path = spill_text(wb, "y" * 5000)
    answer = updated(
        await post(
            spill_guard(wb, threshold=100),
            "Bash",
            bash("y" * 5000 + DECOY),
            {"command": f"cat {path}; env"},
        )
    )
    assert answer["stdout"] == "y" * 5000 + "[已隐去 ANTHROPIC_API_KEY]"


async def test_a_spill_that_fails_still_redacts(
    workspace: Path, tmp_path: Path, capsys: Any
) -> None:
    wb = Workbench(workspace)
    wb.root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (wb.root / "spill").symlink_to(outside)
    answer = updated(await post(spill_guard(wb, threshold=10), "WebFetch", f"{DECOY}" * 3))
    assert answer == "[已隐去 ANTHROPIC_API_KEY]" * 3
    assert list(outside.iterdir()) == []
    assert "could not spill" in capsys.readouterr().err


async def test_redact_guard_covers_every_tool_but_the_skipped_ones() -> None:
    m = redact_guard(skip=BULKY)
    assert m.matcher is None
    assert await post(m, "Bash", bash(DECOY)) == {}, "spill_guard answers for Bash"
    read = {"type": "text", "file": {"filePath": "/w/.env", "content": f"K={DECOY}\n"}}
    assert updated(await post(redact_guard(), "Read", read)) == {
        "type": "text",
        "file": {"filePath": "/w/.env", "content": "K=[已隐去 ANTHROPIC_API_KEY]\n"},
    }
    mcp = [{"type": "text", "text": f"the human said {DECOY}"}]
    assert updated(await post(m, "mcp__human__ask", mcp, agent_id="sub")) == [
        {"type": "text", "text": "the human said [已隐去 ANTHROPIC_API_KEY]"}
    ]
    assert await post(m, "Agent", {"content": [{"type": "text", "text": "done"}]}) == {}


# --- the trim spill and the store ----------------------------------------------------------


async def test_the_trim_spill_and_its_pointer_are_redacted(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flower.stores.trim import TrimmingSessionStore, TrimPolicy

    from ..stores.builder import Transcript, results

    t = Transcript()
    t.prompt("build")
    big = t.call("env", f"ANTHROPIC_API_KEY={DECOY}\n" + "row\n" * 1000)
    t.call("make test", "z" * 10)
    store = TrimmingSessionStore(tmp_path / "s.db", workspace, policy=TrimPolicy(keep_recent=1))
    key = {"project_key": "p", "session_id": "s"}
    try:
        with monkeypatch.context() as m:  # rows as a store wrote them before redaction
            m.setattr("flower.stores.sqlite.current_redactor", lambda: Redactor({}))
            await store.append(key, copy.deepcopy(t.lines))
        out = await store.load(key)
    finally:
        store.close()
    pointer = results(out or [])[big]
    assert DECOY not in pointer and "[已隐去 ANTHROPIC_API_KEY]" in pointer
    (spilled,) = (workspace / ".flower" / "spill").glob("*.txt")
    assert DECOY not in spilled.read_text() and "[已隐去 ANTHROPIC_API_KEY]" in spilled.read_text()


async def test_store_lines_are_redacted_and_their_links_kept(tmp_path: Path) -> None:
    from flower.stores.sqlite import SqliteSessionStore

    from ..stores.builder import Transcript

    t = Transcript()
    t.prompt(f"my key is {DECOY}")
    t.call("cat .env", f'ANTHROPIC_API_KEY="{DECOY}"\nURL=https://me:hunter22@x.io\n')
    sent = copy.deepcopy(t.lines)
    store = SqliteSessionStore(tmp_path / "s.db")
    key = {"project_key": "p", "session_id": "s"}
    try:
        await store.append(key, t.lines)
        loaded = await store.load(key) or []
        with store._engine.connect() as conn:
            rows = list(conn.exec_driver_sql("SELECT entry FROM entries").scalars())
    finally:
        store.close()
    assert t.lines == sent, "the SDK's own objects are not changed"
    assert len(rows) == len(sent)
    assert all(DECOY not in row and "hunter22" not in row for row in rows)
    assert [e["uuid"] for e in loaded] == [e["uuid"] for e in sent]
    assert [e["parentUuid"] for e in loaded] == [e["parentUuid"] for e in sent]
    assert loaded[0]["message"]["content"] == "my key is [已隐去 ANTHROPIC_API_KEY]"
    assert "https://me:[已隐去]@x.io" in json.dumps(loaded, ensure_ascii=False)
