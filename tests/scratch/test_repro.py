from pathlib import Path
import json
from flower.testing import ScriptedModel, bash, conversation, text
from tests.workflow import scripts as S
from tests.commands.terminal import Flower

def test_repro(scripted_model: ScriptedModel, claude_env, tmp_path: Path):
    ws = tmp_path / "proj"; ws.mkdir()
    cmds = ["python3 -c 'print(40+2)'", "bash -c 'echo hi'", "python3 -m pytest --version", "touch made.txt", "rm -f runs/sessions.db; echo rc=$?"]
    scripted_model.play([
        conversation("coder", *[bash(c) for c in cmds], text("done"), subagent=True),
        S.judge("verdict-1", S.ROUND1, S.ACHIEVED),
        S.goal_setter(), S.clarifier(ask=False),
        S.coordinator(S.DISPATCH, text(S.ROUND1)),
    ])
    run = Flower("-w", str(ws), "写个 hello.txt", "--timeout", "0", "--no-bequest", cwd=tmp_path)
    code = run.finish()
    last = scripted_model.requests_for("coder")[-1]
    [print(k, repr(v)[:400]) for k,v in last.tool_results().items()]
    print(run.text[-2000:])
    assert False
