"""Documents are whatever the agents left in the workbench: a link out of it, a FIFO, a
link to ``/dev/zero``, a 31 MB handoff. The page shows regular files inside the
workbench only, the first megabytes of them, read and rendered off the server's loop."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN

need(PLUGIN, NOT_INSTALLED)

import httpx  # noqa: E402 - a test extra, like the plugin: after the check

from .pages import TOKEN, hub_with_question, port_of, served  # noqa: E402


def test_links_fifos_and_devices_are_not_documents(tmp_path: Path) -> None:
    hub, _, _ = hub_with_question(tmp_path)
    notes = tmp_path / ".flower" / "notes"
    secret = tmp_path / "outside" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("-----BEGIN PRIVATE KEY----- the user's own", encoding="utf-8")
    (notes / "需求.md").symlink_to(secret)  # a link out of the workbench
    os.mkfifo(notes / "目标.md")  # blocks whoever opens it for reading
    (notes / "判定记录.md").symlink_to("/dev/zero")  # endless
    (notes / "交接-link.md").symlink_to(secret)  # a link is never "the newest handoff"
    with served(hub) as running:
        port = port_of(running)
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, headers={"X-Flower-Token": TOKEN}, timeout=10) as c:
            started = time.monotonic()
            brief, goal, ledger = c.get("/doc/brief"), c.get("/doc/goal"), c.get("/doc/ledger")
            handoff = c.get("/doc/handoff")
            assert time.monotonic() - started < 5  # nothing blocked, nothing read forever
            assert brief.status_code == 403 and "PRIVATE KEY" not in brief.text
            assert "需求.md is a link or cannot be opened: not shown" in brief.text
            assert goal.status_code == 403 and "目标.md is not a regular file" in goal.text
            assert ledger.status_code == 403 and "a link" in ledger.text
            assert "no such document yet" in handoff.text and "PRIVATE" not in handoff.text
            # the notes folder itself replaced by a link: refused as a whole
            os.rename(notes, tmp_path / ".flower" / "notes-real")
            (tmp_path / ".flower" / "notes").symlink_to(secret.parent)
            moved = c.get("/doc/brief")
            assert moved.status_code == 403 and "PRIVATE" not in moved.text
            assert c.get("/state").status_code == 200  # the server is fine


def test_a_huge_handoff_is_cut_and_never_blocks_the_page(tmp_path: Path) -> None:
    hub, _, _ = hub_with_question(tmp_path)
    notes = tmp_path / ".flower" / "notes"
    block = "## 交接\n\n" + "- 做了一件事,然后又做了一件事 `code` **bold**\n" * 40 + "\n"
    (notes / "交接-干活.md").write_text(block * 14_000, encoding="utf-8")  # about 31 MB
    assert (notes / "交接-干活.md").stat().st_size > 30_000_000
    with served(hub) as running:
        port = port_of(running)
        base = f"http://127.0.0.1:{port}"
        got: dict[str, httpx.Response] = {}
        done = threading.Event()

        def read_handoff() -> None:
            with httpx.Client(base_url=base, headers={"X-Flower-Token": TOKEN}) as c:
                got["handoff"] = c.get("/doc/handoff", timeout=120)
            done.set()

        reader = threading.Thread(target=read_handoff)
        reader.start()
        time.sleep(0.1)  # the handoff's request is in
        during: list[float] = []  # requests served while the handoff was being rendered
        with httpx.Client(base_url=base, headers={"X-Flower-Token": TOKEN}, timeout=30) as c:
            while not done.is_set():
                started = time.monotonic()
                assert c.get("/state").status_code == 200
                if not done.is_set():
                    during.append(time.monotonic() - started)
        reader.join(60)
    # a read on the server's loop would hold every request until it ended
    assert not during or max(during) < 2.0, during
    shown = got["handoff"]
    assert shown.status_code == 200
    assert "(showing the first 2 MB of 31." in shown.text
    assert "(shown as plain text: only documents up to 512 KB are rendered)" in shown.text
    assert '<pre class="plain">## 交接' in shown.text and "<h2>" not in shown.text
    assert len(shown.content) < 8_000_000
