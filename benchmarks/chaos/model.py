"""The one scripted model every job's CLI talks to: each job's script, routed by a header.

The harness needs more than a stock :class:`~flower.testing.ScriptedModel`: twenty jobs
share it (each request carries its job in ``x-chaos-job``, set by ``flow.main``), it
can answer 529 to everything for a while (the ``overloaded`` fault), and for each
request it notes the reply's message id and when the reply was finished (what the store
check and the overlap check need).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from . import flow

_here = threading.local()


def chaos_model(scripts: dict[str, Any]) -> Any:
    """A ScriptedModel that plays each job's script (by the request's job header), can
    answer 529 to everything for a while, and notes per request its reply's id and when
    the answer was written (what the store and overlap checks need)."""
    from flower.testing import ScriptedModel, load_script
    from flower.testing import server as srv

    class Handler(srv._Handler):
        def do_POST(self) -> None:
            _here.rec = None
            try:
                super().do_POST()
            finally:
                rec = _here.rec
                if rec is not None:
                    rec.ended = time.time()

        def _reply(self, message: dict[str, Any], stream: bool) -> None:
            rec = _here.rec
            if rec is not None:
                rec.reply_id = message.get("id")
            super()._reply(message, stream)
            if rec is not None:
                rec.delivered = True

    class ChaosModel(ScriptedModel):
        def __init__(self) -> None:
            self.scripts = {job: load_script(s) for job, s in scripts.items()}
            self.storm_until = 0.0
            super().__init__(quiet=True)

        @property
        def _script(self) -> Any:
            return self.scripts.get(getattr(_here, "job", ""), load_script([]))

        @_script.setter
        def _script(self, value: Any) -> None:
            pass

        def _handler_class(self) -> type[srv._Handler]:
            return Handler

        def _decide(self, rec: Any) -> Any:
            _here.rec = rec
            rec.ended, rec.reply_id, rec.delivered, rec.tools = None, None, False, ()
            _here.job = rec.headers.get(flow.JOB_HEADER, "")
            conv, turn, fault = super()._decide(rec)
            if turn is not None and fault is None and time.time() < self.storm_until:
                fault = 529
                rec.outcome = "529"
            if turn is not None and fault is None:
                rec.tools = tuple(call.name for call in turn.tools)
            return conv, turn, fault

        def in_tool_call(self) -> set[int]:
            """The flowers (by pid) whose CLI is running a tool call now: the last reply
            sent to them asked for one, or came from inside a worker (the coordinator's
            Agent call is open while its worker works). A fault that lands there cuts a
            call off, which is what the cut-off check needs to see happen."""
            latest: dict[int, Any] = {}
            for rec in list(self.requests):
                if "count_tokens" not in rec.path:
                    latest[_pid(rec)] = rec
            return {
                pid
                for pid, rec in latest.items()
                if getattr(rec, "ended", None) and (rec.is_subagent or getattr(rec, "tools", ()))
            }

    return ChaosModel()


def _pid(rec: Any) -> int:
    try:
        return int(rec.headers.get(flow.PID_HEADER, "0"))
    except ValueError:
        return 0
