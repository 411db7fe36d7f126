"""Lead globs (``*.log``) may expand to any option of the real binary: the suffix rules, tried
on the real GNU tail and bfs/GNU find with attacker-named files."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import claude_agent_sdk
import pytest

from flower.roles.ephemeral import decide
from flower.roles.glance.binaries import tail_suffix_ok

BUNDLED = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"

#: file names an attacker could plant, each ending in the suffix under test
TAIL_TRAPS = ["-f{s}", "-fs1{s}", "-fs0x1{s}", "--follow=name{s}", "-F{s}", "--pid=1{s}"]


@pytest.mark.parametrize(("suffix", "ok"), [(".log", True), (".txt", True), (".csv", True),
                                            (".md", True), (".c", False), (".fp3", False),
                                            ("f", False), ("", False), (".e", False)])  # fmt: skip
def test_tail_suffix_rule(suffix: str, ok: bool) -> None:
    assert tail_suffix_ok(suffix) is ok
    assert decide(f"tail -n 5 *{suffix}") is ok


@pytest.mark.parametrize("suffix", [".log", ".txt", ".csv", ".json", ".md"])
def test_tail_fails_fast_on_every_trap(tmp_path: Path, suffix: str) -> None:
    """Each planted name makes GNU tail a usage error: it exits instead of following."""
    tail = shutil.which("tail")
    if tail is None:
        pytest.skip("tail is not installed here")
    (tmp_path / f"a{suffix}").write_text("x\n")
    for trap in TAIL_TRAPS:
        name = trap.format(s=suffix)
        (tmp_path / name).write_text("")
        names = sorted(p.name for p in tmp_path.iterdir())
        result = subprocess.run(
            [tail, "-n", "1", *names], cwd=tmp_path, capture_output=True, timeout=10
        )
        assert result.returncode != 0, name
        (tmp_path / name).unlink()


def test_the_refused_fp3_suffix_really_follows(tmp_path: Path) -> None:
    """Positive control: ``-fs0x1.fp3`` is -f with a hex-float sleep interval."""
    tail = shutil.which("tail")
    if tail is None:
        pytest.skip("tail is not installed here")
    (tmp_path / "-fs0x1.fp3").write_text("")
    (tmp_path / "a.fp3").write_text("x\n")
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run(
            [tail, "-n", "1", "-fs0x1.fp3", "a.fp3"], cwd=tmp_path, capture_output=True, timeout=2
        )


@pytest.mark.parametrize("find", ["bfs", "gnu"])
def test_find_path_glob_cannot_become_a_primary(tmp_path: Path, find: str) -> None:
    """``find *.py ...``: an expansion like ``-delete.py`` is an unknown primary in both."""
    for name in ("-delete.py", "-rm.py", "-exec.py", "b.py"):
        (tmp_path / name).write_text("")
    names = sorted(p.name for p in tmp_path.iterdir())
    if find == "bfs":
        argv, executable = ["bfs", *names, "-maxdepth", "0"], str(BUNDLED)
    else:
        gnu = shutil.which("find")
        if gnu is None:
            pytest.skip("find is not installed here")
        argv, executable = [gnu, *names, "-maxdepth", "0"], gnu
    result = subprocess.run(
        argv, executable=executable, cwd=tmp_path, capture_output=True, timeout=30
    )
    assert result.returncode != 0
    assert sorted(p.name for p in tmp_path.iterdir()) == names
    assert decide("find *.py -maxdepth 0") is True


def test_wc_files0_from_would_print_a_planted_name(tmp_path: Path) -> None:
    """Why ``wc -l *`` is refused and ``wc -l -- *`` is not: a file named
    ``--files0-from=.env`` makes GNU wc print .env's content in its error."""
    wc = shutil.which("wc")
    if wc is None:
        pytest.skip("wc is not installed here")
    (tmp_path / ".env").write_text("KEY=sk-planted\n")
    (tmp_path / "--files0-from=.env").write_text("")
    names = [p.name for p in tmp_path.iterdir() if not p.name.startswith(".")]
    leaked = subprocess.run([wc, "-l", *names], cwd=tmp_path, capture_output=True, timeout=10)
    assert b"sk-planted" in leaked.stderr
    safe = subprocess.run([wc, "-l", "--", *names], cwd=tmp_path, capture_output=True, timeout=10)
    assert b"sk-planted" not in safe.stdout + safe.stderr
    assert decide("wc -l *") is False
    assert decide("wc -l -- *") is True
    assert decide("wc -l *.py") is True  # no secret name ends in .py


@pytest.mark.parametrize("verb", ["md5sum", "sha1sum", "sha256sum", "b2sum", "cksum"])
def test_a_checksum_over_a_lead_glob_is_refused_and_a_planted_dash_c_shows_why(
    tmp_path: Path, verb: str
) -> None:
    """A planted file named ``-c`` makes ``md5sum *`` read the next file as a checklist; a
    link to /dev/zero there is a read that never ends. ``./*`` cannot expand to an option."""
    if verb == "cksum" and decide("cksum ./a") is False:
        pytest.skip("cksum is no glance")
    assert decide(f"{verb} *") is False
    assert decide(f"{verb} *.py") is False
    assert decide(f"{verb} ./*") is True
    binary = shutil.which(verb)
    if binary is None or verb != "md5sum":
        return
    (tmp_path / "-c").write_text("")
    (tmp_path / "d").symlink_to("/dev/zero")
    names = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(subprocess.TimeoutExpired):  # what the glob would have done
        subprocess.run([binary, *names], cwd=tmp_path, capture_output=True, timeout=2)
    safe = subprocess.run(  # what ./* does: two digests (and /dev/zero's is never asked)
        [binary, "--", *[f"./{n}" for n in names if n != "d"]], cwd=tmp_path,
        capture_output=True, timeout=10,
    )  # fmt: skip
    assert safe.returncode == 0
