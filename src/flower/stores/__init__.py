"""Session storage: the SQLAlchemy store and the trimming and pruning layers over it.

``SqliteSessionStore`` ← ``TrimmingSessionStore`` ← ``PruningSessionStore``, each in its
own module (``sqlite.py``, ``trim.py``, ``prune.py``); the schema lives in ``schema.py``
and its migrations in the top-level ``migrations/`` folder. Import the modules you need:
this package imports nothing heavy on its own.
"""
