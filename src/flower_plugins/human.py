"""The default human channel: :class:`flower.human.channel.HumanChannel`.

It has no user interface of its own: questions surface as events and any UI (the
terminal, a web page, a chat bot) answers through the channel's methods. A plugin that
owns the conversation differently (a pager, a ticket queue) returns its own channel
from ``flower_human_channel`` and wins, since this one runs last.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flower import hookimpl

if TYPE_CHECKING:
    from flower.human.channel import HumanChannel


@hookimpl(trylast=True)
def flower_human_channel(
    log_path: Any,
    amend_path: Any,
    max_asks: int | None,
    timeout_s: float | None,
) -> HumanChannel:
    from flower.human.channel import HumanChannel

    return HumanChannel(
        log_path=log_path, amend_path=amend_path, max_asks=max_asks, timeout_s=timeout_s
    )
