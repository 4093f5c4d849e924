"""Dockerfiles and Containerfiles: RUN, CMD and ENTRYPOINT, with ENV/ARG and the base image.

The instruction splitter is line based, as Docker's own parser is: parser
directives (``# escape=``), continuation lines (the escape character at the
end of a line; comment and empty lines inside a continuation are dropped),
heredocs (``RUN <<EOF``).  Each instruction's arguments become one text with
an :class:`~kv4lint.base.source.OffsetMap` back to the file, so the shell
frontend's spans land on the Dockerfile's characters.

* Shell form (``RUN``/``CMD``/``ENTRYPOINT`` followed by text) is scanned as
  shell.  The stage's ``ENV`` (and, for ``RUN``, ``ARG``) assignments written
  as ``NAME=value`` are put before it as shell assignments mapped to where
  they are written, so ``--kv-cache-dtype $KV`` resolves to the ``ENV`` line
  and a fix edits it there.
* Exec form (a JSON array) is read as argv: each string's span is inside its
  quotes.  The effective ``ENTRYPOINT`` and ``CMD`` of a stage are joined as
  Docker joins them (``ENTRYPOINT ["python3", "-m", "sglang.launch_server"]``
  + ``CMD ["--model-path", ...]``).
* ``FROM`` images give platform/version/GPU hints (``-rocm``, ``intel/``,
  ``:v0.5.23-cu129``), per stage; a stage built ``FROM`` another inherits its
  hints, environment, entrypoint and command.
"""

from __future__ import annotations

import os
import re
from collections import ChainMap
from collections.abc import Mapping
from dataclasses import dataclass, field

from immutables import Map

from kv4lint.base import internal_error
from kv4lint.base.file_error import FileError
from kv4lint.base.model import Hint, Provenance, ScanResult, Span, Value
from kv4lint.base.record import replace
from kv4lint.base.source import LineIndex, OffsetMap
from kv4lint.frontends import argv_lists, budget, embedded
from kv4lint.frontends.argv_lists import Word
from kv4lint.frontends.comments import outside
from kv4lint.frontends.embedded import TextBuilder
from kv4lint.frontends.env_launchers import Setting, env_launch
from kv4lint.frontends.hints import env_hints, image_hints
from kv4lint.sglang.commands import SHELLS

_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*([A-Za-z][A-Za-z0-9_-]*)[ \t]*=[ \t]*(.*?)[ \t]*$")
_INSTR = re.compile(r"^[ \t]*([A-Za-z]+)(?=[ \t]|$)[ \t]*")
_HEREDOC = re.compile(r"<<(-?)([\"']?)([A-Za-z_][A-Za-z0-9_]*)\2")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
# A NAME=value assignment that reads the same to Docker and to a shell.
_SAFE_ASSIGN = re.compile(
    r"""[A-Za-z_][A-Za-z0-9_]*=(?:[A-Za-z0-9_./:,@%+=\-]|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|"(?:[^"\\`$]|"""
    r"""\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)*"|'[^']*')*""")


@dataclass
class Heredoc:
    delim: str
    body: str
    omap: OffsetMap
    strip_tabs: bool


@dataclass
class Instruction:
    keyword: str  # upper case
    line: int  # 1-based line of the keyword
    start: int  # offset of the keyword
    end: int  # offset after the instruction (its heredocs included)
    args: str  # the arguments, continuation lines joined
    omap: OffsetMap  # args -> file offsets
    heredocs: list[Heredoc] = field(default_factory=list)
    tail_start: int = 0  # file offset where the text after the arguments' last line begins (heredocs)


def parse(text: str) -> tuple[list[Instruction], str]:
    """Split a Dockerfile into instructions.  Returns them and the escape character."""
    lines: list[tuple[int, int, int]] = []  # (start, content end, next line start)
    i = 0
    n = len(text)
    while i < n:
        j = text.find("\n", i)
        if j < 0:
            ce = n
            nxt = n
        else:
            ce = j - 1 if j > i and text[j - 1] == "\r" else j
            nxt = j + 1
        lines.append((i, ce, nxt))
        i = nxt
    escape = "\\"
    k = 0
    while k < len(lines):
        ls, ce, _ = lines[k]
        m = _DIRECTIVE.match(text, ls, ce)
        if not m or m.end() != ce and text[m.end():ce].strip():
            break
        if m.group(1).lower() == "escape" and m.group(2) in ("\\", "`"):
            escape = m.group(2)
        k += 1
    cont = re.compile(re.escape(escape) + r"[ \t]*$")
    out: list[Instruction] = []
    while k < len(lines):
        ls, ce, _ = lines[k]
        first_line = k + 1
        content = text[ls:ce]
        st = content.lstrip(" \t")
        if not st or st.startswith("#"):
            k += 1
            continue
        m = _INSTR.match(content)
        if not m:
            k += 1
            continue
        kw = m.group(1).upper()
        b = TextBuilder()
        pos, line_end = ls + m.end(), ce
        last_line = k
        while True:
            piece = text[pos:line_end]
            cm = cont.search(piece)
            if cm is None:
                b.verbatim(piece, pos)
                last_line = k
                k += 1
                break
            b.verbatim(piece[:cm.start()], pos)
            last_line = k
            k += 1
            while k < len(lines):
                s2, e2, _ = lines[k]
                t2 = text[s2:e2].strip(" \t")
                if t2 and not t2.startswith("#"):
                    break
                k += 1
            if k >= len(lines):
                break
            pos, line_end = lines[k][0], lines[k][1]
        end_of_args = lines[last_line][1]
        args, omap = b.build(end=end_of_args)
        instr = Instruction(kw, first_line, ls + (len(content) - len(st)), lines[last_line][2],
                            args, omap, tail_start=end_of_args)
        if kw in ("RUN", "COPY", "ADD") and "<<" in args:
            for hm in _HEREDOC.finditer(args):
                delim, strip = hm.group(3), hm.group(1) == "-"
                hb = TextBuilder()
                while k < len(lines):
                    s2, e2, n2 = lines[k]
                    line = text[s2:e2]
                    k += 1
                    if (line.lstrip("\t") if strip else line) == delim:
                        break
                    hb.verbatim(text[s2:n2], s2)
                body, hmap = hb.build(end=lines[k - 1][0] if k - 1 < len(lines) else n)
                instr.heredocs.append(Heredoc(delim, body, hmap, strip))
                instr.end = lines[k - 1][2] if k - 1 < len(lines) else n
        out.append(instr)
    return out, escape


# ---------------------------------------------------------------------------
# Words of ENV / ARG / FROM (Docker's own word rules: quotes, the escape character)


@dataclass
class DWord:
    raw: str  # as written
    value: str  # quotes and escapes removed
    start: int  # offsets in the instruction's args text
    end: int


def docker_words(args: str, escape: str) -> list[DWord]:
    words: list[DWord] = []
    i, n = 0, len(args)
    while i < n:
        while i < n and args[i] in " \t\r\n":
            i += 1
        if i >= n:
            break
        s = i
        val: list[str] = []
        quote = None
        while i < n:
            c = args[i]
            if quote:
                if c == quote:
                    quote = None
                elif c == escape and quote == '"' and i + 1 < n:
                    i += 1
                    val.append(args[i])
                else:
                    val.append(c)
            elif c in "\"'":
                quote = c
            elif c == escape and i + 1 < n:
                i += 1
                val.append(args[i])
            elif c in " \t\r\n":
                break
            else:
                val.append(c)
            i += 1
        words.append(DWord(args[s:i], "".join(val), s, i))
    return words


def _substitute(value: str, env: Mapping[str, str | None]) -> str | None:
    """Docker's ``$VAR``/``${VAR}`` substitution; None when a variable is not known (absent, or None)."""
    out = []
    pos = 0
    for m in _VAR.finditer(value):
        got = env.get(m.group(1) or m.group(2))
        if got is None:
            return None
        out.append(value[pos:m.start()])
        out.append(got)
        pos = m.end()
    if "${" in value[pos:]:
        return None
    out.append(value[pos:])
    return "".join(out)


# ---------------------------------------------------------------------------
# Stages


@dataclass
class Assignment:
    name: str
    value: str | None  # the value Docker gives it (None: not known statically)
    # ``NAME=value`` as written, with its file offsets, when a shell reads it the same
    piece: tuple[str, list[int]] | None
    span: Span | None  # the whole assignment in the file
    value_span: Span | None


@dataclass
class Command:
    """An effective CMD or ENTRYPOINT."""

    exec_form: bool
    words: list[Word] = field(default_factory=list)  # exec form
    args: str = ""  # shell form
    omap: OffsetMap | None = None
    line: int = 0


class _Chain:
    """A stage's ENV assignments in order, shared with the stages built on it (``FROM base``: each adds to its own
    end, none copies the others')."""

    __slots__ = ("item", "prev", "size")

    def __init__(self, item: Assignment | None = None, prev: "_Chain | None" = None, size: int = 0):
        self.item, self.prev, self.size = item, prev, size

    def add(self, item: Assignment) -> "_Chain":
        return _Chain(item, self, self.size + 1)

    def __len__(self) -> int:
        return self.size

    def __iter__(self):
        items = []
        c = self
        while c.size:
            items.append(c.item)
            c = c.prev
        return reversed(items)


@dataclass
class Stage:
    name: str | None
    hints: list[Hint] = field(default_factory=list)
    env: _Chain = field(default_factory=_Chain)
    args: list[Assignment] = field(default_factory=list)
    entrypoint: Command | None = None
    cmd: Command | None = None
    defines_command: bool = False
    shell: bool = True  # the SHELL is sh-like
    copies: list[tuple[str, str]] = field(default_factory=list)  # (source, destination) of its own COPY/ADD
    image: str | None = None  # the base image of the first stage of its chain
    image_span: Span | None = None
    # Kept as ENV and ARG are added (each instruction reads them: rebuilt, a file's cost grew with the square of
    # its ENV lines): the last assignment of each name with its place in ``env``/``args``, the value ENV leaves
    # each name, and the last known value ARG gave it. ENV's are persistent maps, shared with the stages built on
    # this one (copied, a file of many stages on one base grew with the square too).
    env_last: Map = field(default_factory=Map)  # name -> (place, Assignment)
    args_last: dict[str, tuple[int, Assignment]] = field(default_factory=dict)
    env_values: Map = field(default_factory=Map)  # name -> str
    arg_values: dict[str, str] = field(default_factory=dict)

    def child(self, name: str | None) -> "Stage":
        """A stage built on this one (its COPYs stay this one's: ScanResult.copies has each stage's own)."""
        return Stage(name, list(self.hints), self.env, [], self.entrypoint, self.cmd, False, self.shell, [],
                     self.image, self.image_span, self.env_last, {}, self.env_values)

    def add_env(self, new: list[Assignment]) -> None:
        for a in new:
            self.env_last = self.env_last.set(a.name, (len(self.env), a))
            self.env = self.env.add(a)
            if a.value is not None:
                self.env_values = self.env_values.set(a.name, a.value)
            elif a.name in self.env_values:
                self.env_values = self.env_values.delete(a.name)

    def add_args(self, new: list[Assignment]) -> None:
        for a in new:
            self.args_last[a.name] = (len(self.args), a)
            self.args.append(a)
            if a.value is not None:
                self.arg_values[a.name] = a.value

    def known(self) -> ChainMap:
        """The values an ENV or ARG instruction substitutes: ENV's over ARG's (an ENV always overrides an ARG of
        the same name, Docker's reference says), neither copied."""
        return ChainMap(self.env_values, self.arg_values)

    def readable(self, body: str, with_args: bool) -> list[Assignment]:
        """The assignments a shell of ``body`` may read (:func:`embedded.names_read`): the last ENV of each name,
        else (with ``with_args``) its last ARG; ENV's then ARG's, in their order."""
        lasts = [self.args_last, self.env_last] if with_args else [self.env_last]
        read = embedded.names_read(body, ChainMap(*lasts[::-1]), _shell_reads)  # (the later first)
        env = sorted(self.env_last[n] for n in read if n in self.env_last)
        args = sorted(self.args_last[n] for n in read if n in self.args_last and n not in self.env_last) \
            if with_args else []
        return [a for _, a in env + args]


def _shell_reads(last: tuple[int, Assignment]) -> str | None:
    """What a script reads of an assignment (``last``: its place and it), for names_read: its line as written where
    the script is given one (``DTYPE=$KV`` reads KV), else its value."""
    a = last[1]
    return a.piece[0] if a.piece is not None else a.value


def _assignments(instr: Instruction, escape: str, known: Mapping[str, str | None], *, arg: bool,
                 global_args: dict[str, Assignment] | None = None) -> list[Assignment]:
    words = docker_words(instr.args, escape)
    out: list[Assignment] = []
    if not words:
        return out
    if not arg and "=" not in words[0].raw:
        # Legacy ``ENV NAME value with spaces``: the rest of the line is the value.
        name = words[0].value
        if not _NAME.fullmatch(name) or len(words) < 2:
            return out
        rest_start = words[1].start
        raw = instr.args[rest_start:].rstrip()
        value = _substitute(raw, known)
        vspan = instr.omap.span(Span(rest_start, rest_start + len(raw)))
        piece = None
        if len(words) == 2 and _SAFE_ASSIGN.fullmatch(f"{name}={words[1].raw}") and "$" not in words[1].raw:
            # ``NAME value`` reads as ``NAME=value``: the '=' stands where the blank is.
            outer = [instr.omap.offset(words[0].start + q) for q in range(len(name))]
            outer.append(instr.omap.offset(words[0].end))
            outer += [instr.omap.offset(words[1].start + q) for q in range(len(words[1].raw))]
            piece = (f"{name}={words[1].raw}", outer)
        span = instr.omap.anchor(Span(words[0].start, rest_start + len(raw)))
        out.append(Assignment(name, value, piece, span, vspan))
        return out
    env = ChainMap({}, known)  # what this instruction sets over ``known`` (None: set to what is not known)
    for w in words:
        if "=" not in w.raw:
            if arg and _NAME.fullmatch(w.value):
                g = (global_args or {}).get(w.value)
                if g is not None:
                    out.append(g)
                    if g.value is not None:
                        env[g.name] = g.value
                else:
                    out.append(Assignment(w.value, None, None, instr.omap.anchor(Span(w.start, w.end)), None))
            continue
        name, _, _ = w.raw.partition("=")
        if not _NAME.fullmatch(name):
            continue
        value_raw = w.value.partition("=")[2]
        value = _substitute(value_raw, env) if "$" in w.raw else value_raw
        vstart = w.start + len(name) + 1
        raw_value = w.raw[len(name) + 1:]
        vs, ve = vstart, w.end
        if raw_value[:1] in "\"'" and len(raw_value) >= 2 and raw_value[-1] == raw_value[0]:
            vs, ve = vs + 1, ve - 1
        vspan = instr.omap.span(Span(vs, ve)) if instr.args[vs:ve] == value_raw else None
        piece = None
        if _SAFE_ASSIGN.fullmatch(w.raw) and (escape == "\\" or "\\" not in w.raw):
            piece = (w.raw, [instr.omap.offset(w.start + q) for q in range(len(w.raw))])
        out.append(Assignment(name, value, piece, instr.omap.anchor(Span(w.start, w.end)), vspan))
        env[name] = value
    return out


def _exec_words(instr: Instruction) -> list[Word] | None:
    parsed = embedded.json_string_array(instr.args)
    if parsed is None:
        return None
    items, end = parsed
    if instr.args[end:].strip():
        return None
    om = instr.omap
    extents = [(om.offset(it.start), om.offset(it.end - 1) + 1) for it in items]
    removes = argv_lists.removal_spans(extents)
    words = []
    for it, rm in zip(items, removes):
        wmap = om.compose(OffsetMap(it.outer))
        span = wmap.span(Span(0, len(it.value))) if it.value else None
        words.append(Word(Value(it.value, span, Provenance.LITERAL, use=None if span else Span(*extents[len(words)]),
                                remove=rm, quote='"'), wmap))
    return words


def _prelude(b: TextBuilder, assigns: list[Assignment]) -> dict[str, str]:
    """Put the assignments a shell can read the same way before the script; the rest go to ``env``."""
    env: dict[str, str] = {}
    for a in assigns:
        if a.piece is not None:
            text, outer = a.piece
            b.mapped(text, outer)
            b.synthetic("\n", outer[-1] + 1 if outer else 0)
            env.pop(a.name, None)
        elif a.value is not None:
            env[a.name] = a.value
    return env


class _Scanner:
    def __init__(self, text: str, path: str):
        self.text = text
        self.path = path
        self.result = ScanResult()
        self.index = LineIndex(text)

    def shell(self, stage: Stage, body: str, omap: OffsetMap, line: int, *, with_args: bool, what: str) -> None:
        if not stage.shell:
            return
        b = TextBuilder()
        assigns = stage.readable(body, with_args)
        env = _prelude(b, assigns)
        b.mapped(body, omap.outer)
        full, fmap = b.build(end=omap.outer[-1] if omap.outer else 0)
        sub = embedded.scan_shell_text(full, self.path, fmap, env=env, hints=self.stage_hints(stage, assigns),
                                       what=what, line=line, file_text=self.text)
        embedded.merge(self.result, sub, text=self.text, index=self.index, opener=self.index.offset(line, 1))

    def words(self, stage: Stage, words: list[Word], line: int, *, what: str) -> ScanResult:
        # (what an ``sh -c`` among the words may read, and the platform's settings: not every ENV of the stage)
        assigns = stage.readable(" ".join(w.value.text or "" for w in words), with_args=False)
        env = {a.name: a.value for a in assigns if a.value is not None}
        sub = argv_lists.launches_from_words(words, self.path, env=env, hints=self.stage_hints(stage, assigns),
                                             language="dockerfile", what=what)
        for err in sub.errors:
            if err.line is None:
                err.line = line
        embedded.apply_disabled(sub, self.text, self.index, self.index.offset(line, 1))
        return sub

    @staticmethod
    def stage_hints(stage: Stage, assigns: list[Assignment]) -> list[Hint]:
        hints: list[Hint] = []
        for a in assigns:
            hints.extend(env_hints(a.name, a.value, a.span, how="ENV"))
        return hints + stage.hints


def scan_dockerfile(text: str, path: str) -> ScanResult:
    """Launches in a Dockerfile: RUN, and each stage's effective ENTRYPOINT + CMD."""
    sc = _Scanner(text, path)
    try:
        instrs, escape = parse(text)
    except Exception as e:  # noqa: BLE001 - never raise on any input
        sc.result.errors.append(FileError(path, f"cannot read the Dockerfile ({type(e).__name__}: {e})"))
        return sc.result
    global_args: dict[str, Assignment] = {}
    global_values: dict[str, str | None] = {}  # their values, as substitution reads them (None: not known)
    stages: dict[str, Stage] = {}
    stage: Stage | None = None
    finished: list[Stage] = []
    env_defs: list[Assignment] = []
    for ins in instrs:
        if budget.spent():  # the file's launches passed their bound: the rest is not read (kv4lint.frontends.budget)
            break
        kw = ins.keyword
        try:
            if kw == "FROM":
                if stage is not None:
                    finished.append(stage)
                    _stage_command(sc, stage)
                stage = _from(ins, escape, global_values, stages)
                if stage.name:
                    stages[stage.name.lower()] = stage
                continue
            if stage is None:
                if kw == "ARG":
                    for a in _assignments(ins, escape, global_values, arg=True):
                        global_args[a.name] = a
                        global_values[a.name] = a.value
                continue
            if kw == "ENV":
                new = _assignments(ins, escape, stage.known(), arg=False)
                stage.add_env(new)
                env_defs.extend(new)
            elif kw == "ARG":
                stage.add_args(_assignments(ins, escape, stage.known(), arg=True, global_args=global_args))
            elif kw == "SHELL":
                ws = _exec_words(ins)
                first = os.path.basename(ws[0].text or "") if ws else ""
                stage.shell = first in SHELLS
            elif kw in ("COPY", "ADD"):
                dw = [w for w in docker_words(ins.args, escape) if not w.value.startswith("--")]
                if len(dw) == 2 and "<<" not in ins.args:
                    stage.copies.append((dw[0].value, dw[1].value))
            elif kw == "RUN":
                _run(sc, stage, ins)
            elif kw in ("CMD", "ENTRYPOINT"):
                words = _exec_words(ins)
                cmd = Command(words is not None, words or [], ins.args, ins.omap, ins.line)
                if kw == "ENTRYPOINT":
                    stage.entrypoint = cmd
                    stage.cmd = None  # Docker resets an inherited CMD when ENTRYPOINT is set
                else:
                    stage.cmd = cmd
                stage.defines_command = True
        except Exception as e:  # noqa: BLE001 - one instruction must not stop the others
            sc.result.errors.append(internal_error.scan_error(path, f"while scanning {kw}", e, ins.line))
    if stage is not None and not budget.spent():
        finished.append(stage)
        if not stage.defines_command and stage.image_span is not None:
            # The image's own program: a launcher that builds SGLang's command from the environment ENV sets.
            launch = env_launch(stage.image, [Setting(a.name, a.value, a.value_span, a.span) for a in stage.env],
                                path=path, span=stage.image_span, anchor=stage.image_span, language="dockerfile",
                                hints=stage.hints)
            if launch is not None:
                sc.result.launches.append(launch)
                env_defs = [a for a in env_defs if a.value_span is None or all(
                    v.span != a.value_span for v in launch.argv)]  # read by the launcher alone: not shared
        _stage_command(sc, stage)
    _mark_shared(sc, env_defs)
    # A here-document's lines are a file's or a script's text, not Dockerfile comments.
    embedded.apply_disabled(sc.result, text, sc.index, comments=lambda: outside(
        [(ins.tail_start, ins.end) for ins in instrs if ins.heredocs]))
    sc.result.copies = [c for st in finished for c in st.copies]  # where a --config path in the image comes from
    sc.result.launches.sort(key=lambda launch: (launch.span.start, launch.anchor.start))
    return sc.result


def _stage_command(sc: _Scanner, st: Stage) -> None:
    """A stage's effective ENTRYPOINT + CMD, read when the stage ends (what it inherits comes before it)."""
    if st.defines_command:
        try:
            _effective_command(sc, st)
        except Exception as e:  # noqa: BLE001
            sc.result.errors.append(internal_error.scan_error(sc.path, "while scanning the command", e))


def _from(ins: Instruction, escape: str, global_values: dict[str, str | None], stages: dict[str, Stage]) -> Stage:
    words = [w for w in docker_words(ins.args, escape) if not w.value.startswith("--")]
    name = None
    if len(words) >= 3 and words[1].value.lower() == "as":
        name = words[2].value
    if not words:
        return Stage(name)
    w = words[0]
    image = _substitute(w.value, global_values)
    if image is not None and image.lower() in stages:
        return stages[image.lower()].child(name)
    st = Stage(name)
    if image:
        span = ins.omap.span(Span(w.start, w.end)) if image == w.raw else ins.omap.anchor(Span(w.start, w.end))
        st.hints = image_hints(image, span)
        st.image, st.image_span = image, span
    return st


def _run(sc: _Scanner, stage: Stage, ins: Instruction) -> None:
    words = _exec_words(ins)
    if words is not None:
        embedded.merge(sc.result, sc.words(stage, words, ins.line, what="RUN"))
        return
    if ins.heredocs:
        before = _HEREDOC.sub("", ins.args).strip()
        if not before:
            # ``RUN <<EOF``: the body is the script (a shebang may name its interpreter).
            for hd in ins.heredocs:
                first = hd.body.split("\n", 1)[0]
                if first.startswith("#!") and "python" in first:
                    embedded.merge(sc.result, embedded.scan_python_text(hd.body, sc.path, hd.omap, what="RUN heredoc",
                                                                        line=ins.line))
                else:
                    sc.shell(stage, hd.body, hd.omap, ins.line, with_args=True, what="RUN heredoc")
            return
        # ``RUN python3 <<EOF`` / ``RUN bash <<EOF``: the shell frontend reads the heredoc itself.
        b = TextBuilder()
        b.mapped(ins.args, ins.omap.outer)
        b.verbatim(sc.text[ins.tail_start:ins.end], ins.tail_start)
        body, omap = b.build(end=ins.end)
        sc.shell(stage, body, omap, ins.line, with_args=True, what="RUN")
        return
    sc.shell(stage, ins.args, ins.omap, ins.line, with_args=True, what="RUN")


def _effective_command(sc: _Scanner, st: Stage) -> None:
    ep, cmd = st.entrypoint, st.cmd
    if ep is not None and not ep.exec_form:
        sc.shell(st, ep.args, ep.omap, ep.line, with_args=False, what="ENTRYPOINT")
        return
    if ep is not None:
        words = ep.words + (cmd.words if cmd is not None and cmd.exec_form else [])
        sub = sc.words(st, words, ep.line, what="ENTRYPOINT")
        if not sub.launches and cmd is not None and cmd.exec_form:
            # An entrypoint script that ends in ``exec "$@"`` runs CMD as the command.
            sub = sc.words(st, cmd.words, cmd.line, what="CMD")
        embedded.merge(sc.result, sub)
        return
    if cmd is None:
        return
    if cmd.exec_form:
        embedded.merge(sc.result, sc.words(st, cmd.words, cmd.line, what="CMD"))
    else:
        sc.shell(st, cmd.args, cmd.omap, cmd.line, with_args=False, what="CMD")


def _mark_shared(sc: _Scanner, defs: list[Assignment]) -> None:
    """A value resolved from an ENV line that more than one instruction reads is shared: its fix is unsafe."""
    if not defs or not sc.result.launches:
        return
    uses: dict[str, int] = {}
    for m in _VAR.finditer(sc.text):
        name = m.group(1) or m.group(2)
        uses[name] = uses.get(name, 0) + 1
    spans = [(a.value_span, a.name) for a in defs if a.value_span is not None and uses.get(a.name, 0) > 1]
    if not spans:
        return
    for launch in sc.result.launches:
        for k, v in enumerate(launch.argv):
            if v.span is None or v.shared:
                continue
            for vs, _ in spans:
                if vs.start <= v.span.start and v.span.end <= vs.end:
                    launch.argv[k] = replace(v, shared=True)
                    break
