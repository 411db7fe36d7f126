"""GNU sed: scripts parsed command by command; writes, commands, other files and endless loops
refused; the accepted loop idioms really end in GNU sed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flower.roles.ephemeral import decide, explain
from flower.roles.glance.sed import sed_script_reason

from ..fuzz import examples

SCRIPTS = [
    "1,20p",
    "/start/,/end/p",
    "s/foo/bar/g",
    "s|a/b|c|g; s/x/y/2",
    "/^#/d;/^$/d",
    "/x/{p;q}",
    "y/abc/xyz/",
    "$!N;P;D",
    "0~3d",
    "s/a/b/I",
    "\\,x,d",
    "1!G;h;$!d",
    ":a;N;$!ba;s/\\n/ /g",
    ":a;/x/{N;ba}",
    "/x/b;s/a/b/",
    "/x/bend;s/a/b/;:end",
    "/^$/N;/\\n$/D",
    "=",
    "l40",
    "l 40",
    "5q",
]

REFUSED = [
    ("w out", "writes a file"),
    ("1W out", "writes a file"),
    ("s/a/b/w out", "writes a file"),
    ("s/a/b/gw out", "writes a file"),
    ("s/a/b/e", "runs a command"),
    ("e id", "runs a command"),
    ("1e id", "runs a command"),
    ("r /etc/passwd", "reads another file"),
    ("R .env", "reads another file"),
    ("1a text", "refused"),
    ("i\\x", "refused"),
    ("c x", "refused"),
    ("s/a/b", "unterminated"),
    ("}", "unbalanced }"),
    ("{p", "unbalanced {"),
    (":a;ba", "loop forever"),
    (":a;$!N;ba", "loop forever"),
    (":a;bx;N;:x;ba", "loop forever"),
    (":a;s/x/y/;ta", "loop forever"),
    ("G;D", "refill"),
    ("s/^/\\n/;D", "refill"),
    ("bnowhere", "unknown label"),
    ("v", "not an allowed command"),
    ("#n", "not an allowed command"),
]


@pytest.mark.parametrize("script", SCRIPTS)
def test_accepted_scripts(script: str) -> None:
    assert sed_script_reason(script) is None
    assert decide(f"sed -n '{script}' f") is True, explain(f"sed -n '{script}' f")


@pytest.mark.parametrize(("script", "reason"), REFUSED)
def test_refused_scripts(script: str, reason: str) -> None:
    found = sed_script_reason(script)
    assert found is not None and reason in found


@pytest.mark.parametrize(
    ("cmd", "reason"),
    [
        ("sed -i s/a/b/ f", "-i is not an allowed option"),
        ("sed -i.bak s/a/b/ f", "-i"),
        ("sed -ni p f", "-i"),
        ("sed --in-place s/a/b/ f", "--in-place"),
        ("sed --in-pl s/a/b/ f", "--in-pl"),
        ("sed --quie -n p f", "an abbreviation?"),
        ("sed -f script.sed f", "-f"),
        ("sed -n p .env", ".env"),
        ("sed -n p *", "-i"),
        ("sed -e p -e 'w out' f", "writes a file"),
        ("sed --expression='1w out' f", "writes a file"),
        ("sed -n '$!{w copy.txt' -e '}' f", "unbalanced"),  # the first word is a file here
        ("sed -e ':a' -e 'ba' f", "loop forever"),  # -e chunks share labels
    ],
)
def test_refused_commands(cmd: str, reason: str) -> None:
    assert decide(cmd) is False
    assert reason in (explain(cmd) or "")


BAD = ["w out", "e id", "r /etc/passwd", ":z;bz", "s/a/b/w x"]


@given(st.sampled_from(SCRIPTS), st.sampled_from(BAD), st.booleans())
@settings(max_examples=examples(100))
def test_a_bad_command_anywhere_is_refused(script: str, bad: str, before: bool) -> None:
    mutated = f"{bad};{script}" if before else f"{script};{bad}"
    assert sed_script_reason(mutated) is not None, mutated


def test_accepted_scripts_end_in_gnu_sed(tmp_path: Path) -> None:
    sed = shutil.which("sed")
    if sed is None:
        pytest.skip("sed is not installed here")
    data = tmp_path / "f"
    data.write_text("start\nx a\n\n\n#c\nfoo\nend\n")
    for script in SCRIPTS:
        result = subprocess.run(
            [sed, "-n", script, str(data)], capture_output=True, timeout=10, cwd=tmp_path
        )
        assert result.returncode == 0, (script, result.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]
