"""What a document costs to show: pathological Markdown under the 2 MB cap once took
20-49 s of CPU per render (a paragraph of ``*[*[…``, a wide table), every request
rendering again. Now a render stops at a second of its thread's CPU (plain text then),
only the first 512 KB are rendered as Markdown, and requests for a document being
rendered share that one render; a version rendered is kept. CPU time measured with
``getrusage`` over requests to the real server (uvicorn)."""

from __future__ import annotations

import resource
import threading
import time
from pathlib import Path

import httpx

from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN

need(PLUGIN, NOT_INSTALLED)

from .pages import TOKEN, hub_with_question, port_of, served  # noqa: E402

COSTLY = "*[" * 200_000  # 400 KB: renderable by size, about 13 s of CPU unbounded
TABLE = "|" + "a|" * 500 + "\n|" + "-|" * 500 + "\n" + ("|" + "a|" * 500 + "\n") * 380


def cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def brief(tmp_path: Path) -> Path:
    return tmp_path / ".flower" / "notes" / "需求.md"


def test_a_costly_document_is_shown_as_plain_text_within_its_budget(tmp_path: Path) -> None:
    hub, _, _ = hub_with_question(tmp_path)
    with served(hub) as running:
        base = f"http://127.0.0.1:{port_of(running)}"
        with httpx.Client(base_url=base, headers={"X-Flower-Token": TOKEN}, timeout=30) as c:
            for text, why in [
                ("*[" * 1_000_000, "only documents up to 512 KB are rendered"),  # 2 MB
                (COSTLY, "rendering it took over 1 s"),
                (TABLE[:400_000], "rendering it took over 1 s"),
            ]:
                brief(tmp_path).write_text(text, encoding="utf-8")
                before, started = cpu(), time.monotonic()
                shown = c.get("/doc/brief")
                spent, took = cpu() - before, time.monotonic() - started
                assert shown.status_code == 200
                assert f"(shown as plain text: {why})" in shown.text, shown.text[:300]
                assert shown.text.count("*[") == text.count("*[")  # all of it, as text
                assert spent < 3.0 and took < 10, (why, spent, took)
            brief(tmp_path).write_text("## 目标\n\n写 *hello*\n", encoding="utf-8")
            shown = c.get("/doc/brief")
            assert "<h2>目标</h2>" in shown.text and "<em>hello</em>" in shown.text


def test_requests_for_a_document_share_its_render(tmp_path: Path) -> None:
    hub, _, _ = hub_with_question(tmp_path)
    brief(tmp_path).write_text(COSTLY, encoding="utf-8")
    with served(hub) as running:
        base = f"http://127.0.0.1:{port_of(running)}"
        answers: list[httpx.Response] = []

        def ask() -> None:
            with httpx.Client(base_url=base, headers={"X-Flower-Token": TOKEN}) as c:
                answers.append(c.get("/doc/brief", timeout=60))

        before = cpu()
        readers = [threading.Thread(target=ask) for _ in range(8)]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join(60)
        together = cpu() - before
        assert [a.status_code for a in answers] == [200] * 8
        assert len({a.text for a in answers}) == 1
        assert together < 4.0, together  # one render of about a second, not eight
        before = cpu()
        ask()  # the same version again: from memory
        assert cpu() - before < 0.5 and answers[-1].text == answers[0].text
        brief(tmp_path).write_text("## 新的\n", encoding="utf-8")
        ask()  # a new version: rendered
        assert "<h2>新的</h2>" in answers[-1].text
