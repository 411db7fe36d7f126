"""The scripted story told three times, once per test session, into Arize Phoenix.

Six ``flower`` processes and about thirty CLI sessions: too dear to tell per test, or per
xdist worker. The first worker to ask tells it (under a file lock in the session's
shared temp root), queries Phoenix for everything the tests assert on, stops Phoenix and
writes ``story.json``; the other workers wait on the lock and read the file. So every
test works on plain data, and Phoenix never outlives the telling.

The three tellings: the plugin off (``FLOWER_DISABLED_PLUGINS=otel``), on with the
collector down for the whole run (a closed loopback port), and on into Phoenix.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest

from flower.testing import ScriptedModel, need

need(
    importlib.util.find_spec("httpx") is not None,
    "the otel tests need httpx: pip install -e './plugins/flower-plugin-otel[test]'",
)
import httpx  # noqa: E402 - after the check: skipped with a reason, not a collection error

from . import scenario as SC  # noqa: E402
from .backend import Phoenix, free_port, phoenix_executable  # noqa: E402

TELLINGS = ("off", "dead", "live")


@dataclass
class Story:
    """What the tests assert on: each telling's two processes, and what Phoenix kept."""

    told: dict[str, list[SC.Ran]]
    root: str
    dead_url: str
    spans: list[dict[str, Any]]
    #: Span ids Phoenix's attribute query ``flower.run.id:<id>`` answered, by run id.
    found_by_run_id: dict[str, list[str]]
    #: The run folder's ``otel.json`` after the live telling.
    segments_file: dict[str, Any]
    #: How many bytes Phoenix keeps on disk, and which marker words are among them.
    stored_bytes: int
    stored_markers: list[str]

    def workspace(self, name: str) -> Path:
        return workspace(Path(self.root), name)

    @classmethod
    def load(cls, path: Path) -> Story:
        data = json.loads(path.read_text(encoding="utf-8"))
        data["told"] = {k: [SC.Ran(**r) for r in v] for k, v in data["told"].items()}
        return cls(**data)


def workspace(root: Path, name: str) -> Path:
    """Folders of one length (``tellOFF_``, ``tellDEAD``, ``tellLIVE``): the output wraps
    long paths, and must wrap them at the same places to compare."""
    return root / f"tell{name.upper():_<4}" / "proj"


def shared(tmp_path_factory: pytest.TempPathFactory) -> Story:
    """The story, told by the first worker of the session that asks for it."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = root / "shared-otel-story"
    with open(root / "shared-otel-story.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (folder / "story.json").exists():
                shutil.rmtree(folder, ignore_errors=True)  # a half-told one from a failure
                folder.mkdir()
                tell(folder)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return Story.load(folder / "story.json")


def clean_env(model: ScriptedModel, home: Path, **extra: str) -> dict[str, str]:
    """The shell's environment without its telemetry, flower and Claude settings, then
    offline (built here, not by the function-scoped ``offline`` fixture: the story is
    told before any test's own fixtures)."""
    drop = ("OTEL_", "FLOWER_", "CLAUDE_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    # this plugin and no other: another flower plugin the user has installed must not
    # change what the story prints (its lines, its hooks)
    only = {"FLOWER_LOAD_PLUGINS": "otel"}
    for name, value in {**model.env(home=home), "COLUMNS": "200", **only, **extra}.items():
        if value:
            env[name] = value
        else:
            env.pop(name, None)
    return env


def tell(folder: Path) -> None:
    executable = phoenix_executable()
    assert executable is not None
    (folder / "phoenix").mkdir()
    phoenix = Phoenix(executable, folder / "phoenix")  # it starts while the others run
    model = ScriptedModel()
    model.start()
    try:
        dead = f"http://127.0.0.1:{free_port()}"
        told: dict[str, list[SC.Ran]] = {}
        for name, extra in {
            "off": {"FLOWER_DISABLED_PLUGINS": "otel"},
            "dead": {"OTEL_SDK_DISABLED": "false", "OTEL_EXPORTER_OTLP_ENDPOINT": dead},
            "live": {
                "OTEL_SDK_DISABLED": "false",
                "OTEL_EXPORTER_OTLP_ENDPOINT": phoenix.url,
                "OTEL_METRICS_EXPORTER": "none",  # Phoenix takes traces only
            },
        }.items():
            if name == "live":
                phoenix.wait()
            ws = workspace(folder, name)
            model.play(SC.script(ws))
            told[name] = list(SC.both(ws, clean_env(model, folder / "home", **extra)))
        spans = arrived(phoenix)
        run_ids = {s["attributes"].get("flower.run.id", "") for s in spans}
        found = {rid: by_attribute(phoenix, "flower.run.id", rid) for rid in run_ids if rid}
        kept = ws / "runs" / "otel.json"
        stored = phoenix.stored_bytes()
        words = [*SC.MARKERS.values(), SC.KEY]
        target = os.environ.get("FLOWER_OTEL_SCREENSHOT")
        if target:
            from .screenshot import screenshot

            first = min(
                (s for s in spans if s["name"] == "flower run"),
                key=lambda s: s["attributes"].get("flower.run.segment", 0),
            )
            screenshot(phoenix, first["context"]["trace_id"], Path(target))
        story = Story(
            told=told,
            root=str(folder),
            dead_url=dead,
            spans=spans,
            found_by_run_id=found,
            segments_file=json.loads(kept.read_text(encoding="utf-8")) if kept.exists() else {},
            stored_bytes=len(stored),
            stored_markers=[w for w in words if w.encode() in stored],
        )
    finally:
        model.stop()
        phoenix.stop()
    tmp = folder / "story.json.tmp"
    tmp.write_text(json.dumps(asdict(story), ensure_ascii=False), encoding="utf-8")
    tmp.replace(folder / "story.json")


def arrived(phoenix: Phoenix, within: float = 60.0) -> list[dict[str, Any]]:
    """Every span, once both processes' roots are in and the count has settled (Phoenix
    stores what it received a little later)."""
    deadline = time.monotonic() + within
    before = -1
    while True:
        spans = phoenix.spans()
        roots = [s for s in spans if s["name"] == "flower run"]
        if (len(roots) >= 2 and len(spans) == before) or time.monotonic() > deadline:
            return spans
        before = len(spans)
        time.sleep(1.0)


def by_attribute(phoenix: Phoenix, name: str, value: str) -> list[str]:
    """The span ids Phoenix's own attribute filter answers for ``name:value``."""
    got = httpx.get(
        f"{phoenix.url}/v1/projects/default/spans",
        params={"attribute": f"{name}:{value}", "limit": 1000},
        timeout=30,
    )
    got.raise_for_status()
    return [s["context"]["span_id"] for s in got.json()["data"]]
