"""The run view on a real run: the bundled CLI against the scripted model."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from flower.kernel.events import Event
from flower.kernel.terminal import Terminal
from flower.roles.agent import AgentSpec
from flower.runtime.resilience import Resilience
from flower.runtime.runner import Runtime
from flower.testing import ScriptedModel, Turn, bash, conversation, text
from flower.ui.render import Renderer

from .ptyio import Pty

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SMALL = {"input_tokens": 500}
HOSTILE = r"printf 'A\033[31mRED\033]0;pwned\007\033[2J\033P+q\033\\Z\n'; exit 3"


async def test_the_clis_own_retries_show_within_a_second_and_tools_cannot_inject(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    scripted_model.play(
        [
            conversation(
                "main",
                Turn(text="looking", tools=bash(HOSTILE).tools, usage=SMALL, faults=(529, 529)),
                text("done", usage=SMALL),
            )
        ]
    )
    pty = Pty(cols=100, rows=40)
    seen: list[tuple[float, Event]] = []
    try:
        with pty.stream() as stream:
            term = Terminal(stream, color=False)
            view = Renderer(term, verbose=True)

            def on_event(event: Event) -> None:
                seen.append((time.time(), event))
                view(event)

            resilience = Resilience(base_delay=0.05, max_delay=0.2, cli_retries=3)
            with Runtime(
                workspace=workspace, run_dir=tmp_path / "runs", resilience=resilience
            ) as rt:
                spec = AgentSpec(name="w", instructions="terse", allowed_tools=["Bash"])
                result = await rt.run(spec, "go", step_name="干活", on_event=on_event)
            out = pty.output().decode()
    finally:
        pty.close()
    assert result.ok, result.error
    faults = [r for r in scripted_model.requests if r.outcome == "529"]
    retries = [(at, e) for at, e in seen if e.payload.get("subtype") == "api_retry"]
    assert len(faults) == 2 and len(retries) == 2
    for fault, (at, event) in zip(faults, retries, strict=True):
        assert at - fault.at < 1.0  # shown at once, not after the attempt fails
        assert event.payload["error_status"] == 529 and event.payload["max_retries"] == 3
    assert "~ API overloaded (529): the CLI retries (1/3)" in out
    assert "~ API overloaded (529): the CLI retries (2/3)" in out
    # colour off: only the countdown's own cursor moves, whatever the tool printed
    assert "\x1b" not in re.sub(r"\x1b\[(\d+A|J|\d+C)", "", out)
    assert "\r\n  x Exit code 3 AREDZ\r\n" in out  # the title, clear and DCS went whole
    assert "* 干活 done - 2 turns" in out
