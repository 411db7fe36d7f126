"""A bash-like tokenizer that refuses whatever it does not model.

The glance checks judge words, so they must see the words bash will see. This lexer follows
bash's quoting (single quotes, double quotes, backslashes), splits on blanks and on the control
operators ``&& || ; | |&``, and keeps the redirections it understands. Anything whose meaning
depends on state the checker cannot see, or that runs code before the verb does, is refused
with a reason instead of modelled: ``$`` expansions (except ``"$PWD"``/``"$HOME"`` inside double
quotes), backticks, ``$( )``, process substitution, heredocs, a background ``&``, subshells and
groups, brace expansion (except git's ``@{u}``), comments, control characters and unbalanced
quotes.

Why ``"$PWD"`` and ``"$HOME"`` (and ``"${PWD}"``/``"${HOME}"``) may pass: inside double quotes
they are one word, never split or globbed, and both are absolute paths, so they can never expand
to an option. They are kept in the word as marks (:data:`PWD_MARK`, :data:`HOME_MARK`) so the
sensitive-path checks can still see ``"$HOME/.netrc"``. Unquoted ``$PWD`` word-splits on spaces
and stays refused, like every other ``$``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = [
    "HOME_MARK",
    "PWD_MARK",
    "Op",
    "Redir",
    "Refuse",
    "Word",
    "lex",
    "segments",
]

#: What ``"$HOME"`` becomes inside a word: NUL never occurs in an accepted command.
HOME_MARK = "\x00HOME\x00"
#: What ``"$PWD"`` becomes inside a word.
PWD_MARK = "\x00PWD\x00"
_MARKS = {"HOME": HOME_MARK, "PWD": PWD_MARK}


class Refuse(Exception):
    """The command is not a glance; ``str(exc)`` is the one-line reason shown to the model."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Word:
    """One shell word after quote removal.

    ``pattern`` is the word as an fnmatch pattern: unquoted ``*?[`` are wildcards, quoted ones
    are escaped as ``[*]``. ``glob``: bash will try to expand it. ``first_wild``: index in
    ``text`` of the first unquoted wildcard (``None`` when not a glob). ``lead_glob``: the first
    character is a wildcard, so an expansion may start with ``-`` or ``+``.
    """

    text: str
    pattern: str = ""
    glob: bool = False
    first_wild: int | None = None
    suffix: str = ""

    def __post_init__(self) -> None:
        if not self.pattern and self.text:  # a literal word built by a checker: escape it
            escaped = "".join(f"[{c}]" if c in "*?[" else c for c in self.text)
            object.__setattr__(self, "pattern", escaped)
            object.__setattr__(self, "suffix", self.suffix or self.text)

    @property
    def lead_glob(self) -> bool:
        return self.first_wild == 0

    def glob_in_name(self) -> bool:
        """A glob that may expand to an option whose *name* we cannot know (``--out*``, ``-*``).

        A wildcard after the ``=`` of a long option, or after the letter of a short option,
        only changes the value: every expansion still starts with the same option.
        """
        if self.first_wild is None:
            return False
        if self.first_wild == 0:
            return True
        text = self.text
        if text.startswith("--"):
            eq = text.find("=")
            return eq < 0 or self.first_wild < eq
        if text.startswith(("-", "+")):
            return self.first_wild < 2
        return False

    def literal_suffix(self) -> str:
        """The literal text after the last wildcard (``".log"`` for ``*.log``)."""
        return self.suffix


@dataclass(frozen=True)
class Op:
    """A control operator: ``&&``, ``||``, ``;`` or ``|`` (``|&`` is read as ``|``)."""

    op: str


@dataclass(frozen=True)
class Redir:
    """A redirection operator; its target is the next word."""

    op: str


Token = Word | Op | Redir


@dataclass
class _Builder:
    """Characters of the word being read, each with whether it was quoted."""

    chars: list[tuple[str, bool]] = field(default_factory=list)
    started: bool = False

    def add(self, text: str, *, quoted: bool) -> None:
        self.chars.extend((c, quoted) for c in text)
        self.started = True

    def text(self) -> str:
        return "".join(c for c, _ in self.chars)

    def take(self) -> Word | None:
        if not self.started:
            return None
        chars, self.chars, self.started = self.chars, [], False
        return _make_word(chars)


def _make_word(chars: list[tuple[str, bool]]) -> Word:
    """Build a :class:`Word`, deciding which unquoted ``*?[`` bash treats as wildcards."""
    text = "".join(c for c, _ in chars)
    pattern: list[str] = []
    first_wild: int | None = None
    last_wild = -1
    for k, (c, quoted) in enumerate(chars):
        wild = not quoted and (c in "*?" or (c == "[" and any(d == "]" for d, _ in chars[k + 2 :])))
        if wild:
            first_wild = k if first_wild is None else first_wild
            last_wild = len(text) if c == "[" else k  # a bracket: the rest is not literal
        if c in "*?[" and not wild:
            pattern.append(f"[{c}]")
        else:
            pattern.append(c)
    suffix = text[last_wild + 1 :] if last_wild >= 0 else text
    return Word(text, "".join(pattern), first_wild is not None, first_wild, suffix)


_BLANK = " \t"
_OPERATOR_CHARS = "|&;<>"
_AT_BRACE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:+-")


def lex(cmd: str) -> list[Token]:
    """Split ``cmd`` into words, control operators and redirections (or raise :class:`Refuse`)."""
    tokens: list[Token] = []
    word = _Builder()
    i, n = 0, len(cmd)
    while i < n:
        c = cmd[i]
        if c in _BLANK:
            _flush(word, tokens)
            i += 1
        elif c == "'":
            end = cmd.find("'", i + 1)
            if end < 0:
                raise Refuse("unbalanced single quote")
            word.add(cmd[i + 1 : end], quoted=True)
            i = end + 1
        elif c == '"':
            i = _double_quoted(cmd, i + 1, word)
        elif c == "\\":
            if i + 1 >= n:
                raise Refuse("trailing backslash")
            word.add(cmd[i + 1], quoted=True)
            i += 2
        elif c == "$":
            raise Refuse('$ expansions are refused (only "$PWD" and "$HOME" in double quotes)')
        elif c == "`":
            raise Refuse("backticks run a command")
        elif c in "()":
            raise Refuse("subshells and ( ) are refused")
        elif c == "}":
            raise Refuse("brace groups are refused")
        elif c == "{":
            i = _git_at_brace(cmd, i, word)
        elif c == "#" and not word.started:
            raise Refuse("comments are refused")
        elif c in _OPERATOR_CHARS:
            i = _operator(cmd, i, word, tokens)
        else:
            word.add(c, quoted=False)
            i += 1
    _flush(word, tokens)
    return tokens


def _flush(word: _Builder, tokens: list[Token]) -> None:
    taken = word.take()
    if taken is not None:
        tokens.append(taken)


def _double_quoted(cmd: str, i: int, word: _Builder) -> int:
    """Consume up to the closing ``"``; return the index after it."""
    parts: list[str] = []
    n = len(cmd)
    while i < n:
        c = cmd[i]
        if c == '"':
            word.add("".join(parts), quoted=True)
            return i + 1
        if c == "\\" and i + 1 < n and cmd[i + 1] in '$`"\\':
            parts.append(cmd[i + 1])
            i += 2
            continue
        if c == "`":
            raise Refuse("backticks run a command")
        if c == "$":
            mark, i = _quoted_variable(cmd, i)
            parts.append(mark)
            continue
        parts.append(c)
        i += 1
    raise Refuse("unbalanced double quote")


def _quoted_variable(cmd: str, i: int) -> tuple[str, int]:
    """``$PWD``/``$HOME``/``${PWD}``/``${HOME}`` at ``cmd[i]`` -> (mark, index after it)."""
    braced = cmd.startswith("${", i)
    j = i + (2 if braced else 1)
    k = j
    while k < len(cmd) and (cmd[k].isalnum() or cmd[k] == "_"):
        k += 1
    name = cmd[j:k]
    if name in _MARKS and not (name and cmd[j].isdigit()):
        if not braced:
            return _MARKS[name], k
        if k < len(cmd) and cmd[k] == "}":
            return _MARKS[name], k + 1
    raise Refuse('$ expansions are refused (only "$PWD" and "$HOME" in double quotes)')


def _git_at_brace(cmd: str, i: int, word: _Builder) -> int:
    """Accept git's ``@{u}`` / ``HEAD@{1}`` (no brace expansion there); refuse any other ``{``."""
    end = cmd.find("}", i + 1)
    inner = cmd[i + 1 : end] if end > i else ""
    text = word.text()
    if (
        end < 0
        or not text.endswith("@")
        or not set(inner) <= _AT_BRACE_CHARS
        or ".." in inner
        or "," in inner
    ):
        raise Refuse("brace expansion and { } groups are refused")
    word.add(cmd[i : end + 1], quoted=True)
    return end + 1


def _operator(cmd: str, i: int, word: _Builder, tokens: list[Token]) -> int:
    """Lex one of ``| & ; < >`` at ``cmd[i]``; return the index after the operator."""
    c, rest = cmd[i], cmd[i : i + 3]
    if c in "<>":
        fd = ""
        text = word.text()
        if word.started and text.isdigit() and all(not q for _, q in word.chars):
            fd = text  # `2>`: the digits are the fd, not a word
            word.take()
        else:
            _flush(word, tokens)
        for op in ("<<<", "<<", "<>", "<&", "<(", ">>", ">|", ">&", ">(", "<", ">"):
            if rest.startswith(op):
                if op in ("<<<", "<<"):
                    raise Refuse("heredocs and herestrings are refused")
                if op in ("<(", ">("):
                    raise Refuse("process substitution runs a command")
                if op == "<>":
                    raise Refuse("<> opens a file for writing")
                tokens.append(Redir(fd + op))
                return i + len(op)
    _flush(word, tokens)
    if c == "&":
        for op in ("&>>", "&>"):
            if rest.startswith(op):
                tokens.append(Redir(op))
                return i + len(op)
        if rest.startswith("&&"):
            tokens.append(Op("&&"))
            return i + 2
        raise Refuse("a background & is refused")
    if c == "|":
        if rest.startswith("||"):
            tokens.append(Op("||"))
            return i + 2
        tokens.append(Op("|"))
        return i + (2 if rest.startswith("|&") else 1)
    if rest.startswith((";;", ";&")):
        raise Refuse("case terminators are refused")
    tokens.append(Op(";"))
    return i + 1


def _safe_redirection(op: str, target: Word) -> bool:
    """Only ``/dev/null`` and fd duplication (``2>&1``, ``>&2``) are harmless."""
    if target.glob:
        return False
    bare = op.lstrip("0123456789")
    if bare in (">&", "<&") and target.text.isdigit():
        return True
    return bare in (">", ">>", ">|", "&>", "&>>", "<", ">&") and target.text == "/dev/null"


def segments(tokens: Sequence[Token]) -> list[list[Word]]:
    """Drop safe redirections and split on control operators; refuse empty segments."""
    result: list[list[Word]] = [[]]
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if isinstance(token, Op):
            result.append([])
        elif isinstance(token, Redir):
            target = tokens[i + 1] if i + 1 < len(tokens) else None
            if not isinstance(target, Word) or not _safe_redirection(token.op, target):
                raise Refuse("redirections other than to /dev/null or 2>&1 are refused")
            i += 1
        else:
            result[-1].append(token)
        i += 1
    if any(not segment for segment in result):
        raise Refuse("empty command between separators")
    return result
