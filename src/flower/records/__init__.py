"""The run's records: what a run leaves on disk for the next step, process or person.

The workbench and its index, handoff documents, the ledger, lineage, manifest, pending
work, the run lock, checkpoints. Below the roles, above the session stores; see
ARCHITECTURE.md.
"""
