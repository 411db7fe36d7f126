"""The clarify step: find out what is wanted, then freeze it as a four-section brief.

Of all the mistakes a long run makes, a misunderstood request is the one that pruning
makes worse: the context that showed the misunderstanding is gone, the decision built
on it stays and looks like any other. So before anyone works, a clarifier asks the
human (through the channel's ask tool), and its answer is parsed into a
:class:`~flower.workflow.brief.Brief` and written to disk (the freeze). Everything after
reads the frozen brief; nobody downstream ever sees the questions and answers.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from flower.kernel.lang import pick
from flower.roles.factory import clarify
from flower.workflow.base import Ctx, Prompt, Step
from flower.workflow.brief import Brief
from flower.workflow.frozen import frozen_step

if TYPE_CHECKING:
    from flower.kernel.agent_spec import AgentSpec
    from flower.runtime.runner import StepResult

#: ``ctx[BRIEF_KEY]`` is the frozen :class:`Brief` (``ctx[<step name>]`` its prompt block).
BRIEF_KEY = "_brief"
#: ``ctx[MISSING_KEY]``: the sections the clarifier's last answer lacked (their headings, in
#: the language in effect).
MISSING_KEY = "_brief_missing"

#: Sent instead of the request when the clarify session continues from an earlier
#: process: the questions already answered are in that session, asking them again
#: would waste the human's time.
CLARIFY_RESUME = (
    "接着上次没做完的需求澄清,不要从头开始。已经问过、人已经答过的问题不要再问;"
    "还不清楚、又会改变做法的地方接着问。清楚了就按规定的四节输出需求。"
)
CLARIFY_RESUME_EN = (
    "Carry on with the clarifying you had not finished; do not start over. Do not ask again"
    " what you already asked and the human already answered; keep asking about what is still"
    " unclear and would change the approach. Once it is clear, write the brief in the four"
    " sections your rules give."
)

#: Sent back to the same session when its answer lacked sections.
MISSING_PROMPT = (
    "你的输出缺了这几节:{missing}。不要重新问人已经答过的问题。"
    "把四节(目标、验收标准、边界、未知与假设)完整地再输出一遍,标题一字不改,每节都不能空;"
    "拿不准的写进「未知与假设」并写明你的假设。"
)
MISSING_PROMPT_EN = (
    "Your answer lacked these sections: {missing}. Do not ask the human again what they"
    " already answered. Write all four sections (Goal, Acceptance criteria, Scope, Unknowns"
    " and assumptions) out again in full, headings word for word, none of them empty; put"
    ' what you are unsure of under "Unknowns and assumptions" with your assumption.'
)


def clarify_resume(lang: str | None = None) -> str:
    """:data:`CLARIFY_RESUME` in ``lang`` (default: the language in effect)."""
    return pick(CLARIFY_RESUME, CLARIFY_RESUME_EN, lang)


def clarify_step(
    channel: Any,
    *,
    brief_path: str | Path,
    prompt: Prompt,
    name: str = "确认需求",
    spec: AgentSpec | None = None,
    instructions: str = "",
    always_ask: bool = False,
    on_fail: str = "stop",
    retries: int = 0,
    **spec_kw: Any,
) -> Step:
    """A step that clarifies the request and freezes the brief at ``brief_path``.

    - ``when``: a complete brief already on disk skips the step (``always_ask=True``
      never skips); the brief is loaded into ``ctx`` even then, or later steps would
      run without requirements.
    - ``gate``: the answer parsed as a :class:`Brief`; incomplete -> the missing
      headings go to ``ctx[MISSING_KEY]`` and the attempt fails; complete -> written to
      ``brief_path`` (frozen) and loaded into ``ctx``.
    - ``on_reject``: with ``retries``, a next attempt continues the same session and
      asks only for the missing sections (a fresh session would ask the human again).
    - ``reduce``: ``ctx[name]`` is the parsed brief's prompt block, not the model's raw
      text (which may carry pasted code or chatter).
    - ``resume_prompt``: :data:`CLARIFY_RESUME` (``CLARIFY_RESUME_EN`` in English).

    Args:
        channel: The human channel; its ask tool is the clarifier's only way out.
        brief_path: Where the brief is frozen (``<notes>/需求.md`` in the starter flow).
        prompt: The human's request (or a function of ``ctx`` that builds it).
        spec: The clarifier; default ``clarify(name, channel, instructions=…,
            **spec_kw)``.
    """
    path = Path(brief_path)
    agent = spec or clarify(name, channel, instructions=instructions, **spec_kw)

    def forget_missing(brief: Brief, ctx: Ctx) -> None:
        ctx.pop(MISSING_KEY, None)

    def record_missing(brief: Brief, ctx: Ctx) -> None:
        ctx[MISSING_KEY] = brief.missing()

    def on_reject(result: StepResult, ctx: Ctx) -> str:
        missing = ctx.get(MISSING_KEY) or []
        if not missing:
            return ""
        return pick(MISSING_PROMPT, MISSING_PROMPT_EN).format(
            missing=pick("、", ", ").join(missing)
        )

    return frozen_step(
        name,
        agent,
        prompt,
        document=Brief,
        path=path,
        key=BRIEF_KEY,
        always=always_ask,
        on_loaded=forget_missing,
        on_incomplete=record_missing,
        retries=retries,
        on_fail=on_fail,
        on_reject=on_reject,
        resume_prompt=lambda ctx: clarify_resume(),
    )


__all__ = ["BRIEF_KEY", "CLARIFY_RESUME", "CLARIFY_RESUME_EN", "MISSING_KEY", "clarify_step"]
