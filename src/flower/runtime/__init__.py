"""The runtime: one step of an agent in its own CLI session, kept alive.

`Runtime` (:mod:`flower.runtime.runner`) runs a step as attempts, relays a full context to a
fresh session, waits out outages, keeps the budget, answers signals and cut-offs. It
sits above the roles (what an agent is and may do) and below the workflow (which steps
to run); see ARCHITECTURE.md.
"""
