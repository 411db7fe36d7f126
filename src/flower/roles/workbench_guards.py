"""The workbench's guards: over-long results spilled to disk, the index kept fresh.

:func:`spill_guard` puts a Bash, Read or Grep result over the threshold into the
workbench's ``spill/`` folder and hands the model a pointer; :func:`index_guard`
rewrites ``INDEX.md`` after a write into the workbench; :func:`workbench_hooks` installs
both for a session. Split from :mod:`flower.roles.guard` by concern; the guard module
re-exports every public name.
"""

from __future__ import annotations

import hashlib
import re
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flower.kernel.files import keep_out_of_git
from flower.kernel.redact import current
from flower.records.workbench import SPILL_DIRNAME
from flower.roles.deny_texts import spill_pointer
from flower.roles.hook_parts import (
    BULKY,
    from_cwd,
    hook_matcher,
    is_main_thread,
    resolve_path,
)

if TYPE_CHECKING:
    from claude_agent_sdk import HookMatcher

    from flower.records.workbench import Workbench

_SPILL_NAME = re.compile(r"[0-9a-f]{16}\.txt")

# --- spill -------------------------------------------------------------------------------


def spill_guard(
    workbench: Workbench,
    *,
    threshold: int = 4000,
    tools: str = BULKY,
    main_only: bool = False,
) -> HookMatcher:
    """Put over-long tool results on disk at once, leaving a pointer in the conversation.

    Runs on PostToolUse. Every string field of the result longer than ``threshold`` is
    written to ``<workbench>/spill/<first 16 hex of its sha256>.txt`` and replaced by a
    pointer plus its first 400 characters. Only such string fields are replaced, in
    place, so the result keeps the tool's own structure (the CLI ignores an
    ``updatedToolOutput`` of another shape, e.g. a bare string for Bash); lists are never
    spilled (they may hold image blocks). Reading a spilled file (Read of it, or a Bash
    command that names it) is not spilled again: otherwise the text read would be
    spilled again and "read the file" would loop forever.

    Every result of ``tools`` is also redacted (:mod:`flower.kernel.redact`), spilled or
    not, main thread or not: the spill file, the head left in the conversation and an
    unspilled result hold no known secret. The CLI does not chain two hooks' updated
    outputs (the last update wins, each saw the original), so ``redact_guard`` skips
    these tools and this guard answers for both.

    ``main_only`` spills only the main thread's results.
    """
    intercepted = frozenset(tools.split("|"))

    async def spill(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        tool = data.get("tool_name", "")
        if tool not in intercepted or "tool_response" not in data:
            return {}
        response = data.get("tool_response")
        try:
            updated = clean = current().tool_value(response)
        except Exception as exc:  # a broken redactor must not fail the tool
            print(f"flower: could not redact a {tool} result: {exc!r}", file=sys.stderr)
            updated = clean = response
        if not (main_only and not is_main_thread(data)) and not _reads_spill(
            workbench, tool, data.get("tool_input") or {}
        ):
            try:
                updated = _spill_value(workbench, clean, threshold)
            except (OSError, ValueError) as exc:  # no spill beats a failed tool
                print(f"flower: could not spill a {tool} result: {exc}", file=sys.stderr)
        if updated is response:
            return {}
        return {
            "hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": updated}
        }

    return hook_matcher(tools, spill)


def _reads_spill(workbench: Workbench, tool: str, tool_input: Mapping[str, Any]) -> bool:
    """Whether this call reads a file ``spill_guard`` wrote (Read of it, Bash naming it)."""
    if tool == "Read":
        path = tool_input.get("file_path")
        if not isinstance(path, str) or not _SPILL_NAME.fullmatch(Path(path).name):
            return False
        resolved = resolve_path(Path(path))
        return resolved is not None and resolved.parent == resolve_path(workbench.spill)
    if tool == "Bash":
        command = tool_input.get("command")
        if not isinstance(command, str):
            return False
        return any((workbench.spill / name).is_file() for name in _SPILL_NAME.findall(command))
    return False


def _spill_value(workbench: Workbench, value: Any, threshold: int) -> Any:
    """``value`` with over-long strings spilled; the same object when nothing changed."""
    if isinstance(value, str):
        if len(value) <= threshold:
            return value
        return spill_pointer(spill_text(workbench, value), value)
    if isinstance(value, dict):
        changed = False
        out: dict[str, Any] = {}
        for key, item in value.items():
            new = _spill_value(workbench, item, threshold)
            changed = changed or new is not item
            out[key] = new
        return out if changed else value
    return value  # lists (image blocks) and scalars stay as they are


def spill_text(workbench: Workbench, text: str) -> Path:
    """Write ``text`` to the spill folder under its content hash; return the path.

    The text is redacted first (so the name is the hash of what is on disk); a regular
    file of that name and size is the same text already spilled, and is kept. The spill
    folder must be a real folder of the workbench (:meth:`Workbench.place`), checked
    before the shortcut too, so a pointer never names a file behind a link.
    """
    text = current().redact(text)
    data = text.encode("utf-8", "surrogatepass")
    name = hashlib.sha256(data).hexdigest()[:16] + ".txt"
    path = workbench.place(SPILL_DIRNAME, name)
    try:
        st = path.lstat()
    except OSError:
        st = None
    if st is not None and stat.S_ISREG(st.st_mode) and st.st_size == len(data):
        return path  # spilled before
    written = workbench.write(text, SPILL_DIRNAME, name)
    keep_out_of_git(written.parent)
    return path


# --- index -------------------------------------------------------------------------------


def index_guard(workbench: Workbench) -> HookMatcher:
    """Refresh ``INDEX.md`` when a Write or Edit lands in the workbench, so the next
    session's prompt lists it. Always returns ``{}``: a side effect, never a decision."""

    async def index(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        path = (data.get("tool_input") or {}).get("file_path")
        if isinstance(path, str) and workbench.contains(from_cwd(path, data)):
            try:
                workbench.refresh()
            except (OSError, ValueError) as exc:  # an unwritable index must not fail the tool
                print(f"flower: could not refresh {workbench.index}: {exc}", file=sys.stderr)
        return {}

    return hook_matcher("Write|Edit", index)
