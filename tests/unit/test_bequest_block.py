"""The bequest block in CLAUDE.md / AGENTS.md: flower owns only the text between its markers.

The user's own text is the thing at risk, so most tests check that every byte outside the
block survives (CRLF, undecodable bytes, broken markers) and that a rerun with the same body
writes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flower.workflow.bequest_block import END, NOTE, START, Placement, place_block, place_everywhere

from ..fuzz import examples


def block(body: str, eol: str = "\n") -> str:
    lines = [START, NOTE, *body.split("\n"), END] if body else [START, NOTE, END]
    return "".join(line + eol for line in lines)


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


# --- the ordinary cases ------------------------------------------------------------------


def test_creates_a_missing_file_with_just_the_block(tmp_path: Path) -> None:
    path = tmp_path / "CLAUDE.md"
    got = place_block(path, "This is flower's project.\n\nRun `make test`.\n\n")
    assert got == Placement(path, "created", "")
    assert path.read_text() == block("This is flower's project.\n\nRun `make test`.")
    assert path.read_bytes().endswith(b"\n")


def test_a_missing_folder_is_not_created(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        place_block(tmp_path / "nope" / "CLAUDE.md", "body")
    assert not (tmp_path / "nope").exists()


def test_replaces_only_the_inside(tmp_path: Path) -> None:
    head, tail = "# Mine\n\nkeep this\n", "\n## After\nmore of mine"
    path = write(tmp_path / "AGENTS.md", head + "  " + START + "  \nold body\n" + END + tail)
    got = place_block(path, "new body")
    assert got.action == "replaced" and got.warning == ""
    text = path.read_text()
    assert text == head + "  " + START + "  \n" + NOTE + "\nnew body\n" + END + tail


def test_same_body_again_writes_nothing(tmp_path: Path) -> None:
    path = write(tmp_path / "CLAUDE.md", "mine\n\n" + block("the body"))
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    before = path.read_bytes()
    got = place_block(path, "the body\n\n")
    assert got.action == "unchanged" and got.warning == ""
    assert path.read_bytes() == before
    assert path.stat().st_mtime_ns == 1_000_000_000


def test_a_file_without_markers_gets_the_block_appended_after_a_blank_line(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "CLAUDE.md", "# Mine\nno newline at end")
    got = place_block(path, "body")
    assert got == Placement(path, "appended", "")
    assert path.read_text() == "# Mine\nno newline at end\n\n" + block("body")
    assert place_block(path, "body").action == "unchanged"


def test_an_empty_file_gets_just_the_block(tmp_path: Path) -> None:
    path = write(tmp_path / "CLAUDE.md", "")
    assert place_block(path, "body").action == "appended"
    assert path.read_text() == block("body")


def test_a_file_ending_in_a_blank_line_gets_no_second_one(tmp_path: Path) -> None:
    path = write(tmp_path / "CLAUDE.md", "mine\n\n")
    place_block(path, "body")
    assert path.read_text() == "mine\n\n" + block("body")


def test_crlf_files_stay_crlf(tmp_path: Path) -> None:
    head, tail = "# Mine\r\n\r\n", "after\r\n"
    path = write(tmp_path / "CLAUDE.md", head + START + "\r\nold\r\n" + END + "\r\n" + tail)
    assert place_block(path, "line one\nline two\r\n").action == "replaced"
    assert path.read_bytes() == (head + block("line one\nline two", "\r\n") + tail).encode()
    assert place_block(path, "line one\r\nline two").action == "unchanged"


def test_crlf_file_without_block_gets_a_crlf_block(tmp_path: Path) -> None:
    path = write(tmp_path / "CLAUDE.md", "a\r\nb\r\n")
    place_block(path, "x\ny")
    assert path.read_bytes() == ("a\r\nb\r\n\r\n" + block("x\ny", "\r\n")).encode()


# --- broken and duplicated markers ---------------------------------------------------------

BROKEN = {
    "start only": ("mine\n" + START + "\nhalf a block\n", "without an end marker"),
    "end only": ("mine\n" + END + "\nmore\n", "without a start marker"),
    "end before start": ("a\n" + END + "\nb\n" + START + "\nc\n", "end marker before"),
    "two blocks": (block("one") + "mine\n" + block("two") + "tail\n", "duplicated"),
    "two starts": (START + "\n" + START + "\nx\n" + END + "\n", "duplicated"),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_broken_markers_append_and_delete_nothing(tmp_path: Path, name: str) -> None:
    original, what = BROKEN[name]
    path = write(tmp_path / "CLAUDE.md", original)
    got = place_block(path, "body")
    assert got.action == "appended"
    assert str(path) in got.warning and what in got.warning and "remove" in got.warning
    assert "\n" not in got.warning
    sep = "" if original.endswith("\n\n") else "\n"
    assert path.read_text() == original + sep + block("body")

    before = path.read_bytes()
    again = place_block(path, "body")
    assert again.action == "unchanged" and again.warning
    assert path.read_bytes() == before

    third = place_block(path, "another body")
    assert third.action == "appended" and third.warning
    assert path.read_text() == original + sep + block("body") + "\n" + block("another body")
    assert place_block(path, "another body").action == "unchanged"


def test_a_block_at_the_end_with_other_content_is_still_appended_to(tmp_path: Path) -> None:
    original = "mine\n" + START + "\n" + block("body")  # stray start, then our block
    path = write(tmp_path / "CLAUDE.md", original)
    got = place_block(path, "body")
    assert got.action == "unchanged" and "duplicated" in got.warning
    assert path.read_text() == original


def test_text_after_the_last_block_defeats_the_unchanged_shortcut(tmp_path: Path) -> None:
    original = block("one") + block("body") + "user wrote after it\n"
    path = write(tmp_path / "CLAUDE.md", original)
    assert place_block(path, "body").action == "appended"
    assert path.read_text().startswith(original)


# --- what is not a marker, and what cannot break the block --------------------------------


def test_inline_marker_text_is_not_a_marker(tmp_path: Path) -> None:
    original = f"flower writes `{START}` and `{END}` around its block.\nSee {START} here.\n"
    path = write(tmp_path / "CLAUDE.md", original)
    got = place_block(path, "body")
    assert got == Placement(path, "appended", "")
    assert path.read_text() == original + "\n" + block("body")
    assert place_block(path, "body2").action == "replaced"
    assert path.read_text() == original + "\n" + block("body2")


def test_marker_lines_in_the_body_cannot_break_the_block(tmp_path: Path) -> None:
    path = tmp_path / "CLAUDE.md"
    evil = f"intro\n{END}\n  {START}  \nmentions `{END}` inline\n{END}"
    place_block(path, evil)
    lines = path.read_text().splitlines()
    assert [line.strip() for line in lines].count(START) == 1
    assert [line.strip() for line in lines].count(END) == 1
    assert f"mentions `{END}` inline" in lines
    assert "&lt;!-- flower:bequest:end -->" in lines
    assert place_block(path, evil).action == "unchanged"
    assert place_block(path, "calm").action == "replaced"
    assert path.read_text() == block("calm")


# --- place_everywhere, permissions, links --------------------------------------------------


def test_place_everywhere_writes_both(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "mine\n")
    got = place_everywhere(tmp_path, "body")
    assert [(p.path.name, p.action) for p in got] == [
        ("CLAUDE.md", "created"),
        ("AGENTS.md", "appended"),
    ]
    assert (tmp_path / "CLAUDE.md").read_text() == block("body")
    assert (tmp_path / "AGENTS.md").read_text() == "mine\n\n" + block("body")


def test_place_everywhere_reports_a_failure_and_still_writes_the_other(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").mkdir()
    got = place_everywhere(tmp_path, "body")
    assert got[0].path == tmp_path / "CLAUDE.md" and got[0].action == "failed"
    assert "CLAUDE.md" in got[0].warning
    assert got[1].action == "created"
    assert (tmp_path / "AGENTS.md").read_text() == block("body")


def test_permission_bits_are_kept(tmp_path: Path) -> None:
    path = write(tmp_path / "CLAUDE.md", "mine\n")
    path.chmod(0o640)
    place_block(path, "body")
    assert path.stat().st_mode & 0o7777 == 0o640
    path.chmod(0o604)
    place_block(path, "other")
    assert path.stat().st_mode & 0o7777 == 0o604
    assert [p.name for p in tmp_path.iterdir()] == ["CLAUDE.md"]  # no temp file left


def test_a_new_file_follows_the_umask_not_0600(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        place_block(tmp_path / "CLAUDE.md", "body")
    finally:
        os.umask(old)
    assert (tmp_path / "CLAUDE.md").stat().st_mode & 0o777 == 0o644


def test_a_symlink_in_the_same_folder_is_written_through(tmp_path: Path) -> None:
    write(tmp_path / "CLAUDE.md", "mine\n")
    (tmp_path / "AGENTS.md").symlink_to("CLAUDE.md")
    got = place_everywhere(tmp_path, "body")
    assert [p.action for p in got] == ["appended", "unchanged"]
    assert (tmp_path / "AGENTS.md").is_symlink()
    assert (tmp_path / "CLAUDE.md").read_text() == "mine\n\n" + block("body")


def test_a_symlink_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside.txt", "precious\n")
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "CLAUDE.md").symlink_to(outside)
    got = place_everywhere(tmp_path / "proj", "body")
    assert got[0].action == "failed" and "symlink" in got[0].warning
    assert outside.read_text() == "precious\n"
    assert got[1].action == "created"


# --- properties ----------------------------------------------------------------------------

# User text: arbitrary bytes, with plenty of CR, LF, CRLF and bytes that are not UTF-8.
user_bytes = st.lists(
    st.one_of(
        st.binary(max_size=12),
        st.sampled_from([b"\r\n", b"\n", b"\r", b"\xff", b"\xc3", b"\xed\xa0\x80", b"  "]),
        st.text(max_size=8).map(lambda s: s.encode("utf-8", "surrogatepass")),
    ),
    max_size=8,
).map(b"".join)
bodies = st.text(max_size=60)
FUZZ = settings(
    max_examples=examples(80),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@FUZZ
@given(
    before=user_bytes,
    after=user_bytes,
    eol=st.sampled_from([b"\n", b"\r\n"]),
    body=bodies,
    other=bodies,
)
def test_user_text_around_the_block_survives_byte_for_byte(
    tmp_path: Path, before: bytes, after: bytes, eol: bytes, body: str, other: str
) -> None:
    path = tmp_path / "CLAUDE.md"
    head = before + b"\n" + START.encode() + eol
    tail = END.encode() + eol + after
    path.write_bytes(head + b"old" + eol + tail)
    if b"flower:bequest" in before + after:
        return  # the generated text would itself hold marker lines

    assert place_block(path, body) == Placement(path, "replaced", "")
    once = path.read_bytes()
    assert once.startswith(head) and once.endswith(tail)

    assert place_block(path, body).action == "unchanged"
    assert path.read_bytes() == once

    place_block(path, other)
    twice = path.read_bytes()
    assert twice.startswith(head) and twice.endswith(tail)
    place_block(path, body)
    assert path.read_bytes() == once  # back to the first body: the same bytes as before


@FUZZ
@given(before=user_bytes, body=bodies)
def test_appending_keeps_the_file_as_a_prefix(tmp_path: Path, before: bytes, body: str) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_bytes(before)
    if b"flower:bequest" in before:
        return
    got = place_block(path, body)
    assert got == Placement(path, "appended", "")
    after = path.read_bytes()
    assert after.startswith(before)
    assert place_block(path, body).action == "unchanged"
    assert path.read_bytes() == after
