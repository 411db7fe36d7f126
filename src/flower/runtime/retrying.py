"""Between a failed attempt and the next: say the retry, wait for the network, back off.

Split from :mod:`flower.runtime.runner`: the loop decides *whether* a failed attempt is
retried (its class, the attempts left); this is *how* the wait looks from outside (a
``retry`` event, ``offline`` events while the endpoint is unreachable, the backoff), so a
view or a plugin reading those events finds them made in one place.
"""

from __future__ import annotations

from collections.abc import Mapping

from flower.kernel.events import Event, EventCallback
from flower.plugins import emit
from flower.runtime.resilience import Resilience, endpoint

__all__ = ["wait_to_retry"]


async def wait_to_retry(
    resilience: Resilience,
    env: Mapping[str, str],
    *,
    step: str,
    attempt: int,
    error: str,
    verdict: str,
    resume: bool,
    on_event: EventCallback | None,
) -> str | None:
    """Announce attempt ``attempt``'s failure (``error``, of class ``verdict``), wait until
    the endpoint in ``env`` answers, then back off; ``None`` when the next attempt may
    start, else why the step gives up (the network stayed away past
    ``resilience.max_offline_wait``). ``resume``: the next attempt resumes the session."""
    import anyio

    delay = resilience.delay_for(attempt)
    host, port = endpoint(env)
    emit(
        Event(
            "retry",
            {
                "attempt": attempt,
                "max_attempts": resilience.max_attempts,
                "error": error,
                "class": verdict,
                "delay": delay,
                "resume": resume,
            },
            step=step,
        ),
        on_event,
    )

    def offline(waited: float, next_in: float) -> None:
        payload = {
            "host": host,
            "port": port,
            "waited": waited,
            "next_probe_in": next_in,
            "max_wait": resilience.max_offline_wait,
        }
        emit(Event("offline", payload, step=step), on_event)

    if not await resilience.wait_online(env, on_offline=offline):
        return (
            f"{host}:{port} stayed unreachable for"
            f" {resilience.max_offline_wait:.0f}s; gave up after: {error}"
        )
    await anyio.sleep(delay)
    return None
