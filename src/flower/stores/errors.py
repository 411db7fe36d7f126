"""The one error the storage layer raises for problems a user can fix.

Everything the user can act on (a corrupt ``sessions.db``, an unknown URL scheme, an
unreachable server, a schema that needs ``flower db upgrade``, an entry that is not
JSON) becomes a :class:`StoreError` whose message is one line that names the problem
and the fix, so the command line can print it without a traceback.
"""

from __future__ import annotations


class StoreError(RuntimeError):
    """A session store could not be opened or written; the message says why and what to do."""
