"""The handoff audit end to end: a retiring session's document that leaves out what is
still open gets it appended, counted, and read by the successor (real SDK, real CLI).

The starter flow runs: the judge fails a check in round 1; while round 2 works, the
human queues a remark the agent never fetches and the worker creates a file; then the
context fills. The handoff the full session writes mentions none of it. The audit must
add the failed check, the queued remark, the changed file and the brief's open unknown.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flower import Runtime, starter_flow
from flower.kernel.events import Event
from flower.records.handoff import AUDIT_HEADING, Handoff
from flower.roles.agent import HandoffPolicy
from flower.runtime.resilience import Resilience
from flower.testing import ScriptedModel, bash, conversation, message_text, text, tool

from . import scripts as S

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SMALL = {"input_tokens": 500}
OPEN = "换行用 LF 还是 CRLF 待确认"
BRIEF = S.BRIEF.replace("语言按人选的来", f"- 语言按人选的来\n- {OPEN}")
MAIL = "顺便在 hello.txt 末尾加一个换行"
DISPATCH = ("Agent", S.DISPATCH.tools[0].input)
THIN_DOC = "## 正在做\n在写 hello\n## 下一步\n接着核对\n## 现场\n工作区"


def first_user_text(request: object) -> str:
    return next(message_text(m) for m in request.messages if m.get("role") == "user")  # type: ignore[attr-defined]


async def test_a_handoff_that_omits_open_items_gets_them_appended_and_counted(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    scripted_model.play(
        [
            conversation("handoff", text(THIN_DOC, usage=SMALL), after_user="只写交接"),
            conversation("successor", text(S.ROUND2, usage=SMALL), first_user="你接手"),
            S.judge("verdict-2", S.ROUND2, S.ACHIEVED),
            S.judge("verdict-1", S.ROUND1, S.NOT_YET),
            S.coder(),
            S.goal_setter(),
            conversation("clarify", text(BRIEF), system=S.CLARIFIER),
            S.coordinator(
                text(S.ROUND1, usage=SMALL),
                tool(*DISPATCH, usage={"input_tokens": 5_000}),  # the worker writes hello.txt
                bash("sleep 20", usage={"input_tokens": 45_000}),
            ),
        ]
    )
    run_dir = tmp_path / "runs"
    wf = starter_flow("写个 hello.txt", workspace=workspace, run_dir=run_dir, timeout_s=0)
    events: list[Event] = []

    def watch(event: Event) -> None:
        events.append(event)
        if event.kind == "verdict" and event.payload["round"] == 1:
            wf.channel.send(MAIL)  # typed while round 2 works; the agent never reads its inbox

    policy = HandoffPolicy(window=60_000, headroom=20_000)
    fast = Resilience(base_delay=0.05, max_delay=0.2)
    with Runtime(workspace=workspace, run_dir=run_dir, resilience=fast, handoff=policy) as rt:
        ctx = await wf.run(rt, on_event=watch)

    assert "_failed_at" not in ctx, ctx.get("_aborted")
    (done,) = [e.payload for e in events if e.kind == "handoff" and e.payload["phase"] == "done"]
    assert done["audited"] == 4, done["open_items"]
    assert done["open_items"] == {"failed_check": 1, "mail": 1, "changed_file": 1, "unknown": 1}

    saved = Handoff.load(Path(done["path"]))
    assert saved is not None and saved.doing == "在写 hello"
    for needle in ("没有改动别的文件", MAIL, "hello.txt (added)", OPEN):
        assert needle in saved.audit, needle
    assert "语言按人选的来" not in saved.audit  # an assumption, not an open unknown

    (first,) = scripted_model.requests_for("successor")
    prompt = first_user_text(first)
    assert f"## {AUDIT_HEADING}" in prompt
    for needle in ("没有改动别的文件", MAIL, "hello.txt", OPEN):
        assert needle in prompt, needle

    # carried to the successor: the inbox will not hand the remark out a second time
    assert wf.channel.pending_mail() == [] and wf.channel.mail[0].state == "delivered"

    rows = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    audited = {row["step"]: row["audited"] for row in rows}
    assert audited["干活#round2"] == 4 and audited["干活"] == 0
