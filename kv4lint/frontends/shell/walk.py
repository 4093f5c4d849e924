"""Walking a shell script the way bash would run it, and the launches it runs.

The :class:`Walker` runs statements in order (functions, loops, branches,
heredocs, pipelines), keeping the variables each assignment sets (branches
merged: what differs is unknown).  A command's words, expanded by
:class:`~kv4lint.frontends.shell.expand.Expander`, go through
:func:`kv4lint.sglang.commands.unwrap`: an SGLang entry point becomes a
:class:`~kv4lint.base.model.Launch` (with the hints its wrappers and the script's
environment give); a shell string (``bash -c``, ``ssh host CMD``) is walked in
turn, and Python code (``python -c``, ``python -`` fed by a heredoc) goes to
the Python frontend.

Nothing is guessed: a value that depends on the environment, a command
substitution or a branch not known statically is ``Value.unknown()``.
"""

from __future__ import annotations

import re
from typing import Callable

from kv4lint.base import internal_error
from kv4lint.frontends import nested
from kv4lint.frontends.hints import NAME_WORD, PLATFORM_NAMES, dedupe_hints, env_hints, fact_hints
from kv4lint.frontends.shell.choices import ChoicePoint, merge_variables
from kv4lint.frontends.shell.expand import EXPANSIONS, HOLE, MAX_DEPTH, NAME, Expander, Field, setting_chars
from kv4lint.frontends.shell.variables import ALLEXPORT, ARRAY, CHOICE, CONCAT, SCALAR, UNKNOWN, UNSET, Assignment, \
    Binding, Element, Ref, Variables
from kv4lint.base.file_error import FileError
from kv4lint.base.memo import Memo
from kv4lint.base.model import MAX_WORDS, ForeignString, Hint, Launch, ScanResult, Span, Value
from kv4lint.base.source import LineIndex, OffsetMap
from kv4lint.base.suppression import codes_above, file_codes
from kv4lint.frontends.shell import parse as shell_parse
from kv4lint.frontends.shell.branches import Branches
from kv4lint.frontends.shell.calls import MAX_STEPS, Calls
from kv4lint.frontends.shell.inert import READERS, WORDISH, Inert, allexport
from kv4lint.frontends.shell.launches import build_launches, to_value
from kv4lint.frontends.shell.machine import Machine, comment_hints, header_hints
from kv4lint.frontends.shell.parse import Chars, CharsBuilder, ShellText, parse_pieces, parse_shell
from kv4lint.sglang.commands import Command, unwrap

__all__ = ["scan_shell", "split_words"]

# Limits that keep hostile input cheap.
_MAX_VALUE = 64 * 1024  # characters of one variable's value
_MAX_ITEMS = 100_000  # elements of one array
_MAX_LOOP_ITEMS = 64  # a for-loop over more items is walked once, its variable a choice of the items
_MAX_LOOP_PRODUCT = 256  # nested loops: total iterations walked (past it: walked once, as above)

# ===========================================================================
# The walker: runs the statements in order


_SEP_CMD = re.compile(r"(?:[ \t]|\\\r?\n)+")
_SEP_LIST = re.compile(r"(?:[ \t\r\n]|\\\r?\n)+")
_READER_OPTS = {"read": {"-p", "-d", "-n", "-N", "-t", "-u", "-i"},
                "mapfile": {"-d", "-n", "-O", "-s", "-u", "-C", "-c"},
                "readarray": {"-d", "-n", "-O", "-s", "-u", "-C", "-c"}}
_CHAIN = {"list", "pipeline", "redirected_statement", "negated_command"}
_NOT_LAUNCH_STMT = {"comment", "heredoc_body", "heredoc_start", "heredoc_end", "file_redirect",
                    "herestring_redirect"}
_AFTER = {"pipeline", "list", "command", "redirected_statement"}  # what follows a here-document's start line


class _Exec:
    """A command to follow: what :func:`~kv4lint.sglang.commands.unwrap` found, with its environment and hints."""

    __slots__ = ("cmd", "env", "hints")

    def __init__(self, cmd: Command, env: list[tuple[str, Chars | None, Span | None]], hints: list[Hint]):
        self.cmd = cmd
        self.env = env  # the variables the command's prefix and wrappers set
        self.hints = hints


class _Pending:
    """A launch found, waiting for the walk to end (``shared`` needs every use counted)."""

    __slots__ = ("entry", "span", "anchor", "argv", "hints", "disabled", "condition")

    def __init__(self, entry, span, anchor, argv, hints, disabled, condition):
        self.entry = entry
        self.span = span
        self.anchor = anchor
        self.argv = argv
        self.hints = hints
        self.disabled = disabled
        self.condition = condition  # the paths of the script that run it with these values (None: every run)


class _Scan:
    """State shared by every walker of one file (the file's own and nested ones)."""

    def __init__(self, path: str, file_text: str | None):
        self.path = path
        self.file_text = file_text
        self.pending: list[_Pending] = []
        self.other: list[tuple[Launch, dict]] = []  # from the Python frontend, and what came through variables
        self.errors: list[FileError] = []
        self.steps = 0
        self.loop_mult = 1
        self.too_deep = False
        self.too_many = False  # a command or array past MAX_WORDS was met
        self.launch_words = 0  # words of the launches found (MAX_WORDS in all)
        # Value sets (kv4lint.frontends.shell.choices): the path chosen at each join while a command is
        # expanded once per path, the joins met by the expansion under way, the conditions of the paths chosen.
        self.selection: dict = {}
        self.seen: list = []
        self.consulted: list = []  # the joins whose bindings were read, while a call is walked (Calls)
        self.per_path = 0  # commands read once per path
        self.conds: list[str] = []
        self.partial = False  # reading one choice at a time: the others unknown but for what their paths share
        self.levels = 0  # commands being read per path around the one being read
        self.too_many_readings = False
        self.past_steps = False
        # Every variable written, in order: a join merges only the names written since its branches began.
        self.journal: list[str] = []
        # ``source FILE``: the files met (as written), and the variables each sets when the pipeline read it.
        self.sources: list[str] = []
        self.sourced: dict[str, dict[str, ForeignString | None]] = {}  # ref -> name -> value (None: unknown)
        self.machine = Machine()  # the GPU the script tests (kv4lint.frontends.shell.machine)

    def save(self) -> tuple:
        """What the walk has recorded (launches, errors, the bounds said to be met), to undo a reading not kept."""
        return (len(self.pending), len(self.other), len(self.errors), self.too_deep, self.too_many,
                self.too_many_readings, self.past_steps)

    def restore(self, saved: tuple) -> None:
        """Undo what was recorded since ``saved``; a bound whose error goes is said again if met (not a silent pass)."""
        del self.pending[saved[0]:]
        del self.other[saved[1]:]
        del self.errors[saved[2]:]
        self.too_deep, self.too_many, self.too_many_readings, self.past_steps = saved[3:]

    def charge(self, words: int, line, *, launches: bool = False) -> bool:
        """False (and a file error, once) past ``MAX_WORDS``: for a command or array of that many words
        (not read: ordinary commands cost ~10 us a word, and the file size bounds how many there are), or,
        with ``launches``, for the launches of the text together (judging costs ~0.1 ms a word)."""
        if words <= MAX_WORDS:
            return True
        if not isinstance(line, int):
            line = line()
        if not self.too_many:
            self.too_many = True
            what = "launches of more than" if launches else "a command or array of more than"
            self.errors.append(FileError(self.path, f"{what} {MAX_WORDS} words (the limit kv4lint reads) "
                                                    f"at line {line}: not scanned further", line=line))
        return False

    def nested_too_deep(self, line: int) -> None:
        """Statements nested deeper than ``MAX_DEPTH`` are not walked: say so once, a launch there is unknown."""
        if not self.too_deep:
            self.too_deep = True
            self.errors.append(FileError(self.path, f"shell text nested more than {MAX_DEPTH} levels deep near "
                                                    f"line {line}: not scanned further", line=line))


class Walker(Branches, Calls, Inert):
    """Runs the statements of one source in order, as bash would, and records the launches found.

    ``env`` is the variable state at the current statement; branches run on
    copies that are merged afterwards.  Nested code (``bash -c``, heredocs fed
    to a shell) gets its own walker sharing the same :class:`_Scan`.
    """

    def __init__(self, scan: _Scan, src: ShellText, env: Variables, hints: list[Hint], *, depth: int = 0,
                 disabled: frozenset[str] | None = None):
        self.scan = scan
        self.src = src
        self.env = env
        self.hints = hints
        self.depth = depth
        self.deepest = depth  # the deepest the walk has been (how deep a call's walk went: Calls.call)
        self.inherited_disabled = disabled
        self.x = Expander(self)
        self.functions: dict[str, object] = {}
        self.called: set[str] = set()
        self._memo: dict[tuple, list] = {}  # calls that found nothing: the variables before and after
        self.call_stack: list[str] = []
        self._alike: dict[tuple, list] = {}  # calls that found and changed nothing, by the values they were given
        self._names: dict[int, tuple] = {}  # a function body's node id -> (the node, its text, the names in it)
        self._tracks: list = []  # the calls being walked: what each read (Calls, calls._Track)
        self.defined = 0  # functions defined or unset (the table of functions changed)
        self.frames: list[dict] = []
        self.chain: list[int] = []
        self.positional: list[Element] | None = None  # $1 $2 ...: None = unknown (the script's arguments)
        self._active = None  # the command run() found not inert, about to be read
        # The GPUs the comments on and above a statement name (machine.comment_hints), by the text and the
        # statement's place in it: a launch read once per path or loop item reads its comments once.
        self._comments = Memo(4096)

    # -- variables -----------------------------------------------------------------
    def bind(self, name: str, b: Binding, *, local: bool = False) -> None:
        # A value past the bound cannot be a KV-cache setting; keeping it would let a script that
        # doubles a variable (A=$A$A ...) grow without limit.
        if (b.kind == SCALAR and b.chars is not None and len(b.chars.text) > _MAX_VALUE) or (
                b.kind == ARRAY and len(b.elems or ()) > _MAX_ITEMS) or (b.lazy and b.size > _MAX_VALUE):
            b = Binding(UNKNOWN, assign=b.assign)
        if self.frames and (local or name in self.frames[-1]):
            frame = self.frames[-1]
            if name not in frame:
                frame[name] = self.env.vars.get(name)
        if b.assign is not None and name in self.env.exported:
            b.assign.exported = True
        self.env.set(name, b)
        self.scan.journal.append(name)

    def too_deep(self, node) -> None:
        """Nothing past ``MAX_DEPTH`` is read: a file error says so (a launch there is unseen, never clean)."""
        self.scan.nested_too_deep(self.src.line(self.src.c(node.start_byte)))

    def touch(self, node) -> None:
        """Evaluate a node only for its variable uses (and substitutions that may launch)."""
        if self.depth > MAX_DEPTH:
            self.too_deep(node)
            return
        x = self.x
        lazy, x.lazy = x.lazy, False
        x.touching += 1  # the values it gives are not read (Expander._positional)
        try:
            self._touch(node)
        finally:
            x.lazy = lazy
            x.touching -= 1

    def _touch(self, node) -> None:
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type in EXPANSIONS:
                self.depth += 1
                if self.depth > self.deepest:
                    self.deepest = self.depth
                try:
                    if not self.x.touch_name(n):
                        self.x.expand(n, True)
                finally:
                    self.depth -= 1
            elif n.type in ("command_substitution", "process_substitution"):
                self.subshell(n.named_children)
            else:
                stack.extend(n.named_children)

    # -- statements ----------------------------------------------------------------
    def run(self, nodes) -> None:
        scan = self.scan
        for n in nodes:
            if n.type == "command" and self.depth <= MAX_DEPTH and n.child_count <= MAX_WORDS:
                if self._inert(n):
                    scan.steps += 1  # most commands of a long script: nothing to follow, read without the rest
                    continue
                self._active = n  # not inert: Walker.command need not ask again
            self.stmt(n)

    def stmt(self, n, stdin: Chars | None = None) -> None:
        self.scan.steps += 1
        if self.depth > MAX_DEPTH:
            self.too_deep(n)
            return
        self.depth += 1
        if self.depth > self.deepest:
            self.deepest = self.depth
        # The chain of statements a command starts (``a && b``, ``a | b``, ``a > log``): a
        # suppression comment above the chain applies to its commands; one above an ``if`` does not.
        saved = self.chain
        t = n.type
        if t in _CHAIN:
            self.chain = saved + [n.start_byte]
        elif t != "command":
            self.chain = []
        try:
            h = _STMT.get(t)
            if h is not None:
                h(self, n) if stdin is None or t != "command" else self.command(n, stdin)
            elif n.is_named and t not in _NOT_LAUNCH_STMT:
                self.run(n.named_children)
        finally:
            self.depth -= 1
            self.chain = saved

    def subshell(self, nodes) -> None:
        saved = self.env
        self.env = saved.copy()
        x = self.x  # (an assignment whose value holds $(...) goes on after it as it was; $(f "$1") reads $1)
        lazy = x.lazy, x.lazy_target, x.lazy_unresolved
        touching, x.lazy, x.touching = x.touching, False, 0
        try:
            self.run(nodes)
        finally:
            self.env = saved
            x.lazy, x.lazy_target, x.lazy_unresolved = lazy
            x.touching = touching

    def _subshell_node(self, n) -> None:
        self.subshell(n.named_children)

    def _pipeline(self, n) -> None:
        kids = [k for k in n.children if k.is_named]
        for k in kids:
            self.subshell([k])

    def _compound(self, n) -> None:
        self.run(n.named_children)

    def _while(self, n) -> None:
        conds = [k for k in n.children_by_field_name("condition") if k.is_named]
        self.run(conds)
        pre = self.env
        mark = self._mark()
        self.env = pre.copy()
        body = n.child_by_field_name("body")
        if body is not None:
            self.stmt(body)
        self.env = merge_variables([pre, self.env], set(self.scan.journal[mark:]))

    def _for(self, n) -> None:
        var = n.child_by_field_name("variable")
        body = n.child_by_field_name("body")
        values = n.children_by_field_name("value")
        name = self.src.nt(var) if var is not None else None
        items: list[Field] | None = []
        if not any(k.type == "in" for k in n.children):
            items = None  # for x; do ...: the positional parameters
        else:
            for v in values:
                items.extend(self.x.fields(v))
            if any(f.unknown for f in items):
                items = None
        pre = self.env
        if body is None or name is None:
            return
        if items is None:
            mark = self._mark()
            self.env = pre.copy()
            self.bind(name, Binding(UNKNOWN, assign=Assignment(name, None)))
            self.stmt(body)
            self.env = merge_variables([pre, self.env], set(self.scan.journal[mark:]))
            return
        if not items:
            return
        if len(items) > _MAX_LOOP_ITEMS or self.scan.loop_mult * len(items) > _MAX_LOOP_PRODUCT or \
                self.scan.steps > MAX_STEPS:
            # Walked once, the variable a choice of the items: a command that uses it is read once per item
            # (every item runs: no condition), without walking the body once per item.
            mark = self._mark()
            self.env = pre.copy()
            point = ChoicePoint()
            for _ in items:
                point.add("", {})
            alts = [Binding(SCALAR, f.chars, assign=Assignment(name, f.anchor())) for f in items]
            self.bind(name, Binding(CHOICE, assign=Assignment(name, None), alts=alts, point=point))
            self.stmt(body)
            self.env = merge_variables([pre, self.env], set(self.scan.journal[mark:]))
            return
        self.scan.loop_mult *= len(items)
        try:
            for f in items:
                a = Assignment(name, f.anchor())
                self.bind(name, Binding(SCALAR, f.chars, assign=a))
                self.stmt(body)
        finally:
            self.scan.loop_mult //= len(items)

    def _c_for(self, n) -> None:
        pre = self.env
        mark = self._mark()
        self.env = pre.copy()
        body = n.child_by_field_name("body")
        self.touch(n) if body is None else self.stmt(body)
        self.env = merge_variables([pre, self.env], set(self.scan.journal[mark:]))

    def _function(self, n) -> None:
        name = n.child_by_field_name("name")
        body = n.child_by_field_name("body")
        if name is not None and body is not None:
            self.functions[self.src.nt(name)] = body
            self.defined += 1

    # -- assignments ----------------------------------------------------------------
    def _assignment(self, n, *, exported: bool = False, local: bool = False, stmt=None) -> None:
        value = n.child_by_field_name("value")
        name_node = n.child_by_field_name("name")
        old = self.env.vars.get(self.src.nt(name_node)) if name_node is not None and \
            name_node.type != "subscript" else None
        grows = old is not None and old.lazy and any(k.type == "+=" for k in n.children if not k.is_named)
        if (value is None or "$" not in self.src.nt(value)) and not grows:
            self._assign(n, exported, local, stmt)  # no expansion: the same value on every path
            return
        scan = self.scan
        if value is not None and value.type != "array" and not scan.selection and not scan.partial:
            # A value built from choices (ARGS="$ARGS --tp 8") refers to them, read on the path chosen when a
            # command uses it: no reading per path here, and no value multiplied out per combination.
            outer, scan.seen = scan.seen, []
            try:
                got = self.x.lazy_scalar(value, self.src.nt(name_node) if name_node is not None else None)
            finally:
                scan.seen = outer
            # Choices met only inside command substitutions or arithmetic give an unknown value on every path.
            if not self.x.lazy_unresolved:
                self._assign(n, exported, local, stmt, got)
                return
        probe = (lambda: self._array(value, Assignment("", None))) if value is not None and value.type == "array" \
            else (lambda: self.x.scalar(value) if value is not None else Chars())
        self._per_path(probe, lambda got: self._assign(n, exported, local, stmt, got), n)

    def _assign(self, n, exported: bool, local: bool, stmt, got=False) -> None:
        """Bind an assignment's name; ``got``: its value read already (False: read it here)."""
        exported = exported or ALLEXPORT in self.env.exported  # ``set -a``: every assignment is exported
        name_node = n.child_by_field_name("name")
        value = n.child_by_field_name("value")
        if name_node is None:
            return
        append = any(k.type == "+=" for k in n.children if not k.is_named)
        span = self.src.fanchor(*self.src.ns(stmt if stmt is not None else n))
        if name_node.type == "subscript":
            self._element_assignment(name_node, value, span)
            return
        name = self.src.nt(name_node)
        a = Assignment(name, span, exported)
        old = self.env.vars.get(name)
        if value is not None and value.type == "array":
            elems = self._array(value, a) if got is False else \
                [Element(el.chars, el.splat, el.remove, a) for el in got]
            if append and old is not None and old.lazy:  # appended to a choice: read on the path chosen
                b = Binding(CONCAT, elems=[], parts=[Ref(old), *elems], assign=a)
            else:
                if append and old is not None and old.kind == ARRAY:
                    elems = list(old.elems or []) + elems
                elif append and old is not None and old.kind == SCALAR and old.chars is not None:
                    elems = [Element(old.chars, False, None, old.assign)] + elems
                b = Binding(ARRAY, elems=elems, assign=a)
        else:
            chars = got if got is not False else self.x.scalar(value) if value is not None else Chars()
            if isinstance(chars, list) or (append and old is not None and old.lazy):
                pieces = chars if isinstance(chars, list) else [chars]
                if append and old is not None:
                    if old.lazy:
                        pieces = [Ref(old), *pieces]
                    elif old.kind == SCALAR and old.chars is not None:
                        pieces = [old.chars, *pieces]
                    elif old.kind != UNSET:
                        pieces = [None, *pieces]
                b = Binding(CONCAT, parts=pieces, assign=a)
            else:
                if append and old is not None:
                    if old.kind == SCALAR and old.chars is not None and chars is not None:
                        chars = old.chars + chars
                    elif old.kind == ARRAY and chars is not None:
                        b = Binding(ARRAY, elems=list(old.elems or []) + [Element(chars, False, None, a)], assign=a)
                        self.bind(name, b, local=local)
                        return
                    elif old.kind != UNSET:
                        chars = None
                b = Binding(SCALAR, chars, assign=a) if chars is not None else Binding(UNKNOWN, assign=a)
        self.bind(name, b, local=local)
        self.scan.machine.note(name, self.src.nt(value) if value is not None else "")
        if exported:
            self.env.export(name)

    def _element_assignment(self, sub, value, span) -> None:
        nm = sub.child_by_field_name("name")
        ix = sub.child_by_field_name("index")
        if nm is None:
            return
        name = self.src.nt(nm)
        chars = self.x.scalar(value) if value is not None else Chars()
        old = self.env.vars.get(name)
        itext = self.src.nt(ix).strip() if ix is not None else ""
        a = Assignment(name, span)
        if old is not None and old.kind == ARRAY and itext.isdigit() and chars is not None:
            k = int(itext)
            elems = list(old.elems or [])
            if k < len(elems):
                elems[k] = Element(chars, False, None, a)
                self.bind(name, Binding(ARRAY, elems=elems, assign=a))
                return
            if k == len(elems):
                self.bind(name, Binding(ARRAY, elems=elems + [Element(chars, False, None, a)], assign=a))
                return
        self.bind(name, Binding(ARRAY, elems=[Element(None, True, None, a)], assign=a))

    def _array(self, node, a: Assignment) -> list[Element]:
        kids = node.children
        if not self.scan.charge(len(kids), lambda: self.src.line(self.src.c(node.start_byte))):
            return [Element(None, True, None, a)]  # not read: unknown elements
        elems = []
        spans = self.src.spans(kids)
        for i, k in enumerate(kids):
            if not k.is_named or k.type == "comment":
                continue
            fs = self.x.fields(k)
            rm = self.src.removal(kids, spans, i, _SEP_LIST) if len(fs) == 1 else None
            for f in fs:
                elems.append(Element(None if f.unknown else f.chars, f.splat, rm if rm is not None else f.rm, a))
        return elems

    def _assignments(self, n) -> None:
        for k in n.named_children:
            if k.type == "variable_assignment":
                self._assignment(k)

    def _declaration(self, n) -> None:
        kids = n.children
        kw = kids[0].type if kids else ""
        opts = ""
        for k in kids[1:]:
            if k.type == "word":
                t = self.src.nt(k)
                if t.startswith("-"):
                    opts += t[1:]
        exported = (kw == "export" and "n" not in opts) or (kw != "export" and "x" in opts)
        local = kw == "local" or (kw in ("declare", "typeset") and "g" not in opts and bool(self.frames))
        for k in kids[1:]:
            if k.type == "variable_assignment":
                self._assignment(k, exported=exported, local=local, stmt=n if len(kids) == 2 else k)
            elif k.type == "variable_name":
                name = self.src.nt(k)
                if kw == "export" and "n" in opts:
                    self.env.unexport(name)
                    continue
                b = self.env.vars.get(name)
                if exported:
                    self.env.export(name)
                    if b is None:
                        b = Binding(UNKNOWN, assign=Assignment(name, self.src.fanchor(*self.src.ns(n)), True))
                        self.bind(name, b)
                    elif b.assign is not None:
                        b.assign.exported = True
                if local and not exported:
                    self.bind(name, Binding(UNSET, assign=Assignment(name, None)), local=True)
            elif k.is_named:
                self.touch(k)

    def _unset(self, n) -> None:
        func = False
        for k in n.children[1:]:
            t = self.src.nt(k)
            if t == "-f":
                func = True
            elif t.startswith("-"):
                continue
            elif func:
                self.functions.pop(t, None)
                self.defined += 1
            elif NAME.match(t):
                self.bind(t, Binding(UNSET, assign=Assignment(t, None)))
                self.env.unexport(t)

    def _redirected(self, n) -> None:
        body = n.child_by_field_name("body")
        stdin: Chars | None = None
        after = []
        docs = [k for k in n.children if k.type == "heredoc_redirect"]
        if docs and body is not None and body.type == "command" and not any(
                c.type in _AFTER for k in docs for c in k.named_children) and self._inert(body):
            # (cat > config.yaml <<EOF ... EOF): runs nothing, its here-document read only for its expansions
            for k in n.children:
                if k.type == "heredoc_redirect" or k.type == "file_redirect":
                    self.touch(k)
            return
        for k in n.children:
            if k.type == "heredoc_redirect":
                stdin = self._heredoc(k)
                after.extend(c for c in k.named_children if c.type in _AFTER)
            elif k.type == "herestring_redirect":
                word = [c for c in k.named_children]
                if word:
                    stdin = self.x.scalar(word[-1])
            elif k.type == "file_redirect":
                self.touch(k)
        if body is None:
            return
        if not after:
            self.stmt(body, stdin=stdin)
            return
        # cat <<EOF | python3 -   (tree-sitter keeps the pipeline inside the heredoc redirect)
        saved = self.env
        self.env = saved.copy()
        try:
            self.stmt(body, stdin=stdin)
        finally:
            self.env = saved
        feed = stdin if body.type == "command" and self._is_cat(body) else None
        for a in after:
            if a.type == "pipeline":
                cmds = [c for c in a.named_children]
                for i, c in enumerate(cmds):
                    self.env, saved = self.env.copy(), self.env
                    try:
                        self.stmt(c, stdin=feed if i == 0 else None)
                    finally:
                        self.env = saved
            else:
                self.stmt(a)

    def _is_cat(self, cmd) -> bool:
        name = cmd.child_by_field_name("name")
        args = cmd.children_by_field_name("argument")
        return name is not None and self.src.nt(name).rsplit("/", 1)[-1] == "cat" and not args

    def _heredoc(self, r) -> Chars | None:
        src = self.src
        start = next((k for k in r.children if k.type == "heredoc_start"), None)
        body = next((k for k in r.children if k.type == "heredoc_body"), None)
        if body is None:
            return None
        s, e = src.ns(body)
        quoted = start is not None and any(q in src.nt(start) for q in "'\"\\")
        strip_tabs = any(k.type == "<<-" for k in r.children if not k.is_named)
        if quoted:
            chars = src.chars(s, e)
        else:
            b = CharsBuilder()
            at = s
            for k in body.named_children:
                ks, ke = src.ns(k)
                if ks > at:
                    b.add(self.x.heredoc_text(at, ks))
                if k.type == "heredoc_content":
                    b.add(self.x.heredoc_text(ks, ke))
                else:
                    j = self.x.join(self.x.parts(k, True))
                    b.add(j if j is not None else Chars(HOLE))
                at = max(at, ke)
            if e > at:
                b.add(self.x.heredoc_text(at, e))
            chars = b.build()
        if strip_tabs:
            keep = []
            bol = True
            for i, ch in enumerate(chars.text):
                if bol and ch == "\t":
                    continue
                bol = ch == "\n"
                keep.append(i)
            chars = Chars("".join(chars.text[i] for i in keep), [chars.pos[i] for i in keep],
                          [chars.res[i] for i in keep])
        return chars

    def _error(self, n) -> None:
        """Recover what tree-sitter could not fit: statements, and command-like runs of words."""
        kids = n.children
        i = 0
        while i < len(kids):
            k = kids[i]
            if k.type == "command_name":
                j = i + 1
                while j < len(kids) and kids[j].type in WORDISH:
                    j += 1
                self._words_command(kids[i:j])
                i = j
                continue
            if k.is_named and k.type in _STMT:
                self.stmt(k)
            i += 1

    # -- commands -----------------------------------------------------------------
    def command(self, n, stdin: Chars | None = None) -> None:
        if not self.scan.charge(n.child_count, lambda: self.src.line(self.src.c(n.start_byte))):
            return
        active, self._active = self._active, None
        if stdin is None and n is not active and self._inert(n):
            return
        same: dict[int, list[Field]] = {}
        self._per_path(lambda: self._command_words(n, stdin, same), lambda words: self._run_words(n, *words), n,
                       self._varies)

    def _command_words(self, n, stdin: Chars | None, same: dict[int, list[Field]]):
        """A command's words, its ``VAR=value`` prefix (evaluated) and its standard input. ``same`` keeps by place
        the words that read no choice and wrote, walked (a substitution) and met nothing: alike on every path."""
        kids = n.children
        prefix = []
        spans = self.src.spans(kids)
        words: list[Field] = []
        x, field_name, scan = self.x, n.field_name_for_child, self.scan
        for i, k in enumerate(kids):
            t = k.type
            if t == "variable_assignment" and not words:
                prefix.append(k)
                continue
            if t == "command_name" or field_name(i) == "argument":
                fs = same.get(i)
                if fs is None:
                    if t == "word" and self.depth <= MAX_DEPTH:  # its own text: reads, runs and meets nothing
                        fs = same[i] = x.fields_at(k, t, *spans[i])
                    else:
                        c, j, steps, errors = len(scan.consulted), len(scan.journal), scan.steps, len(scan.errors)
                        if t == "command_name":
                            fs = x.fields(k.named_children[0]) if k.named_child_count else x.fields(k)
                        else:
                            fs = x.fields_at(k, t, *spans[i])
                        if steps == scan.steps and c == len(scan.consulted) and j == len(scan.journal) and \
                                errors == len(scan.errors):
                            same[i] = fs
                    if len(fs) == 1:
                        fs[0].removable(kids, spans, i, _SEP_CMD)
                words.extend(fs)
            elif t == "herestring_redirect":
                ws = k.named_children
                if ws:
                    stdin = self.x.scalar(ws[-1])
            elif k.is_named:
                self.touch(k)
        return words, self._prefix(prefix), stdin

    def _prefix(self, nodes) -> list:
        out = []
        for p in nodes:
            nm, val = p.child_by_field_name("name"), p.child_by_field_name("value")
            if nm is not None:
                chars = self.x.scalar(val) if val is not None else Chars()
                out.append((p, self.src.nt(nm), chars, self.src.fanchor(*self.src.ns(p))))
        return out

    def _words_command(self, nodes) -> None:
        """A command tree-sitter could only recover as loose words (inside an ERROR)."""
        def expand():
            words: list[Field] = []
            for k in nodes:
                target = k.named_children[0] if k.type == "command_name" and k.named_child_count else k
                words.extend(self.x.fields(target))
            return words

        node = _FakeNode(nodes[0].start_byte, nodes[-1].end_byte)
        if not self.scan.charge(len(nodes), lambda: self.src.line(self.src.c(node.start_byte))):
            return
        self._per_path(expand, lambda words: self._run_words(node, words, [], None), node,
                       lambda words: self._varies((words,)))

    def _run_words(self, n, words: list[Field], prefix: list, stdin: Chars | None) -> None:
        if not words:
            for p in prefix:  # X=1 $EMPTY: the assignments stay
                self._assignment(p[0])
            return
        head = words[0].text
        if head is not None and head in self.functions:
            self.call(head, words[1:])
            return
        if head == "set" and (on := allexport([w.text for w in words[1:]])) is not None:
            (self.env.export if on else self.env.unexport)(ALLEXPORT)
        if head == "shift" or (head == "set" and len(words) > 1 and words[1].text == "--"):
            self._set_positional(words)
            return
        if head in READERS or (head == "printf" and len(words) > 2 and words[1].text == "-v"):
            self._reader(words)
            return
        if head in ("source", ".") and len(words) > 1:
            self._source(words[1])
            return
        penv: list[tuple[str, Chars | None, Span | None]] = []
        phints: list[Hint] = []
        for _node, name, chars, span in prefix:
            penv.append((name, chars, span))
            phints.extend(env_hints(name, chars.text if chars is not None else None, span))
        cmd = unwrap(words)
        if cmd is None or not cmd.runs:
            return
        ex = _Exec(cmd, penv + self._env_files(words, cmd) +
                   [(name, None if v is None else v.chars, at.anchor()) for name, v, at in cmd.env],
                   phints + fact_hints(cmd.facts, Field.anchor))
        if ex.cmd.match is not None:
            self._launch(n, ex)
        elif ex.cmd.shell_code is not None:
            self._inner_shell(n, ex, ex.cmd.shell_code.full, ex.cmd.shell_code)
        elif ex.cmd.python_code is not None:
            self._inner_python(n, ex, ex.cmd.python_code.full, ex.cmd.python_code.anchor())
        elif ex.cmd.stdin is not None and stdin is not None:
            fallback = self.src.fanchor(*self.src.ns(n))
            if ex.cmd.stdin == "python":
                self._inner_python(n, ex, stdin, fallback)
            else:
                self._inner_shell(n, ex, stdin, None, fallback=fallback)

    def _env_files(self, words: list[Field], cmd) -> list[tuple[str, Chars | None, Span | None]]:
        """``docker run --env-file FILE`` (and the other wrappers' ``--env-file``): the variables the pipeline
        read from FILE (kv4lint.pipeline.sourced), for the command inside."""
        out: list[tuple[str, Chars | None, Span | None]] = []
        inner = cmd.words[0] if cmd.words else None
        for k, w in enumerate(words):
            if w is inner:
                break
            name = None
            if w.text == "--env-file" and k + 1 < len(words):
                name = words[k + 1].text
            elif w.text is not None and w.text.startswith("--env-file="):
                name = w.text[len("--env-file="):]
            if not name or name.startswith(("/", "~")):
                continue
            ref = f"dockerenv:{name}"
            if ref not in self.scan.sources:
                self.scan.sources.append(ref)
            for var, value in self.scan.sourced.get(ref, {}).items():
                out.append((var, setting_chars(var, value) if value is not None else None, w.anchor()))
        return out

    def _source(self, word: Field) -> None:
        """``source FILE`` / ``. FILE``: the variables it sets, when the pipeline read it (kv4lint.pipeline.sourced)."""
        ref = _source_ref(word)
        if ref is None:
            return
        if ref not in self.scan.sources:
            self.scan.sources.append(ref)
        values = self.scan.sourced.get(ref, {})
        for name, value in values.items():
            # Written in another file, which other scripts may source too: a fix there is unsafe.
            a = Assignment(name, None, exported=True, path=value.path if isinstance(value, ForeignString) else None)
            self.bind(name, Binding(UNKNOWN, assign=a) if value is None else
                      Binding(SCALAR, setting_chars(name, value), assign=a))
        # What the file exports (SourcedVariables), or all it sets after ``set -a``: what an inner shell sees.
        self.env.export(*(values if ALLEXPORT in self.env.exported else getattr(values, "exported", ())))

    def _reader(self, words: list[Field]) -> None:
        """``read``/``mapfile``/``getopts``/``printf -v``: the variables they set become unknown."""
        cmd = words[0].text
        names: list[str] = []
        if cmd == "printf":
            names = [words[2].text or ""]
        elif cmd == "getopts":
            names = [f.text or "" for f in words[2:3]]
        else:
            with_value = _READER_OPTS.get(cmd, set())
            skip = False
            for f in words[1:]:
                t = f.text
                if skip or t is None:
                    skip = False
                    continue
                if t in with_value:
                    skip = True
                elif not t.startswith("-"):
                    names.append(t)
        for name in names:
            if NAME.match(name):
                self.bind(name, Binding(UNKNOWN, assign=Assignment(name, None)))

    # -- nested code ------------------------------------------------------------------
    def _child_env(self, ex: _Exec, names: set[str]) -> Variables:
        """What an inner shell sees: the exported variables of ``names`` (those its text names, and the platform
        ones; values are expanded already), then what its command line sets; not every variable the script exported."""
        env = Variables()
        if not ex.cmd.clean_env:
            for name in names:
                b = self.env.vars.get(name) if name in self.env.exported else None
                if b is not None:
                    env.set(name, b)
                    env.export(name)
        for name, chars, span in ex.env:
            a = Assignment(name, span, exported=True)
            env.set(name, Binding(SCALAR, chars, assign=a) if chars is not None else Binding(UNKNOWN, assign=a))
            env.export(name)
        return env

    def _outer_hints(self, ex: _Exec, near: list[Hint] = ()) -> list[Hint]:
        """The launch's hints, nearest first: its wrappers, ``near`` (a comment on it), the script's environment,
        the container's."""
        return ex.hints + list(near) + ([] if ex.cmd.clean_env else self._env_hints()) + list(self.hints)

    def _inner_shell(self, n, ex: _Exec, chars: Chars, field: Field | None, fallback: Span | None = None) -> None:
        if not chars.text.strip():
            return
        if self.depth > MAX_DEPTH:
            self.too_deep(n)
            return
        pos = list(chars.pos)
        last = next((p for p in reversed(pos) if p is not None), None)
        pos.append(last + 1 if last is not None and pos[-1] is not None else None)
        inner = ShellText(chars.text, pos, list(chars.res), fallback or (field.anchor() if field else None))
        names = set(NAME_WORD.findall(chars.text)).union(PLATFORM_NAMES)  # what it may read
        self.reads(names)
        sub = Walker(self.scan, inner, self._child_env(ex, names), self._outer_hints(ex), depth=self.depth + 1,
                     disabled=self._disabled(n))
        try:
            sub.walk()
        finally:
            sub.close()

    def _inner_python(self, n, ex: _Exec, chars: Chars, fallback: Span) -> None:
        if "sglang" not in chars.text.lower() and "kv_cache" not in chars.text:
            return
        try:
            scan_python = nested("python")
        except ImportError:
            return
        except Exception as e:  # a broken Python frontend must not lose this file's shell launches
            self.scan.errors.append(FileError(self.scan.path, f"could not load the Python frontend "
                                                              f"({type(e).__name__}: {e})"))
            return
        outer: list[int | None] = list(chars.pos)  # None: not written verbatim (OffsetMap)
        outer.append(next((p + 1 for p in reversed(chars.pos) if p is not None), fallback.start))
        try:
            res = scan_python(chars.text, self.scan.path, origin=OffsetMap(outer))
        except Exception as e:  # the other frontend must not stop this one
            self.scan.errors.append(FileError(self.scan.path, f"could not scan embedded Python "
                                                              f"({type(e).__name__}: {e})"))
            return
        hints = self._outer_hints(ex) + self.scan.machine.around(self.scan.conds)
        dis = self._disabled(n)
        # Text this shell expanded into the code ("$D" in an unquoted heredoc): where it came from.
        through = {} if chars.plain() else \
            {p: r for p, r in zip(chars.pos, chars.res) if p is not None and r is not None}
        for launch in res.launches:
            launch.hints = dedupe_hints(list(launch.hints) + hints)
            launch.disabled = frozenset(launch.disabled) | dis
            self.scan.other.append((launch, through))
        self.scan.errors.extend(res.errors)

    # -- launches ------------------------------------------------------------------------
    def _env_hints(self) -> list[Hint]:
        out: list[Hint] = []
        for name in PLATFORM_NAMES:
            b = self.env.vars.get(name)
            if b is None or b.kind == UNSET or (b.assign is not None and b.assign.seeded):
                continue
            value = b.chars.text if b.kind == SCALAR and b.chars is not None else None
            how = "export" if name in self.env.exported else None
            out.extend(env_hints(name, value, b.assign.span if b.assign else None, how=how))
        return out

    def _launch(self, n, ex: _Exec) -> None:
        m = ex.cmd.match
        entry = ex.cmd.words[:m.start]
        argv = ex.cmd.words[m.start:]
        # Judging a launch costs ~0.1 ms a word: the launches of one text read at most MAX_WORDS in all.
        self.scan.launch_words += len(argv)
        if not self.scan.charge(self.scan.launch_words, lambda: self.src.line(self.src.c(n.start_byte)),
                                launches=True):
            return
        first, last = entry[0], entry[-1]
        if first.src is last.src and first.s <= last.e:
            anchor = first.src.fanchor(first.s, last.e)
        else:
            anchor = last.anchor()
        span = self.src.fanchor(*self.src.ns(n))
        start = min(self.src.c(b) for b in (n.start_byte, *self.chain))
        key = (self.src, start, self.src.c(n.end_byte))
        near = self._comments.get(key)
        if near is None:
            near = self._comments.keep(key, comment_hints(*key))
        hints = dedupe_hints(self._outer_hints(ex, near) + self.scan.machine.around(self.scan.conds))
        cond = " and ".join(dict.fromkeys(c for c in self.scan.conds if c)) or None
        self.scan.pending.append(_Pending(m.entry, span, anchor, argv, hints, self._disabled(n), cond))

    def _disabled(self, n) -> frozenset[str]:
        """Codes disabled by ``# kv4lint: disable=...`` comment lines right above the statement."""
        if self.inherited_disabled is not None:
            return self.inherited_disabled
        src = self.src
        out: set[str] = set()
        for line in {src.line(src.c(b)) for b in (n.start_byte, *self.chain)}:
            out |= codes_above(src.line_text, line)
        return frozenset(out)

    # -- the walk --------------------------------------------------------------------------
    def close(self) -> None:
        """Let go of the walk (the expander refers back to its walker): freed as soon as it is dropped, not by
        the cyclic collector (which walked a 2 MB script's whole state again: a fifth of its time)."""
        self.x.w = None

    def walk(self, root=None) -> None:
        if root is None:
            self.src, tree = parse_shell(self.src)
            self.x.src = self.src
            root = tree.root_node
        self.run(root.named_children)
        self.finish_functions()


_SCRIPT_DIR = re.compile(r"dirname|BASH_SOURCE|\$0|\$\{0\}|\w*DIR\b|\w*HERE\b|\w*ROOT\b")


def _source_ref(word: Field) -> str | None:
    """``script:REL`` for a file beside the script (``$(dirname "$0")/env.sh``), ``cwd:PATH`` for a plain path."""
    full = word.full.text
    if not word.unknown:
        return None if not full or full.startswith(("/", "~")) else f"cwd:{full}"
    if full.startswith(HOLE + "/") and HOLE not in full[1:] and _SCRIPT_DIR.search(word.raw):
        return f"script:{full[2:]}"
    return None


class _FakeNode:
    """Stands for a command tree-sitter recovered only as loose words."""

    type = "command"

    def __init__(self, start_byte: int, end_byte: int):
        self.start_byte = start_byte
        self.end_byte = end_byte


_STMT: dict[str, Callable] = {
    "command": Walker.command,
    "variable_assignment": Walker._assignment,
    "variable_assignments": Walker._assignments,
    "declaration_command": Walker._declaration,
    "unset_command": Walker._unset,
    "redirected_statement": Walker._redirected,
    "pipeline": Walker._pipeline,
    "list": Walker._list,
    "subshell": Walker._subshell_node,
    "compound_statement": Walker._compound,
    "do_group": Walker._compound,
    "negated_command": Walker._compound,
    "if_statement": Walker._if,
    "for_statement": Walker._for,
    "select_statement": Walker._for,
    "c_style_for_statement": Walker._c_for,
    "while_statement": Walker._while,
    "case_statement": Walker._case,
    "function_definition": Walker._function,
    "test_command": Walker.touch,
    "ERROR": Walker._error,
}


# ===========================================================================
# Syntax errors and file-level directives


def _first_error(root):
    """The first ERROR or MISSING node, depth first (subtrees without errors skipped)."""
    stack = [root]
    while stack:
        n = stack.pop()
        if n.is_missing or n.type == "ERROR":
            return n
        if n.has_error:
            stack.extend(reversed(n.children))
    return None


def _syntax_error(root, src: ShellText, scan: _Scan, origin: OffsetMap | None) -> None:
    n = _first_error(root)
    if n is None:
        return
    s, e = src.ns(n)
    quote = next((k for k in n.children if not k.is_named and k.type in ('"', "'", "`", "$(", "${")), None)
    if n.is_missing:
        what = "unterminated heredoc (no closing delimiter line)" if n.type == "heredoc_end" else \
            f"missing {n.type!r}"
    elif quote is not None:  # an opening quote tree-sitter could not match
        s = src.ns(quote)[0]
        what = f"unterminated {quote.type}"
    else:
        snippet = src.text[s:e].strip().split("\n", 1)[0]
        if len(snippet) > 30:
            snippet = snippet[:27] + "..."
        what = f"cannot parse {snippet!r}" if snippet else "unexpected end of input"
    if origin is None:
        line = src.line(s)
    elif scan.file_text is not None:
        line = LineIndex(scan.file_text).position(origin.offset(s)).line
    else:
        line = src.line(s)
        what += " (line counted in the embedded shell text)"
    scan.errors.append(FileError(scan.path, f"shell syntax error near line {line}: {what}", line=line))


# ===========================================================================
# Public API


def shell_comments(text: str):
    """Whether a shell comment starts at an offset of ``text``: a comment node of its syntax tree, not a line of a
    quoted string or a here-document that starts with ``#``."""
    src = ShellText(text)
    found: set[int] = set()
    stack = [shell_parse.parse_bash(src.data).root_node]  # the text as written (no repair: comments as they are)
    while stack:
        n = stack.pop()
        if n.type == "comment":
            found.add(src.c(n.start_byte))
        else:
            stack.extend(n.children)
    return found.__contains__


def scan_shell(text: str, path: str, *, origin: OffsetMap | None = None, env: dict[str, str] | None = None,
               hints: list[Hint] | None = None, file_text: str | None = None,
               sourced: dict[str, dict[str, ForeignString | None]] | None = None) -> ScanResult:
    """Find the SGLang launches in a shell script (or a shell text embedded in a file).

    ``origin`` maps offsets in ``text`` to offsets in the file when ``text`` is
    embedded (a ``RUN`` line, a YAML block, a Python string): every span is
    then a file span (``None`` where the text is not written verbatim).
    ``env`` pre-seeds variables the container sets (Dockerfile ``ENV``/``ARG``,
    Kubernetes ``env:``); ``hints`` are added to every launch found (the
    container's own target hints: give env-var hints there, with their spans).
    ``file_text`` (the whole file, with ``origin``) lets syntax errors be
    reported at file lines.  ``sourced`` gives the variables each file the
    script sources sets (read by :mod:`kv4lint.pipeline.sourced`, keyed as
    ``ScanResult.sources`` names them).  Never raises.
    """
    result = ScanResult()
    try:
        result.disabled = file_codes(text, lambda: shell_comments(text))
    except Exception:  # pragma: no cover - defensive
        pass
    if "sglang" not in text and not any("sglang" in v for v in (env or {}).values()):
        return result
    scan = _Scan(path, file_text)
    scan.sourced = dict(sourced or {})
    try:
        pos = list(origin.outer) if origin is not None else None
        fallback = origin.anchor(Span(0, min(len(text), 1))) if origin is not None and text else None
        src = ShellText(text, pos, None, fallback)
        genv = Variables()
        for name, value in (env or {}).items():
            genv.set(name, Binding(SCALAR, setting_chars(name, value, seeded=True),
                                   assign=Assignment(name, None, seeded=True)))
            genv.export(name)
        walker = Walker(scan, src, genv, list(hints or []))
        for piece, root, statements in parse_pieces(src):
            walker.src = walker.x.src = piece  # (a repair may rearrange a short text: parse.parse_shell)
            if root is not None and root.has_error:
                _syntax_error(root, piece, scan, origin)
            walker.run(statements)
        walker.finish_functions()
        walker.close()
    except RecursionError:
        scan.errors.append(FileError(path, "shell text too deeply nested to scan fully"))
    except Exception as e:  # never let one file stop the run
        scan.errors.append(internal_error.scan_error(path, "in the shell frontend", e))
    try:
        result.launches = build_launches(scan.pending, scan.other, path)
        if "#SBATCH" in text:  # the file's Slurm request: after every hint nearer the launch
            file_hints = header_hints(ShellText(text, list(origin.outer) if origin is not None else None))
            for launch in result.launches:
                launch.hints = dedupe_hints(list(launch.hints) + file_hints)
    except Exception as e:  # pragma: no cover - defensive
        scan.errors.append(internal_error.scan_error(path, "in the shell frontend", e))
    result.errors = scan.errors
    result.sources = scan.sources
    return result


def split_words(text: str, *, origin: OffsetMap | None = None) -> list[Value]:
    """The argv a shell would produce for one simple command written as ``text``.

    For ``shlex.split("...")`` and ``subprocess.run("...", shell=True)``
    argument strings: quotes and escapes are removed, ``$VAR`` is unknown
    (there is no script to resolve it from), spans are mapped through
    ``origin``.  Leading ``VAR=value`` words are kept, as ``shlex.split`` does.
    Only the first simple command is returned; never raises.
    """
    try:
        if not text.strip():
            return []
        pos = list(origin.outer) if origin is not None else None
        src = ShellText(text, pos, None, origin.anchor(Span(0, min(len(text), 1))) if origin is not None else None)
        scan = _Scan("<string>", None)
        src, tree = parse_shell(src)
        walker = Walker(scan, src, Variables(), [])
        root = tree.root_node
        stack = [root]
        cmd = None
        while stack:
            n = stack.pop()
            if n.type == "command":
                cmd = n
                break
            stack.extend(reversed(n.named_children))
        if cmd is None:
            return []
        kids = cmd.children
        spans = src.spans(kids)
        fields: list[Field] = []
        for i, k in enumerate(kids):
            if k.type == "variable_assignment" or k.type == "command_name" or \
                    cmd.field_name_for_child(i) == "argument":
                target = k.named_children[0] if k.type == "command_name" and k.named_child_count else k
                fs = walker.x.fields(target)
                if len(fs) == 1:
                    fs[0].removable(kids, spans, i, _SEP_CMD)
                fields.extend(fs)
        return [to_value(f) for f in fields]
    except Exception:
        return []
