"""The session stores' policies: what trimming, expiry and pruning do at load time.

:class:`TrimPolicy`, :class:`EphemeralPolicy` and :class:`PrunePolicy` are plain settings,
with the default texts they carry. They live in the kernel, not beside the stores that
apply them (:mod:`flower.stores.trim`, :mod:`flower.stores.expire`,
:mod:`flower.stores.prune`, which re-export them), because the plugin system's
``StoreSettings`` (:mod:`flower.plugin_types`) names them and the plugin system may import
no store: only the kernel (import-linter checks it; see ARCHITECTURE.md).

Which commands are glances (one-off looks at state whose results go stale) is the
guard's rule (:func:`flower.roles.ephemeral.is_ephemeral`), far above the stores. An
:class:`EphemeralPolicy` may name its classifier (``is_glance``); one that names none
uses the classifier registered here (:func:`register_glance`): the guard's registers
itself when :mod:`flower.roles.ephemeral` is imported, and a policy asking before that
happened imports it by name (:data:`DEFAULT_GLANCE_MODULE`, as the plugin system names its
default plugins), so expiry never depends on what the process imported first.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module

__all__ = [
    "DEFAULT_GLANCE_MODULE",
    "EXPIRED_TEXT",
    "EXPIRED_TEXT_EN",
    "INTERRUPTED_NOTE",
    "INTERRUPTED_NOTE_EN",
    "ORPHAN_NOTE",
    "ORPHAN_NOTE_EN",
    "UNSURE",
    "UNSURE_EN",
    "EphemeralPolicy",
    "PrunePolicy",
    "TrimPolicy",
    "glance_classifier",
    "register_glance",
]

#: A glance classifier: ``True`` iff the command only looks at state.
Classifier = Callable[[str], bool]


@dataclass
class TrimPolicy:
    """Move large old tool results out of the resumed context, into files.

    Attributes:
        keep_recent: The newest tool results that are never trimmed.
        min_chars: A result with at least this much text is trimmed.
        spill_dirname: Where the originals go, relative to the workspace (must stay
            inside it; ``spill_guard``'s ``<workbench.root>/spill/`` is a different
            folder on purpose).
        enabled: ``False`` skips trimming entirely (``Runtime(trim=False)``).
    """

    keep_recent: int = 20
    min_chars: int = 2000
    spill_dirname: str = ".flower/spill"
    enabled: bool = True


#: What a stale one-off result becomes (the seed's default of ``EphemeralPolicy.text``),
#: and its English, used when the language in effect at load time is English
#: (:mod:`flower.kernel.lang`); a text you set on the policy stays as given.
EXPIRED_TEXT = "[{cmd} 的结果已过期(第 {age} 轮前),当前状态可能已变。需要请重新执行]"
EXPIRED_TEXT_EN = (
    "[The result of {cmd} is out of date (from {age} round(s) ago); the state may have"
    " changed since. Run it again if you need it]"
)


@dataclass
class EphemeralPolicy:
    """Expire the results of one-off commands (``git status``, ``ls``) that went stale.

    Only Bash results whose command the glance classifier accepts
    (:func:`~flower.roles.ephemeral.is_ephemeral`); Read results never expire. Expired
    content is dropped, not spilled.

    Attributes:
        enabled: ``False`` skips expiry entirely.
        keep_recent: The newest ephemeral results that stay.
        max_chars: Longer ephemeral results are left to trimming (see
            :mod:`flower.stores.trim`).
        text: The note left in place; ``{cmd}`` is the command, ``{age}`` the rounds ago.
        is_glance: Which commands are one-off looks at state; ``None`` (the default): the
            registered classifier (:func:`glance_classifier`), the guard's.
    """

    enabled: bool = True
    keep_recent: int = 6
    max_chars: int = 2000
    text: str = EXPIRED_TEXT
    is_glance: Classifier | None = field(default=None, repr=False)


def _nothing(cmd: str) -> bool:
    """The classifier when none is registered: no command is a glance."""
    return False


#: The classifier an :class:`EphemeralPolicy` without ``is_glance`` uses.
_registered: list[Classifier] = []


def register_glance(classifier: Classifier) -> None:
    """Make ``classifier`` the one every :class:`EphemeralPolicy` without ``is_glance``
    uses (the latest registered wins)."""
    _registered[:] = [classifier]


#: The module whose import registers flower's own classifier (the guard's), named the way
#: :data:`flower.plugins.DEFAULT_PLUGINS` names the default plugins: a store built straight
#: from :mod:`flower.stores.prune`, in a process that never loaded the guard, expires the
#: same glances as one built through ``flower`` or a Runtime.
DEFAULT_GLANCE_MODULE = "flower.roles.ephemeral"


def glance_classifier(policy: EphemeralPolicy | None = None) -> Classifier:
    """The classifier ``policy`` uses: its own ``is_glance``, else the registered one
    (flower's own, :data:`DEFAULT_GLANCE_MODULE`, when none was registered yet), else
    one accepting nothing (flower's failed to load)."""
    if policy is not None and policy.is_glance is not None:
        return policy.is_glance
    if not _registered:
        _load_default()
    return _registered[0] if _registered else _nothing


@functools.cache  # once per process, whatever it gave
def _load_default() -> None:
    """Import :data:`DEFAULT_GLANCE_MODULE`, which registers its classifier; a failure
    leaves none registered (nothing expires) rather than failing the load."""
    try:
        import_module(DEFAULT_GLANCE_MODULE)
    except Exception:
        return


#: What an interrupted call's result says after pruning.
INTERRUPTED_NOTE = "[上一轮在此处被中断,该工具结果未产生]"

#: How flower words a call whose result was never recorded (a killed process, an outage
#: that cut a worker off): neither done nor undone, to be verified. The cut-off report of
#: a resumed coordinator (``runtime/cutoff_words.py``) uses the same words.
UNSURE = "可能已经生效,也可能没有,先核实再继续"

#: The result given to a call that never got one: the process ended while it ran, so
#: whether it took effect is unknown.
ORPHAN_NOTE = f"[中断:此调用没有结果,它{UNSURE}(看文件或状态),不要盲目重做]"

#: The same three in English, used when the language in effect at load time is English
#: (:mod:`flower.kernel.lang`): the policy's defaults follow the language, a text you set
#: on the policy stays as given.
INTERRUPTED_NOTE_EN = "[The last round was interrupted here; this tool call left no result]"
UNSURE_EN = "may or may not have taken effect, so verify before going on"
ORPHAN_NOTE_EN = (
    f"[Interrupted: this call left no result; it {UNSURE_EN} (the files, the state); do not"
    " simply redo it]"
)


@dataclass
class PrunePolicy:
    """What pruning removes or neutralises.

    Attributes:
        keep_denials: The newest refused tool calls that stay (``Runtime(keep_denials=1)``).
        drop_api_errors: Remove synthetic API-error lines.
        neutralize_interrupts: Replace interrupted results' text with ``note``.
        note: The neutral text for an interrupted result.
        heal_orphans: Give every call without a result an error result saying
            ``orphan_note`` (and reword the CLI's own such results to it).
        orphan_note: The text of a healed result.
    """

    keep_denials: int = 1
    drop_api_errors: bool = True
    neutralize_interrupts: bool = True
    note: str = INTERRUPTED_NOTE
    heal_orphans: bool = True
    orphan_note: str = ORPHAN_NOTE
