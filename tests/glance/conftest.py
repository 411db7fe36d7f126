"""The glance tests. The ``sandbox`` marker (registered in pyproject.toml) selects the slow
run of every accepted glance under strace (test_sandbox.py): ``pytest -m sandbox`` runs it
alone, ``-m "not sandbox"`` leaves it out."""
