"""Commands that run nothing kv4lint follows whatever their words hold, decided on their words as written.

Most commands of a long script are ``echo "$X"``, ``git clone URL``, ``uv pip install "torch==$V"``: they launch
nothing, run no code kv4lint reads and set no variable, whatever their expansions give. :class:`Inert` (mixed
into :class:`~kv4lint.frontends.shell.walk.Walker`) tells them apart before their words are built: only their
expansions are read then (for the variables they use and the command substitutions they run). The literal words
go to :func:`~kv4lint.sglang.commands.unwrap` as they are; a word with expansions is a :class:`Probe` that notes
when ``unwrap`` looks at it (what the command runs may then depend on its value: it is read in full).
A command read per path of the choices it uses (:meth:`Inert._varies`) is read once when no path could make it do
more. A command whose text names one of sglang's server modules (``SERVER_MODULE_PREFIX``: ``sglang.launch_server``)
is read whole at once: most such commands launch, and asking ``unwrap`` of its words as written first would only
read them twice. (Not any command that names sglang: an installer's ``pip install "sglang[all]"`` and
``[ "$ENGINE" = sglang ]`` are inert.)
"""

from __future__ import annotations

import re

from kv4lint.base.memo import Memo
from kv4lint.base.model import Span
from kv4lint.frontends.shell.parse import ShellText
from kv4lint.frontends.shell.variables import SCALAR, UNKNOWN
from kv4lint.sglang.commands import SERVER_MODULE_PREFIX, could_start_command, is_recorder, unwrap

READERS = {"read", "mapfile", "readarray", "getopts"}
PATH_BUILTINS = {"shift", "set", "source", ".", *READERS}  # builtins whose effect depends on their words
WORDISH = {"word", "string", "raw_string", "concatenation", "expansion", "simple_expansion", "number",
           "ansi_c_string", "command_substitution", "translated_string"}
_LITERAL = {"word", "number", "raw_string", "comment"}
_RECORDERS: dict[str, bool] = {}


def allexport(words: list[str | None]) -> bool | None:
    """What ``set WORDS`` does to ``allexport``: on (``-a``, ``-o allexport``, ``a`` in a cluster of flags:
    ``-ae``, ``-euao allexport``), off (``+a``, ``+o allexport``), or None (neither, or an unknown word first)."""
    return _set_options(words)[0]


def _set_options(words: list[str | None]) -> tuple[bool | None, int]:
    """:func:`allexport`, and how many of ``words`` are options (with their names) before the first that is not.
    As bash reads them: each letter of ``-xyz`` a flag, an ``o`` among them taking the next word as an option's
    name."""
    on = None
    i = 0
    while i < len(words):
        t = words[i]
        if t is None or t in ("-", "--") or t[:1] not in ("-", "+") or not t[1:].isalpha():
            break  # an unknown word, or the positional parameters: no more options
        if "a" in t[1:]:
            on = t[0] == "-"
        if "o" in t[1:]:
            i += 1
            if i < len(words) and words[i] == "allexport":
                on = t[0] == "-"
        i += 1
    return on, min(i, len(words))


def _options_only(words: list[str | None]) -> bool:
    """``set -euo pipefail`` (``words``: those after ``set``, None where not known as written): shell options only,
    none of them ``allexport``. Such a ``set`` runs nothing and sets no variable and no positional parameter, so it
    is inert (Walker._run_words reads a ``set`` for :func:`allexport` and ``set --``)."""
    on, options = _set_options(words)
    return on is None and options == len(words)  # (a word after them: ``--``, positional parameters, not known)


def recorder(name: str) -> bool:
    r = _RECORDERS.get(name)
    if r is None:
        r = is_recorder(name)
        if len(_RECORDERS) < 4096:
            _RECORDERS[name] = r
    return r


class Inert:
    """Mixed into the Walker: needs ``src``, ``env``, ``functions`` and ``touch``."""

    _modules_in = None  # the text _names_modules was asked of
    _names_modules = False  # whether it names one of sglang's modules anywhere

    def _inert(self, n) -> bool:
        """A command that runs nothing kv4lint follows whatever its words hold (``echo "$X"``, ``git clone URL``,
        ``uv pip install "torch==$V"``): only its expansions are read, for the variables they use and the command
        substitutions they run; its words are not built (most commands of a long script are these).

        Decided on its words as written: :func:`unwrap` reads the literal ones, and the command is inert when it
        runs nothing without reading any of the others (:class:`_Probe`)."""
        src = self.src
        if src is not self._modules_in:  # (asked once a text: an installer that names no module pays nothing)
            self._modules_in, self._names_modules = src, SERVER_MODULE_PREFIX in src.text
        if self._names_modules and src.text.find(SERVER_MODULE_PREFIX, src.c(n.start_byte), src.c(n.end_byte)) >= 0:
            return False  # (-m sglang.launch_server): most such commands launch; read whole, not asked of unwrap twice
        kids = n.children
        if not kids or kids[0].type != "command_name" or kids[0].child_count != 1:
            return False
        w0 = kids[0].children[0]
        if w0.type == "word":
            head = src.nt(w0)
            if "$" in head or "`" in head or "\\" in head or head in self.functions:
                return False
            if head in PATH_BUILTINS:
                if head != "set":  # (a set of options only is told below, on its words)
                    return False
            elif head == "printf" and (len(kids) < 2 or kids[1].type not in ("word", "raw_string") or
                                       src.nt(kids[1]).lstrip("'").startswith("-v")):
                return False  # printf -v NAME: sets a variable
            elif recorder(head):
                for k in kids[1:]:
                    if k.is_named and k.type not in _LITERAL:
                        self.touch(k)
                return True
        # Each word as a Probe is made of it (text, read, node, splat), and what unwrap may read of it (_key): the
        # Probes are made only when unwrap was not asked about the same words before.
        words: list[tuple] = []
        key: list = []
        later: list = []
        read = [False]
        for k in kids:
            t = k.type
            if t == "command_name":
                k = k.children[0]
                t = k.type
            elif t == "comment":
                continue
            if t == "word" or t == "number" or t == "raw_string":
                text = src.nt(k)
                if t == "raw_string":
                    text = text[1:-1] if len(text) >= 2 and text[-1] == "'" else None
                elif "$" in text or "`" in text or "\\" in text:
                    text = None
                if text is not None:
                    words.append((text, read, k, False))
                    key.append(text)
                    continue
            if t not in WORDISH:
                return False  # an assignment before the command, a here-string, ...: read it whole
            word = self._unknown_word(k, t, read)
            words.append(word)
            key.append(_key(src, word))
            later.append(k)
        head = words[0][0] if words else None
        if head == "set" and head not in self.functions:
            if not _options_only([w[0] for w in words[1:]]):
                return False  # allexport, ``set --``, a word not known as written: read whole
        elif head is None or head in self.functions or head in PATH_BUILTINS or head == "printf" or \
                _follows(tuple(key), words, read, src):
            return False
        for k in later:
            self.touch(k)
        return True

    def _unknown_word(self, k, t: str, read: list) -> tuple:
        """A word with expansions, as Probe takes it: ``"$NAME"`` or ``$NAME`` of a variable known as one word, or
        unknown (from the environment), is what expanding it would give; any other is a probe that notes when it is
        read."""
        inner = k
        quoted = t == "string"
        if quoted and k.named_child_count == 1 and k.child_count == 3:
            inner = k.named_children[0]
        if inner.type == "simple_expansion" and inner.named_child_count == 1 and \
                inner.named_children[0].type == "variable_name":
            b = self.env.vars.get(self.src.nt(inner.named_children[0]))
            if b is None or b.kind == UNKNOWN:
                return None, None, k, not quoted
            if b.kind == SCALAR and b.chars is not None and (quoted or b.chars.text.split() == [b.chars.text]):
                return b.chars.text, None, k, False
        return None, read, k, False

    def _varies(self, got) -> bool:
        """Whether a command read once per path of the choices it uses may do more than when read once: run a
        launch or code, call a function, or set variables (``echo "$KV"`` does nothing whatever KV holds)."""
        words = got[0]
        if not words:
            return False
        head = words[0].text
        if head is None or head in self.functions or head in PATH_BUILTINS or (
                head == "printf" and len(words) > 1 and words[1].text in ("-v", None)):
            return True
        cmd = unwrap(words)
        if cmd is not None and (cmd.runs or cmd.match is not None):
            return True
        return any(w.text is None and could_start_command(w.prefix) for w in words)


def _follows(key: tuple, words: list[tuple], read: list, src: ShellText) -> bool:
    """Whether :func:`unwrap` finds that the words run something kv4lint follows, or looks at a word whose value
    is to be read (which notes it in ``read``); from :data:`_UNWRAPPED` when the same words were asked before
    (``key``: each word's :func:`_key`; ``words``: what each :class:`Probe` is made of)."""
    hit = _UNWRAPPED.get(key)
    if hit is None:
        cmd = unwrap([Probe(text, rd, src, node, splat) for text, rd, node, splat in words])
        hit = _UNWRAPPED.keep(key, read[0] or (cmd is not None and (cmd.runs or cmd.match is not None)))
    return hit


def _key(src: ShellText, word: tuple) -> str | tuple:
    """What :func:`unwrap` may read of a word (text, read, node, splat): its text when literal (then nothing else),
    else its text as written, whether looking at it is noted and whether it may be several words."""
    text, read, node, splat = word
    return text if text is not None else (src.nt(node), read is None, splat)


# What unwrap told of a command's words (whether it looked at a word whose value is to be read, or they run
# something kv4lint follows), by everything it reads of them: a literal word's text; a word with expansions as
# written, and whether looking at it means reading it, or it splits into several (_key). Held for the process
# (kv4lint.base.memo): a script repeats its commands.
_UNWRAPPED = Memo(4096)
_LITERAL_END = re.compile(r"([\w./:@%+,=-]*)[\"']?\Z")  # what ends a word as written, unquoted and unexpanded


class Probe:
    """A word of a command as written, for :meth:`Walker._inert`: its text when literal; a word that is not
    notes in ``read`` when :func:`unwrap` looks at it (what it runs may then depend on its value)."""

    __slots__ = ("_text", "_read", "_src", "_node", "_splat")

    def __init__(self, text: str | None, read: list | None, src: ShellText, node, splat: bool = False):
        self._text = text
        self._read = read  # None: an unknown word as its expansion gives it (a variable of the environment)
        self._src = src
        self._node = node
        self._splat = splat

    def _look(self) -> None:
        if self._text is None and self._read is not None:
            self._read[0] = True

    @property
    def text(self) -> str | None:
        self._look()
        return self._text

    @property
    def prefix(self) -> str:
        self._look()
        return self._text or ""

    @property
    def raw(self) -> str:
        self._look()
        return self._src.nt(self._node)

    @property
    def suffix(self) -> str:
        """(Not a look: the literal end of the word as written, ``/health`` of ``"http://${port}/health"``.)"""
        if self._text is not None:
            return self._text
        return _LITERAL_END.search(self._src.nt(self._node)).group(1)

    @property
    def unknown(self) -> bool:
        self._look()
        return self._text is None

    @property
    def splat(self) -> bool:
        self._look()
        return self._splat

    def tail(self, k: int) -> "Probe":
        self._look()
        return Probe(self._text[k:] if self._text is not None else None, self._read or [False], self._src,
                     self._node)

    def synth(self, text: str) -> "Probe":
        return Probe(text, self._read, self._src, self._node)

    def concat(self, words) -> "Probe":
        for w in words:
            w._look()
        text = None if any(w._text is None for w in words) else " ".join(w._text for w in words)
        return Probe(text, self._read, self._src, self._node)

    def anchor(self) -> Span:
        return self._src.fanchor(*self._src.ns(self._node))
