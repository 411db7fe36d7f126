"""The roles: what an agent is, what it may touch, and the walls that hold it there.

Agent specs compiled to SDK options, the five ready-made roles, the guards and walls
the CLI's hooks call, the deny texts, the sandbox settings, the read-only glances.
Below the runtime, above the run's records; see ARCHITECTURE.md.
"""
