"""Which workers an outage cut off, and what the resumed coordinator is told about them.

Synthetic transcripts in the CLI's shape (as measured with 2.1.332: an ``agent_metadata``
line, the prompt, one line per content block, a synthetic API-error reply when the
outage ends the worker). The real CLI's version is ``test_cutoff_e2e.py``.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from flower.roles.agent import AgentSpec
from flower.runtime.cutoff import find_cut_off, writes_files
from flower.runtime.cutoff_words import CLOSING, MAX_CHARS, MAX_WORKERS, cut_off_report, render
from flower.stores.prune import ORPHAN_NOTE, UNSURE

pytestmark = pytest.mark.anyio

_ids = itertools.count()


def at(second: int) -> str:
    return f"2026-12-01T10:00:{second:02d}.000Z"


class Log:
    """A transcript: lines with times, one per content block."""

    def __init__(self, agent: str | None = None) -> None:
        self.lines: list[dict[str, Any]] = []
        self.agent = agent

    def _add(self, second: int, **line: Any) -> dict[str, Any]:
        line = {"uuid": f"u{next(_ids)}", "timestamp": at(second), **line}
        if self.agent:
            line.update(isSidechain=True, agentId=self.agent)
        self.lines.append(line)
        return line

    def meta(self, description: str, tool_use_id: str, kind: str = "coder") -> None:
        self.lines.append(
            {"type": "agent_metadata", "agentType": kind, "description": description,
             "toolUseId": tool_use_id}
        )  # fmt: skip

    def prompt(self, second: int, text: str, *, sdk: bool = False) -> None:
        extra = {"promptSource": "sdk"} if sdk else {}
        self._add(second, type="user", message={"role": "user", "content": text}, **extra)

    def call(
        self, second: int, tool: str, given: dict[str, Any], result: str | None, *,
        error: bool = False, call_id: str | None = None, say: str = "",
    ) -> str:  # fmt: skip
        call_id = call_id or f"toolu_{next(_ids)}"
        if say:
            self.say(second, say, tool_follows=True)
        use = {"type": "tool_use", "id": call_id, "name": tool, "input": given}
        self._add(second, type="assistant", message={"role": "assistant", "content": [use]})
        if result is not None:
            block = {"type": "tool_result", "tool_use_id": call_id, "content": result,
                     "is_error": error}  # fmt: skip
            self._add(second, type="user", message={"role": "user", "content": [block]})
        return call_id

    def say(self, second: int, text: str, *, tool_follows: bool = False) -> None:
        block = {"type": "text", "text": text}
        self._add(second, type="assistant", message={"role": "assistant", "content": [block]})

    def outage(self, second: int) -> None:
        block = {"type": "text", "text": "API Error: 529 Overloaded."}
        self._add(
            second, type="assistant", isApiErrorMessage=True,
            message={"role": "assistant", "model": "<synthetic>", "content": [block]},
        )  # fmt: skip


def cut_worker(agent: str = "a1", second: int = 10, tool_use_id: str = "toolu_dispatch") -> Log:
    w = Log(agent)
    w.meta("写两个文件", tool_use_id)
    w.prompt(second, "写 a.txt 和 b.txt")
    w.call(second, "Write", {"file_path": "/ws/a.txt", "content": "a"}, "File created")
    w.call(second, "Edit", {"file_path": "/ws/c.py", "old_string": "x", "new_string": "y"},
           "String not found", error=True)  # fmt: skip
    w.call(second, "Bash", {"command": "echo b > b.txt"}, "", say="a.txt 写好了,接着写 b")
    w.call(second, "Bash", {"command": "pytest -q"}, "3 passed")
    w.call(second, "Bash", {"command": "make install"}, None)  # running when it ended
    w.outage(second)
    return w


def coordinator(second: int = 5) -> Log:
    m = Log()
    m.prompt(0, "earlier task", sdk=True)
    m.prompt(second, "this attempt's task", sdk=True)
    m.call(second, "Agent", {"description": "写两个文件", "prompt": "..."}, None,
           call_id="toolu_dispatch")  # fmt: skip
    return m


def test_a_worker_cut_off_mid_task_is_found_with_what_it_did() -> None:
    found = find_cut_off(coordinator().lines, {"subagents/agent-a1": cut_worker().lines})
    (worker,) = found.workers
    assert (worker.agent_id, worker.kind, worker.description) == ("a1", "coder", "写两个文件")
    assert worker.prompt == "写 a.txt 和 b.txt" and not worker.finished
    assert worker.changed == ["/ws/a.txt"]  # the failed Edit changed nothing
    assert worker.writing_commands == ["echo b > b.txt"]
    assert [c.shown() for c in worker.cut_calls] == ["Bash: make install"]
    assert worker.last_text == "a.txt 写好了,接着写 b"
    assert found.calls == []  # the Agent call without a result is this worker's: told once


def test_finished_workers_and_workers_from_before_the_attempt_are_not_reported() -> None:
    done = Log("a2")
    done.prompt(10, "看一下")
    done.call(10, "Bash", {"command": "ls"}, "a.txt")
    done.say(11, "看完了:只有 a.txt")
    earlier = cut_worker("a3", second=1)  # cut off before this attempt's prompt (second 5)
    workers = {"subagents/agent-a2": done.lines, "subagents/agent-a3": earlier.lines}
    found = find_cut_off(coordinator().lines, workers)
    assert found.workers == []
    assert [c.shown() for c in found.calls] == ["Agent 写两个文件"]  # nobody reported it


def test_results_made_up_for_unfinished_calls_do_not_count_as_results() -> None:
    w = cut_worker()
    healed = {"type": "tool_result", "tool_use_id": "toolu_x", "content": ORPHAN_NOTE}
    w.call(10, "Bash", {"command": "rm -rf build"}, None, call_id="toolu_x")
    w.lines.append({"type": "user", "flowerHealed": True, "timestamp": at(10),
                    "message": {"role": "user", "content": [healed]}})  # fmt: skip
    (worker,) = find_cut_off(coordinator().lines, {"subagents/agent-a1": w.lines}).workers
    assert [c.shown() for c in worker.cut_calls] == ["Bash: make install", "Bash: rm -rf build"]
    assert worker.writing_commands == ["echo b > b.txt"]  # an unsure rm is not "done"


def test_the_report_says_what_the_worker_did_and_to_verify_what_was_running() -> None:
    found = find_cut_off(coordinator().lines, {"subagents/agent-a1": cut_worker().lines})
    report = render(found)
    assert "1. coder「写两个文件」(agent a1)" in report
    assert "交给它的任务:写 a.txt 和 b.txt" in report
    assert "改过的文件:/ws/a.txt\n" in report and "c.py" not in report.split("最后几步")[0]
    assert "写过文件的命令:\n   - echo b > b.txt" in report
    assert "Edit /ws/c.py → 出错:String not found" in report
    assert "Bash: pytest -q → 3 passed" in report
    assert f"中断时还没有结果的调用({UNSURE}):\n   - Bash: make install" in report
    assert "它最后说的话:a.txt 写好了,接着写 b" in report
    assert "调用了 5 次工具" in report and report.endswith(CLOSING)
    assert "SendMessage" not in report
    assert 'SendMessage(to="a1")' in render(found, can_message=True)


def test_the_report_is_bounded_and_counts_what_it_leaves_out() -> None:
    workers: dict[str, list[dict[str, Any]]] = {}
    for n in range(MAX_WORKERS + 3):
        w = Log(f"w{n}")
        w.prompt(10 + n, "任务 " + "很长的说明 " * 400)
        for k in range(40):
            w.call(10 + n, "Write", {"file_path": f"/ws/{n}/{k}.txt", "content": "x"}, "ok")
            w.call(10 + n, "Bash", {"command": f"cp a{k} b{k} " + "x" * 500}, "y" * 5000)
        w.outage(10 + n)
        workers[f"subagents/agent-w{n}"] = w.lines
    found = find_cut_off(coordinator().lines, workers)
    assert len(found.workers) == MAX_WORKERS + 3
    report = render(found)
    assert len(report) <= MAX_CHARS and report.endswith(CLOSING)
    assert report.count("太长,后面的略去了") == MAX_WORKERS  # every worker shown, each cut
    assert f"{MAX_WORKERS}. coder" not in report and f"{MAX_WORKERS}. subagent" in report
    assert "另有 3 个 subagent 也被中断(没有展开):w6, w7, w8" in report
    few = render(type(found)(workers=found.workers[:1]))
    assert "…还有 28 个文件没列出" in few and "…还有 34 条更早的命令没列出" in few
    assert len(few) < MAX_CHARS


@pytest.mark.parametrize(
    ("command", "writes"),
    [
        ("echo b > b.txt", True),
        ("pytest -q > log.txt 2>&1", True),
        ("cat a >> b", True),
        ("ls 2>/dev/null", False),
        ("pytest -q 2>&1 | tail -5", False),
        ("awk '$1 > 5' data.txt", False),
        ('python -c "print(1 > 0)"', False),
        ("cd src && rm -rf build", True),
        ("FOO=1 sudo mv a b", True),
        ("sed -i s/a/b/ f.txt", True),
        ("sed s/a/b/ f.txt", False),
        ("git status", False),
        ("git -C repo commit -m x", True),
        ("python -m pip install requests", True),
        ("npm test", False),
        ("tar xzf a.tgz", True),
        ("tar tzf a.tgz", False),
        ("make test", False),
        ("grep -r foo . | tee found.txt", True),
        ("/bin/rm -f x", True),
        ("FOO=1 ; rm x", True),  # an empty segment first
        ("sed -i.bak s/a/b/ f.txt", True),
        ("perl -pi -e s/a/b/ f.txt", True),
        ("perl -Mstrict -e 1", False),
        ("sed --in-place s/a/b/ f.txt", True),
        ("tar", False),
        ("python3 -m pip install x", True),
        ("python3 -m pytest", False),
        ("git log --grep add", False),
    ],
)
def test_commands_that_obviously_write(command: str, writes: bool) -> None:
    assert writes_files(command) is writes


class Store:
    """A store with ``stored`` (the rows as stored) and subagent transcripts."""

    def __init__(self, main: list[dict[str, Any]], workers: dict[str, Any]) -> None:
        self.main, self.workers = main, workers
        self.loads = 0

    async def stored(self, key: dict[str, str]) -> list[dict[str, Any]]:
        return self.workers[key["subpath"]] if key.get("subpath") else self.main

    async def load(self, key: dict[str, str]) -> list[dict[str, Any]]:
        self.loads += 1
        raise AssertionError("the report reads the stored rows, not the reshaped view")

    async def list_subkeys(self, key: dict[str, str]) -> list[str]:
        return [*self.workers, "other/thing"]


async def test_the_runtime_entry_reads_the_store_and_never_raises() -> None:
    store = Store(coordinator().lines, {"subagents/agent-a1": cut_worker().lines})
    told = await cut_off_report(store, "p", "s")
    assert told.startswith("\n\n【被中断的 subagent】") and "agent a1" in told
    assert "SendMessage" not in told and store.loads == 0
    early = Store(coordinator().lines, {"subagents/agent-a1": cut_worker(second=1).lines})
    assert await cut_off_report(early, "p", "s") != ""  # the coordinator's Agent call
    assert "agent a1" not in await cut_off_report(early, "p", "s")  # from before: not told
    messenger = AgentSpec(name="c", instructions="", allowed_tools=["Agent", "SendMessage"])
    assert 'SendMessage(to="a1")' in await cut_off_report(store, "p", "s", spec=messenger)
    quiet = Store(coordinator().lines[:2], {})
    assert await cut_off_report(quiet, "p", "s") == ""

    class Broken(Store):
        async def list_subkeys(self, key: dict[str, str]) -> list[str]:
            raise OSError("database is locked")

    assert await cut_off_report(Broken([], {}), "p", "s") == ""


def test_the_window_starts_at_the_sdk_prompt_even_the_first_line_of_the_transcript() -> None:
    main = Log()
    main.prompt(5, "the only prompt", sdk=True)
    notified = Log()
    notified.prompt(20, "<task-notification>a worker ended</task-notification>")
    main.lines += notified.lines  # a user text line that is no prompt of the SDK
    earlier = cut_worker("a0", second=1)
    between = cut_worker("a9", second=10, tool_use_id="other")
    late = cut_worker("a5", second=8, tool_use_id="late")
    workers = {
        "subagents/agent-a0": earlier.lines,
        "subagents/agent-a9": between.lines,
        "subagents/agent-a5": late.lines,
    }
    found = find_cut_off(main.lines, workers)
    assert [w.agent_id for w in found.workers] == ["a5", "a9"]  # in the order they started


def test_without_a_prompt_or_times_every_unfinished_worker_counts() -> None:
    bare = [{k: v for k, v in line.items() if k != "timestamp"} for line in cut_worker().lines]
    assert len(find_cut_off([], {"subagents/agent-a1": bare}).workers) == 1
    odd = cut_worker("a2")
    for line in odd.lines:
        if "timestamp" in line:
            line["timestamp"] = "yesterday"
    assert len(find_cut_off(coordinator().lines, {"subagents/agent-a2": odd.lines}).workers) == 1
    launched = [{"type": "agent_metadata", "agentType": "coder", "description": "写"}]
    (worker,) = find_cut_off(coordinator().lines, {"subagents/agent-a3": launched}).workers
    assert worker.calls == [] and worker.prompt == ""  # launched, then nothing: still told
    assert "交给它的任务:(记录里没有)" in render(find_cut_off([], {"subagents/agent-a3": launched}))


def test_a_worker_that_answered_is_finished_whatever_metadata_follows() -> None:
    done = Log("a2")
    skill = {"role": "user", "content": "<skill>preloaded</skill>"}
    done.lines.append({"type": "user", "isMeta": True, "timestamp": at(10), "message": skill})
    parts = [{"type": "text", "text": "看一下"}, {"type": "text", "text": "目录"}]
    task = {"role": "user", "content": parts}
    done.lines.append({"type": "user", "timestamp": at(10), "uuid": "p", "message": task})
    done.call(10, "Bash", {"command": "ls"}, "a.txt")
    done.say(11, "看完了")
    done.lines.append({"type": "agent_metadata", "agentType": "coder", "finished": True})
    done.lines.append({"type": "attachment", "timestamp": at(11), "attachment": {"type": "x"}})
    found = find_cut_off(coordinator().lines, {"subagents/agent-a2": done.lines})
    assert found.workers == []
    from flower.runtime.cutoff import read_worker

    assert read_worker("subagents/agent-a2", done.lines).prompt == "看一下\n目录"


def test_results_the_cli_or_the_store_made_up_each_read_as_no_result() -> None:
    w = cut_worker()
    cli = {"type": "tool_result", "tool_use_id": "toolu_cli", "content": "[Tool call interrupted"}
    w.call(10, "Bash", {"command": "make a"}, None, call_id="toolu_cli")
    w.lines.append({"type": "user", "toolDenialKind": "interrupted", "timestamp": at(10),
                    "message": {"role": "user", "content": [cli]}})  # fmt: skip
    host = {"type": "tool_result", "tool_use_id": "toolu_host", "content": ORPHAN_NOTE}
    w.call(10, "Bash", {"command": "make b"}, None, call_id="toolu_host")
    w.lines.append({"type": "user", "timestamp": at(10),  # healed into a line already there
                    "message": {"role": "user", "content": [host]}})  # fmt: skip
    (worker,) = find_cut_off(coordinator().lines, {"subagents/agent-a1": w.lines}).workers
    assert [c.shown() for c in worker.cut_calls] == [
        "Bash: make install", "Bash: make a", "Bash: make b"
    ]  # fmt: skip


def test_calls_show_in_one_line() -> None:
    from flower.runtime.cutoff import Call

    assert Call("TodoWrite", {"todos": ["写"]}).shown() == 'TodoWrite {"todos": ["写"]}'
    assert Call("Write", {"file_path": ""}).file is None
    assert Call("Grep", {"pattern": "x" * 300}).shown(20) == "Grep " + "x" * 14 + "…"
