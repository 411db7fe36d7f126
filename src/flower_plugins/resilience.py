"""The default resilience classifier: fatal patterns first, then transient, else unknown.

The order matters. Texts of fatal errors often carry words of transient ones (a 401
page says "connection", a billing error says "try again"), and waiting on a bad key
means waiting forever, so a fatal pattern anywhere in the text wins.

The texts come from the Runtime: the CLI's "API Error: …" prose, the HTTP status as
``(HTTP 529)``, the SDK's error category (``server_error``, ``authentication_failed``,
…) and the result subtype (``error_max_turns``, …), joined.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from flower import hookimpl

if TYPE_CHECKING:
    from flower.plugin_types import ErrorClass

#: Stop at once: credentials, permissions, billing, a malformed request, the caller's
#: own limits (max turns, max budget), a sandbox this machine cannot start. Retrying any
#: of these cannot help.
FATAL = re.compile(
    r"""
      \bHTTP\ (?:40[0-7]|41\d|42[0-8]|43\d|4[4-9]\d)\b   # 4xx except 408 timeout, 429 rate limit
    | \bauthentication[_ ](?:error|failed)\b
    | invalid[ _-]?(?:x-)?api[ _-]?key | invalid\ bearer | \bnot\ logged\ in\b | /login\b
    | oauth\ token\ (?:has\ )?(?:expired|revoked)
    | \bpermission_error\b | \bforbidden\b
    | \bbilling(?:_error)?\b | credit\ balance | insufficient\ (?:credit|funds|quota)
    | \binvalid_request(?:_error)?\b | \bnot_found_error\b | model\ .*\bnot\ found\b
    | \berror_max_(?:turns|budget_usd|structured_output_retries)\b
    | could\ not\ resolve\ authentication | missing\ api\ key | no\ api\ key
    | \bCLINotFoundError\b | Claude\ Code\ not\ found
    | sandbox\ cannot\ start | sandbox\ (?:is\ )?(?:required\ but\ )?unavailable
    """,
    re.IGNORECASE | re.VERBOSE,
)

#: Wait and resume: rate limits, overload, server errors, the network.
TRANSIENT = re.compile(
    r"""
      \bHTTP\ (?:408|429|5\d\d)\b | \bAPI\ Error:\ (?:408|429|5\d\d)\b
    | \boverloaded(?:_error)?\b | rate[ _-]?limit | \bserver_error\b | \bapi_error\b
    | \btimed?\ ?out\b | \btimeout\b | \bdeadline\ exceeded\b
    | \bE(?:CONN(?:REFUSED|RESET|ABORTED)|NOTFOUND|AI_AGAIN|TIMEDOUT|PIPE)\b
    | \bE(?:HOSTUNREACH|NETUNREACH|NETDOWN)\b
    | connection\ (?:refused|reset|dropped|closed|error|aborted)
    | unable\ to\ connect | can'?t\ reach | could\ not\ connect | network | socket\ hang\ up
    | fetch\ failed | temporarily\ unavailable | service\ unavailable | bad\ gateway
    | \bstream\ (?:ended|closed|cut) | premature\ close | \bother\ side\ closed\b
    """,
    re.IGNORECASE | re.VERBOSE,
)


def classify_text(text: str) -> ErrorClass:
    """The default verdict: ``fatal`` before ``transient``, otherwise ``unknown``."""
    if FATAL.search(text):
        return "fatal"
    if TRANSIENT.search(text):
        return "transient"
    return "unknown"


@hookimpl(trylast=True)
def flower_classify_error(text: str) -> ErrorClass:
    return classify_text(text)
