"""The human channel: the questions a run asks, the remarks it takes, and the screen.

Beside the run's records in one layer: it records into the run folder and writes to the
terminal, and imports nothing above it; see ARCHITECTURE.md.
"""
