"""The run's numbers as OpenTelemetry metrics, for dashboards and alerts over many runs.

Spans tell one run's story; metrics answer "what did last week cost, how often do the
judges and the humans disagree". Each instrument is keyed by the workflow step (``干活``,
not ``干活#round7``: rounds would grow the series without end) and, for tokens and cost,
by the model:

===========================  ===============  ============================================
``flower.tokens``            counter          tokens by ``gen_ai.token.type`` (input,
                                              output, cache_read, cache_creation)
``flower.cost``              counter, USD     what the CLI sessions cost
``flower.retries``           counter          failed attempts retried, by ``error.type``
``flower.handoffs``          counter          full contexts handed over, ``flower.degraded``
``flower.questions.waiting`` up-down counter  questions to the human not yet settled
``flower.judge.verdicts``    counter          rulings by ``flower.verdict.state``
``flower.judge.reviews``     counter          the human's reviews of a ruling, by whether
                                              they agreed with the judge
                                              (``flower.judge.agreed``)
===========================  ===============  ============================================
"""

from __future__ import annotations

from typing import Any

from opentelemetry.metrics import Meter

from flower_plugin_otel.attributes import STEP, TOKEN_TYPES, step_of


class Meters:
    """The instruments, made once per process."""

    def __init__(self, meter: Meter) -> None:
        self.tokens = meter.create_counter(
            "flower.tokens", unit="{token}", description="Tokens the CLI sessions used"
        )
        self.cost = meter.create_counter(
            "flower.cost", unit="USD", description="What the CLI sessions cost"
        )
        self.retries = meter.create_counter(
            "flower.retries", unit="{attempt}", description="Failed attempts that were retried"
        )
        self.handoffs = meter.create_counter(
            "flower.handoffs", unit="{handoff}", description="Full contexts handed over"
        )
        self.questions = meter.create_up_down_counter(
            "flower.questions.waiting", unit="{question}", description="Questions not settled"
        )
        self.verdicts = meter.create_counter(
            "flower.judge.verdicts", unit="{verdict}", description="The judge's rulings"
        )
        self.reviews = meter.create_counter(
            "flower.judge.reviews",
            unit="{review}",
            description="The human's reviews of a ruling, agreeing with the judge or not",
        )

    def session(
        self, label: str, model: str | None, usage: dict[str, Any] | None, cost: float
    ) -> None:
        base: dict[str, str] = {STEP: step_of(label)}
        if model:
            base["gen_ai.request.model"] = model
        for key, kind in TOKEN_TYPES.items():
            value = (usage or {}).get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                self.tokens.add(value, {**base, "gen_ai.token.type": kind})
        if cost:
            self.cost.add(float(cost), base)

    def retry(self, label: str, kind: str) -> None:
        self.retries.add(1, {STEP: step_of(label), "error.type": kind})

    def handoff(self, label: str, degraded: bool) -> None:
        self.handoffs.add(1, {STEP: step_of(label), "flower.degraded": degraded})

    def waiting(self, delta: int) -> None:
        self.questions.add(delta)

    def verdict(self, step: str, state: str) -> None:
        self.verdicts.add(1, {STEP: step_of(step), "flower.verdict.state": state or "unclear"})

    def review(self, step: str, choice: str, agreed: bool) -> None:
        attrs = {STEP: step_of(step), "flower.override.choice": choice}
        self.reviews.add(1, {**attrs, "flower.judge.agreed": agreed})
