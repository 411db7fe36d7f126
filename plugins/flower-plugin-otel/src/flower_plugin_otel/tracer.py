"""A flower process's events as one trace: the span tree of a run segment.

::

    flower run                                  one per process (a run segment)
    ├── step 确认需求                           a workflow step (Event "step")
    │   └── 确认需求                            a Runtime step: one Runtime.run, by label
    │       └── invoke_agent 确认需求           one CLI session (flower_session_scope)
    │           ├── question                    the human asked, until it settled
    │           └── claude_code.interaction     the CLI's own spans, by TRACEPARENT
    ├── step 干活
    │   ├── 干活                                round 1
    │   │   ├── invoke_agent 干活               generation 0
    │   │   ├── handoff 1                       writing the handoff, until it is done
    │   │   │   └── invoke_agent 干活           the handoff round (resumes the full session)
    │   │   └── invoke_agent 干活               generation 1, the successor
    │   ├── 干活·判定#1                         a judge ruling: state, failed checks
    │   ├── 干活#round2                         ...
    └── 收尾 / 旁路问答                          the bequest, side questions

Events say when something starts, ends or changes; :class:`RunTracer` keeps the open
spans and ends each with the time its event carries. Three things have no event of
their own, and are handled so:

- A CLI session: the ``flower_session_scope`` hook, which also makes the session's span
  the active one while the SDK starts the CLI (the SDK turns it into ``TRACEPARENT``).
- The end of a workflow step: its span ends when the next step starts, or at exit, with
  the end time of its last Runtime step (so its duration is right either way).
- A judge's ruling comes (``verdict``) right after its Runtime step's ``result``: a
  Runtime step's span is ended on the event *after* its result, so a verdict can still
  put the state and failed checks on the judge's own span.

Every span carries ``flower.run.id``, the run's id across wakes: a run that wakes five
times is five traces, found as one run by that attribute (:mod:`.segments` says why an
attribute and not only a link).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode

from flower_plugin_otel import attributes as A
from flower_plugin_otel import segments
from flower_plugin_otel.config import Settings
from flower_plugin_otel.metrics import Meters
from flower_plugin_otel.moments import Label, Moments

#: The Runtime step of a side question (flower.commands.aside.ASIDE_STEP).
ASIDE = "旁路问答"
#: What the CLI's result says when flower stopped the turn on purpose (a handoff, the
#: human's interrupt): ``terminal_reason`` ``aborted_streaming`` / ``aborted_tools``.
INTERRUPTED = "aborted_"
#: Ask states that settle a question.
SETTLED = frozenset({"answered", "timeout", "declined", "cancelled", "over_budget"})


def now_ns() -> int:
    return time.time_ns()


def ns(at: float | None) -> int:
    return int(at * 1e9) if at else now_ns()


class RunTracer(Moments):
    """Turns flower's events and sessions into spans; thread-safe, never raises out."""

    def __init__(self, tracer: trace.Tracer, meters: Meters, settings: Settings) -> None:
        self.tracer = tracer
        self.meters = meters
        self.settings = settings
        self.content = A.Content(settings)
        self.lock = threading.RLock()
        self.run_id = ""
        self.root: Span | None = None
        self.step: Span | None = None
        self.step_name = ""
        self.step_end = 0
        self.labels: dict[str, Label] = {}
        #: Runtime steps whose result came, ended on the next event (a verdict may come).
        self.pending: list[tuple[str, Label, int, str | None]] = []
        self.tools: dict[str, Span] = {}
        self.asks: dict[str, Span] = {}
        self.sessions: list[Span] = []  # the CLI sessions open now, latest last
        self.linked = False
        #: Tool spans of flower's own only when the CLI does not trace its tools.
        self.tool_spans = True

    # --- the tree's fixed points ------------------------------------------------------

    def _attrs(self, attrs: dict[str, Any] | None = None) -> dict[str, Any]:
        out = dict(attrs or {})
        if self.run_id:
            out[A.RUN_ID] = self.run_id
        return out

    def _root(self, at: int | None = None) -> Span:
        if self.root is None:
            from flower import __version__

            attrs = {A.KIND: "run", A.SPAN_KIND: "AGENT", "flower.version": __version__}
            self.root = self.tracer.start_span(
                "flower run",
                context=otel_context.get_current(),  # an embedding app's span, if any
                attributes=self._attrs(attrs),
                start_time=at or now_ns(),
            )
        return self.root

    def _parent_of(self, label: str) -> Span:
        """A Runtime step belongs to the workflow step it is named after, else the run."""
        if self.step is not None and A.step_of(label) == self.step_name:
            return self.step
        return self._root()

    def _start(self, name: str, parent: Span, at: int, attrs: dict[str, Any]) -> Span:
        ctx = trace.set_span_in_context(parent)
        return self.tracer.start_span(
            name, context=ctx, attributes=self._attrs(attrs), start_time=at
        )

    def _end(self, span: Span | None, at: int | None = None) -> None:
        if span is None:
            return
        if self.run_id:
            span.set_attribute(A.RUN_ID, self.run_id)
        span.end(end_time=at or now_ns())

    def _end_step(self) -> None:
        if self.step is not None:
            self._settle()
            self._end(self.step, self.step_end or None)
            self.step, self.step_name, self.step_end = None, "", 0

    def _label(self, label: str, at: int) -> Label:
        found = self.labels.get(label)
        if found is None:
            attrs: dict[str, Any] = {A.KIND: "runtime_step", A.STEP: label, A.SPAN_KIND: "CHAIN"}
            if label == ASIDE:
                attrs[A.KIND] = "side_question"
            found = Label(self._start(label, self._parent_of(label), at, attrs), at)
            self.labels[label] = found
        return found

    def _settle(self, verdict: dict[str, Any] | None = None) -> None:
        """End the Runtime steps whose result came; a verdict first marks its judge's."""
        pending, self.pending = self.pending, []
        for label, run, end, sid in pending:
            if verdict is not None and sid and verdict.get("session_id") == sid:
                self._rule(run.span, verdict)
            self._end(run.span, end)
            if self.labels.get(label) is run:
                del self.labels[label]

    def _rule(self, span: Span, verdict: dict[str, Any]) -> None:
        failed = list(verdict.get("failed") or [])
        span.set_attribute(A.KIND, "ruling")
        span.set_attribute(A.SPAN_KIND, "EVALUATOR")
        span.set_attribute("flower.verdict.state", str(verdict.get("state") or ""))
        span.set_attribute("flower.verdict.round", int(verdict.get("round") or 0))
        span.set_attribute("flower.verdict.failed_count", len(failed))
        text = self.content.text("\n".join(map(str, failed)))
        if text is not None and failed:
            span.set_attribute("flower.verdict.failed", text)
        reason = self.content.text(verdict.get("reason"))
        if reason is not None:
            span.set_attribute("flower.verdict.reason", reason)

    # --- sessions (the flower_session_scope hook) ---------------------------------------

    @contextmanager
    def session(self, request: Any) -> Iterator[None]:
        """The span of one CLI session, active while the SDK starts the CLI."""
        with self.lock:
            span = self._open_session(request)
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            yield
        except BaseException as exc:
            with self.lock:
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
                self._close_session(request, span)
            raise
        else:
            with self.lock:
                self._close_session(request, span)
        finally:
            try:
                otel_context.detach(token)
            except Exception:  # entered and left in different contexts: nothing to undo
                pass

    def _open_session(self, request: Any) -> Span:
        rt = request.runtime
        if not self.run_id:
            self._learn_run(rt)
        at = now_ns()
        self._settle()
        run = self._label(request.step, at)
        if run.wait is not None:  # the retry's wait is over: the next attempt starts
            self._end(run.wait, at)
            run.wait = None
        parent = run.handoff if (not request.watch and run.handoff is not None) else run.span
        spec = request.spec
        attrs: dict[str, Any] = {
            A.KIND: "session" if request.watch else "handoff_round",
            A.SPAN_KIND: "AGENT",
            A.STEP: request.step,
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": "anthropic",
            "gen_ai.agent.name": spec.name,
            "flower.attempt": int(request.attempt),
            "flower.generation": int(request.generation),
            "flower.resume": bool(request.resume),
            "flower.fork": bool(request.fork),
        }
        if spec.model:
            attrs["gen_ai.request.model"] = spec.model
        span = self._start(f"invoke_agent {spec.name}", parent, at, attrs)
        if request.watch:
            run.attempt = span
        self.sessions.append(span)
        return span

    def _close_session(self, request: Any, span: Span) -> None:
        out = request.outcome
        run = self.labels.get(request.step)
        if run is not None and run.attempt is span:
            run.attempt = None
        if span in self.sessions:
            self.sessions.remove(span)
        if out is None:
            self._end(span)
            return
        if out.session_id:
            span.set_attribute("gen_ai.conversation.id", out.session_id)
        if out.model:
            span.set_attribute("gen_ai.response.model", out.model)
            span.set_attribute("llm.model_name", out.model)
            span.set_attribute("llm.provider", "anthropic")
        for name, value in A.usage(out.usage).items():
            span.set_attribute(name, value)
        span.set_attribute("flower.cost_usd", float(out.cost_usd or 0.0))
        span.set_attribute("llm.cost.total", float(out.cost_usd or 0.0))
        span.set_attribute("flower.num_turns", int(out.num_turns or 0))
        span.set_attribute("flower.ok", bool(out.ok))
        if out.error and INTERRUPTED in out.error:  # a handoff or the human stopped the turn
            span.set_attribute("flower.interrupted", True)
        elif out.error:
            span.set_attribute("error.type", "session")
            span.set_attribute("flower.error", A.error(out.error))
            span.set_status(Status(StatusCode.ERROR, A.error(out.error)))
        text = self.content.text(out.text)
        if text is not None:
            span.set_attribute("output.value", text)
        self.meters.session(request.step, out.model or request.spec.model, out.usage, out.cost_usd)
        self._end(span)

    def _learn_run(self, rt: Any) -> None:
        """The run's lasting id, on the root; the link to the previous segment's root."""
        run_dir, workspace = getattr(rt, "run_dir", None), getattr(rt, "workspace", None)
        self.run_id = segments.lasting_run_id(rt)
        root = self._root()
        if self.run_id:
            root.set_attribute(A.RUN_ID, self.run_id)
        for name, value in A.workspace(workspace, self.settings).items():
            root.set_attribute(name, value)
        if run_dir is not None and not self.linked:
            self.linked = True
            segments.link(Path(run_dir), self.run_id, root)

    # --- events (the flower_event hook) -------------------------------------------------

    def event(self, event: Any) -> None:
        with self.lock:
            handler = getattr(self, f"_on_{event.kind}", None)
            if event.kind != "verdict":
                self._settle()
            if handler is not None:
                handler(event, event.payload or {}, ns(event.at))

    def _on_step(self, event: Any, p: dict[str, Any], at: int) -> None:
        self._end_step()
        self.step_name = str(event.step or "")
        attrs = {
            A.KIND: "step",
            A.SPAN_KIND: "CHAIN",
            A.STEP: self.step_name,
            "flower.step.index": int(p.get("index") or 0),
            "flower.step.total": int(p.get("total") or 0),
            "flower.step.resumed": bool(p.get("resumed")),
        }
        self.step = self._start(f"step {self.step_name}", self._root(at), at, attrs)

    def _on_skip(self, event: Any, p: dict[str, Any], at: int) -> None:
        self._end_step()
        self._root(at).add_event("step skipped", {A.STEP: str(event.step or "")}, at)

    def _on_prompt(self, event: Any, p: dict[str, Any], at: int) -> None:
        run = self.labels.get(event.step or "")
        if run is not None and run.attempt is not None:
            text = self.content.text(p.get("text"))
            if text is not None:
                run.attempt.set_attribute("input.value", text)

    def _on_text(self, event: Any, p: dict[str, Any], at: int) -> None:
        run = self.labels.get(event.step or "")
        if run is not None and run.attempt is not None and not p.get("subagent"):
            text = self.content.text(p.get("text"))
            if text is not None:
                run.attempt.set_attribute("output.value", text)

    def _on_context(self, event: Any, p: dict[str, Any], at: int) -> None:
        run = self.labels.get(event.step or "")
        if run is not None and run.attempt is not None:
            run.attempt.set_attribute("flower.context.used", int(p.get("used") or 0))
            run.attempt.set_attribute("flower.context.window", int(p.get("window") or 0))

    def _on_tool(self, event: Any, p: dict[str, Any], at: int) -> None:
        run = self.labels.get(event.step or "")
        if not self.tool_spans or run is None or run.attempt is None or not p.get("id"):
            return
        name = str(p.get("name") or "")
        attrs: dict[str, Any] = {
            A.KIND: "tool",
            A.SPAN_KIND: "TOOL",
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": str(p["id"]),
            "flower.subagent": bool(p.get("subagent")),
        }
        self.content.put(attrs, "gen_ai.tool.call.arguments", p.get("input"))
        self.tools[str(p["id"])] = self._start(f"execute_tool {name}", run.attempt, at, attrs)

    def _on_tool_result(self, event: Any, p: dict[str, Any], at: int) -> None:
        span = self.tools.pop(str(p.get("id") or ""), None)
        if span is None:
            return
        if p.get("error"):
            span.set_status(Status(StatusCode.ERROR))
        text = self.content.text(p.get("text"))
        if text is not None:
            span.set_attribute("gen_ai.tool.call.result", text)
        self._end(span, at)

    def _on_handoff(self, event: Any, p: dict[str, Any], at: int) -> None:
        run = self.labels.get(event.step or "")
        if run is None:
            return
        phase = p.get("phase")
        if phase == "near":
            target = run.attempt or run.span
            target.add_event(
                "context near the handoff point", A.numbers(p, "used", "at", "window"), at
            )
        elif phase == "writing":
            generation = int(p.get("generation") or 0) + 1
            attrs = {A.KIND: "handoff", A.SPAN_KIND: "CHAIN", A.STEP: event.step or ""}
            attrs.update(A.numbers(p, "used", "window"))
            attrs["flower.handoff.generation"] = generation
            attrs["flower.handoff.overflow"] = bool(p.get("overflow"))
            run.handoff = self._start(f"handoff {generation}", run.span, at, attrs)
        elif phase == "done":
            span = run.handoff or self._start(
                "handoff", run.span, at, {A.KIND: "handoff", A.STEP: event.step or ""}
            )
            span.set_attribute("flower.handoff.degraded", bool(p.get("degraded")))
            span.set_attribute("flower.handoff.audited", int(p.get("audited") or 0))
            span.set_attribute("flower.handoff.sections", len(p.get("sections") or []))
            self.meters.handoff(event.step or "", bool(p.get("degraded")))
            self._end(span, at)
            run.handoff = None

    def _on_retry(self, event: Any, p: dict[str, Any], at: int) -> None:
        run = self.labels.get(event.step or "")
        if run is None:
            return
        kind = str(p.get("class") or "unknown")
        attrs: dict[str, Any] = {
            A.KIND: "retry_wait",
            A.STEP: event.step or "",
            "error.type": kind,
            "flower.retry.attempt": int(p.get("attempt") or 0),
            "flower.retry.max_attempts": int(p.get("max_attempts") or 0),
            "flower.retry.delay_s": float(p.get("delay") or 0.0),
            "flower.retry.resume": bool(p.get("resume")),
            "flower.error": A.error(p.get("error")),
        }
        self._end(run.wait, at)
        run.wait = self._start("retry wait", run.span, at, attrs)
        self.meters.retry(event.step or "", kind)

    def _on_result(self, event: Any, p: dict[str, Any], at: int) -> None:
        label = str(event.step or "")
        run = self.labels.get(label)
        if run is None:  # refused before any session (the budget): a span all the same
            duration = float(p.get("duration_s") or 0.0)
            run = self._label(label, at - int(duration * 1e9))
        self._end(run.wait, at)
        self._end(run.handoff, at)
        run.wait = run.handoff = None
        span = run.span
        span.set_attribute("flower.ok", bool(p.get("ok")))
        span.set_attribute("flower.cost_usd", float(p.get("cost_usd") or 0.0))
        span.set_attribute("flower.num_turns", int(p.get("num_turns") or 0))
        span.set_attribute("flower.attempts", int(p.get("attempts") or 0))
        span.set_attribute("flower.context.used", int(p.get("context") or 0))
        if p.get("session_id"):
            span.set_attribute("gen_ai.conversation.id", str(p["session_id"]))
        if p.get("stopped"):
            span.set_attribute("flower.stopped", True)
        if not p.get("ok"):
            span.set_status(Status(StatusCode.ERROR, A.error(p.get("error"))))
            span.set_attribute("flower.error", A.error(p.get("error")))
        if self.step is not None and A.step_of(label) == self.step_name:
            self.step_end = max(self.step_end, at)
        self.pending.append((label, run, at, p.get("session_id")))

    def _on_verdict(self, event: Any, p: dict[str, Any], at: int) -> None:
        self._settle(verdict=p)
        state = str(p.get("state") or "")
        self.meters.verdict(event.step or "", state)
        if self.step is not None:
            attrs: dict[str, str | int] = {
                "flower.verdict.state": state,
                "flower.verdict.round": int(p.get("round") or 0),
            }
            self.step.add_event("verdict", attrs, at)
            self.step.set_attribute("flower.verdict.state", state)

    def _on_check(self, event: Any, p: dict[str, Any], at: int) -> None:
        """A check flower ran itself: a span of its own under the step, as long as it ran,
        with its state and exit status (its command and output only with content on)."""
        parent = self.step or self._root(at)
        began = at - int(float(p.get("seconds") or 0.0) * 1e9)
        attrs: dict[str, Any] = {
            A.KIND: "check",
            A.SPAN_KIND: "TOOL",
            A.STEP: self.step_name,
            "flower.check.index": int(p.get("index") or 0),
            "flower.check.round": int(p.get("round") or 0),
            "flower.check.state": str(p.get("state") or ""),
            "flower.check.isolated": bool(p.get("isolated")),
        }
        if p.get("status") is not None:
            attrs["flower.check.status"] = int(p["status"])
        self.content.put(attrs, "input.value", p.get("command") or p.get("check"))
        self.content.put(attrs, "output.value", p.get("tail"))
        span = self._start(f"check {p.get('index')}", parent, began, attrs)
        if p.get("state") != "passed":
            span.set_status(Status(StatusCode.ERROR, A.error(p.get("why"))))
        self._end(span, at)

    def _on_ask(self, event: Any, p: dict[str, Any], at: int) -> None:
        ask_id = str(p.get("id") or "")
        state = str(p.get("state") or "")
        span = self.asks.get(ask_id)
        if span is None:  # asked (or settled at once: nobody is there, --timeout 0)
            asked = ns(p.get("asked_at")) if p.get("asked_at") else at
            parent = self.sessions[-1] if self.sessions else (self.step or self._root(at))
            attrs: dict[str, Any] = {
                A.KIND: "question",
                A.SPAN_KIND: "CHAIN",
                "flower.ask.id": ask_id,
                "flower.ask.options": len(p.get("options") or []),
            }
            self.content.put(attrs, "input.value", p.get("question"))
            span = self.asks[ask_id] = self._start("question", parent, min(asked, at), attrs)
            self.meters.waiting(+1)
        if state not in SETTLED:
            return
        del self.asks[ask_id]
        asked_at = p.get("asked_at")
        span.set_attribute("flower.ask.state", state)
        if asked_at:
            span.set_attribute("flower.ask.waited_s", round(max(0.0, at / 1e9 - asked_at), 3))
        text = self.content.text(p.get("answer"))
        if text is not None:
            span.set_attribute("output.value", text)
        self.meters.waiting(-1)
        self._end(span, at)

    # --- the end ------------------------------------------------------------------------

    def close(self) -> None:
        """End every span still open (the process is exiting): innermost first."""
        with self.lock:
            at = now_ns()
            self._settle()
            for span in list(self.tools.values()) + list(self.asks.values()):
                span.set_attribute("flower.open_at_exit", True)
                self._end(span, at)
            self.tools.clear()
            for _ in self.asks:
                self.meters.waiting(-1)
            self.asks.clear()
            for run in list(self.labels.values()):
                for inner in (run.wait, run.handoff, run.attempt):
                    if inner is not None:
                        inner.set_attribute("flower.open_at_exit", True)
                        self._end(inner, at)
                run.span.set_attribute("flower.open_at_exit", True)
                self._end(run.span, at)
            self.labels.clear()
            self._end_step()
            if self.root is not None:
                self._end(self.root, at)
                self.root = None
