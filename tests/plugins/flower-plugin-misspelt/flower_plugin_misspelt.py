"""Implements ``flower_guard`` (the hook is ``flower_guards``): must be refused, loudly."""

from flower import hookimpl


@hookimpl
def flower_guard(spec: object) -> None:
    return None
