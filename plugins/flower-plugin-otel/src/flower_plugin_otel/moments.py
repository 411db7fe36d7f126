"""The moments of a run: events that change or mark a span rather than open one (a
wake, an offline probe, the human's interrupt or review, a refused call, an inbox line,
the budget, the bequest). A mixin of :class:`~flower_plugin_otel.tracer.RunTracer`, apart
so the tracer keeps to the tree's structure."""

from __future__ import annotations

from typing import Any

from opentelemetry.trace import Span

from flower_plugin_otel import attributes as A
from flower_plugin_otel.metrics import Meters


class Label:
    """One Runtime step (one ``Runtime.run`` call) and what is open inside it."""

    def __init__(self, span: Span, start: int) -> None:
        self.span = span
        self.start = start
        self.attempt: Span | None = None
        self.wait: Span | None = None
        self.handoff: Span | None = None


class Moments:
    """``_on_<kind>`` handlers for the moments; the tracer supplies the state below."""

    labels: dict[str, Label]
    step: Span | None
    sessions: list[Span]
    content: A.Content
    meters: Meters

    def _root(self, at: int | None = None) -> Span:
        raise NotImplementedError

    def _on_wake(self, event: Any, p: dict[str, Any], at: int) -> None:
        root = self._root(at)
        root.set_attribute("flower.run.woke", int(p.get("woke") or 1))
        if p.get("notice"):
            root.add_event("wake notice", {"flower.notice": A.error(p["notice"])}, at)

    def _on_offline(self, event: Any, p: dict[str, Any], at: int) -> None:
        run = self.labels.get(event.step or "")
        if run is None:
            return
        target = run.wait or run.span
        attrs: dict[str, str | float | int] = {}
        attrs.update(A.numbers(p, "waited", "next_probe_in", "max_wait"))
        attrs["server.address"] = str(p.get("host") or "")
        attrs["server.port"] = int(p.get("port") or 0)
        target.add_event("offline", attrs, at)
        target.set_attribute("flower.offline.waited_s", float(p.get("waited") or 0.0))

    def _on_interrupt(self, event: Any, p: dict[str, Any], at: int) -> None:
        run = self.labels.get(event.step or "")
        if run is not None:
            attrs: dict[str, Any] = {"flower.paused": bool(p.get("paused"))}
            self.content.put(attrs, "flower.said", p.get("said"))
            run.span.add_event("interrupted by the human", attrs, at)

    def _on_refused(self, event: Any, p: dict[str, Any], at: int) -> None:
        run = self.labels.get(event.step or "")
        if run is not None:
            target = run.attempt or run.span
            target.add_event(
                "walls refused a call", {"gen_ai.tool.name": str(p.get("tool") or "")}, at
            )

    def _on_override(self, event: Any, p: dict[str, Any], at: int) -> None:
        from flower.records.ledger import AGREES

        choice = str(p.get("choice") or "")
        self.meters.review(event.step or "", choice, choice in AGREES)
        attrs: dict[str, Any] = {"flower.override.choice": choice}
        self.content.put(attrs, "flower.said", p.get("said"))
        (self.step or self._root(at)).add_event("the human overruled the judge", attrs, at)

    def _on_mail(self, event: Any, p: dict[str, Any], at: int) -> None:
        attrs: dict[str, Any] = {"flower.mail.state": str(p.get("state") or "")}
        self.content.put(attrs, "flower.mail.text", p.get("text"))
        (self.sessions[-1] if self.sessions else self._root(at)).add_event("inbox", attrs, at)

    def _on_task(self, event: Any, p: dict[str, Any], at: int) -> None:
        attrs = {"flower.unverifiable": len(p.get("unverifiable") or [])}
        (self.step or self._root(at)).add_event("checks that cannot be verified here", attrs, at)

    def _on_budget(self, event: Any, p: dict[str, Any], at: int) -> None:
        root = self._root(at)
        if p.get("spent") is not None:
            root.set_attribute("flower.budget.spent_usd", float(p["spent"]))
        if p.get("cap") is not None:
            root.set_attribute("flower.budget.cap_usd", float(p["cap"]))
        if p.get("phase") in ("near", "reached"):
            root.add_event(f"budget {p['phase']}", A.numbers(p, "spent", "cap", "left"), at)

    def _on_bequest(self, event: Any, p: dict[str, Any], at: int) -> None:
        files = p.get("files") or []
        self._root(at).add_event("bequest", {"flower.bequest.files": len(files)}, at)
