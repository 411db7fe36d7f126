"""Expiry at resume time: the stale results of one-off commands become a short note.

A ``git status`` or an ``ls`` says how things stood when it ran; twenty replies later it
misleads more than it helps. :class:`EphemeralPolicy` keeps the newest ``keep_recent``
such results (those its glance classifier accepts:
:func:`~flower.kernel.policies.glance_classifier`) and replaces the text of the older ones
with ``EphemeralPolicy.text``. The policy and its texts live in
:mod:`flower.kernel.policies` (the plugin system names them), re-exported here; which
commands are glances is the guard's rule, which the store never imports. Split from
:mod:`flower.stores.trim`, which runs it inside ``load()`` and re-exports these names.

The note must read the same at every later load: the API caches prompt prefixes, and a
note whose "N rounds ago" grew at each resume would change old context every time, so
the whole conversation after it would be written to the cache again (1.25x the input
price, where a cached read is 0.1x or less). So ``{age}`` is counted up to the prompt
that followed what made the result stale (the first load that expired it), not up to
this load.
"""

from __future__ import annotations

import bisect
import functools
from typing import Any

from flower.kernel.lang import localized
from flower.kernel.policies import EXPIRED_TEXT as EXPIRED_TEXT
from flower.kernel.policies import EXPIRED_TEXT_EN as EXPIRED_TEXT_EN
from flower.kernel.policies import Classifier, glance_classifier
from flower.kernel.policies import EphemeralPolicy as EphemeralPolicy
from flower.stores.scan import Scan, scan
from flower.stores.transcript import Entry, Uses, text_length, tool_uses

__all__ = ["EXPIRED_TEXT", "EXPIRED_TEXT_EN", "EphemeralPolicy", "expire", "replace_text"]

#: ``counted_results(entries)``: (line index, line, tool_result block), oldest first.
ResultBlocks = list[tuple[int, Entry, dict[str, Any]]]

#: Longest command quoted in an expiry note.
CMD_CHARS = 80


@functools.lru_cache(maxsize=8)
def _cached(classifier: Classifier) -> Classifier:
    """``classifier``, remembering its answers: the checker lexes a command each time; a
    session repeats the same few commands (``git status``, ``ls``) hundreds of times, and
    every load asks again for each."""
    return functools.lru_cache(maxsize=4096)(classifier)


def expire(
    entries: list[Entry],
    results: ResultBlocks,
    policy: EphemeralPolicy,
    *,
    below: int | None = None,
    supersede: bool = False,
    uses: Uses | None = None,
    facts: Scan | None = None,
) -> int:
    """Replace stale ephemeral Bash results among ``results`` with the policy's note (in
    place); the number expired.

    ``below``: only the oldest this many of ``results`` may change (masking's boundary,
    where old context changes only when the boundary moves); ``None``: any.
    ``supersede``: a glance that ran again later is stale too, even among the newest
    ``keep_recent``. ``uses``, ``facts``: ``tool_uses(entries)`` and
    :func:`~flower.stores.scan.scan` of ``entries`` when the caller has them already.
    """
    uses = tool_uses(entries) if uses is None else uses
    is_glance = _cached(glance_classifier(policy))
    found: list[tuple[int, dict[str, Any], str, int]] = []
    for position, (index, entry, block) in enumerate(results):
        if entry.get("isCompactSummary") is True:
            continue
        use = uses.get(str(block.get("tool_use_id")))
        if use is None or use[1].get("name") != "Bash":
            continue
        tool_input = use[1].get("input")
        command = tool_input.get("command") if isinstance(tool_input, dict) else None
        if not isinstance(command, str) or not is_glance(command):
            continue
        if text_length(block.get("content")) > policy.max_chars:
            continue
        found.append((index, block, command, position))
    keep = max(policy.keep_recent, 0)
    old = max(len(found) - keep, 0)
    later: dict[str, int] = {}  # command -> line of its newest run so far (walking back)
    picked: list[tuple[int, dict[str, Any], str, int]] = []
    for n in range(len(found) - 1, -1, -1):
        index, block, command, position = found[n]
        key = " ".join(command.split())
        since: list[int] = []  # lines whose arrival made this result stale
        if n < old:
            since.append(found[n + keep][0])
        if supersede and key in later:
            since.append(later[key])
        later[key] = index
        if since and (below is None or position < below):
            picked.append((index, block, command, min(since)))
    if not picked:
        return 0
    facts = scan(entries) if facts is None else facts
    ages = facts.rounds_after()
    prompts = facts.prompts
    text = localized(policy.text, EXPIRED_TEXT, EXPIRED_TEXT_EN)
    for index, block, command, since_line in picked:
        # The age as of the load that first expired it (the first prompt after what made
        # it stale), not as of this load: see the module doc.
        after = bisect.bisect_right(prompts, since_line)
        then = prompts[after] if after < len(prompts) else None
        age = ages[index] - (ages[then] if then is not None else 0)
        block["content"] = replace_text(
            block.get("content"), text.format(cmd=_shorten(command), age=age)
        )
    return len(picked)


def replace_text(content: Any, text: str) -> Any:
    """``content`` with its plain text replaced by ``text``; image/document blocks stay."""
    if isinstance(content, list):
        kept = [b for b in content if not (isinstance(b, dict) and b.get("type") == "text")]
        return [{"type": "text", "text": text}, *kept]
    return text


def _shorten(command: str) -> str:
    command = " ".join(command.split())
    return command if len(command) <= CMD_CHARS else command[: CMD_CHARS - 1] + "…"
