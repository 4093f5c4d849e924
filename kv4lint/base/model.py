"""The records that flow through kv4lint's pipeline.

    files -> discover -> prefilter -> frontends -> Launch -> rules -> Finding -> reporters

Frontends produce :class:`Launch` records (and know nothing of rules); rules turn a
Launch plus a :class:`~kv4lint.target.Target` into :class:`Finding` records (and
know nothing of parsing); the fix engine turns a Finding's :class:`Fix` into text
edits on the original file.  A file's report and errors (:class:`~kv4lint.base.file_report.FileReport`,
:class:`~kv4lint.base.file_error.FileError`) are apart: every run makes them, while this model loads only when
a file is parsed.

They are plain records (:mod:`kv4lint.base.record`), not dataclasses: a second run over an unchanged tree loads
this model to print the findings it stored, and ``@dataclass`` would cost it ~13 ms of a ~90 ms run (importing
``dataclasses`` and ``inspect``, and compiling the generated methods of nine classes on every start).  Each class's
``__slots__`` is its one list of fields; its ``__init__``, written out, takes them in that order, each with its
default.

Offsets are *character* offsets into the decoded text of the file (``str``
indices).  The fix engine edits the decoded text and re-encodes it with the
file's own encoding, so character offsets are exact and encoding-agnostic.
"""

from __future__ import annotations

import enum
from operator import attrgetter
from typing import Literal

from kv4lint.base.file_error import FileError
from kv4lint.base.record import Frozen, Record

# Named in the records' annotations, which the cache's shape check reads (kv4lint.pipeline.cache.conforms).
LaunchForm = Literal["argv", "kwargs"]
Applicability = Literal["safe", "unsafe"]

# The words of one command or array (shell) or one argument list given as data (YAML, JSON, exec form).
# Reading a launch costs about 0.1 ms and a few kB a word; a real one has at most a few hundred.  Past
# this a frontend reports a file error naming the limit (exit 1), never minutes and gigabytes
# (docs/security.md).  Python's own bound is per bracket (kv4lint.frontends.python.MAX_ITEMS).
MAX_WORDS = 50_000


class Span(Frozen):
    """A half-open range ``[start, end)`` of character offsets in one file; spans order by start, then end."""

    __slots__ = ("start", "end")

    # A 2 MB script makes 200,000 spans: each field is set through its slot's own setter, as fast as a dict's
    # item; Frozen._set's object.__setattr__ costs half as much again.
    def __init__(self, start: int, end: int) -> None:
        if start < 0 or end < start:
            raise ValueError(f"bad span {start}..{end}")
        _set_start(self, start)
        _set_end(self, end)

    def __eq__(self, other):  # these two, written out, cost a quarter less than Frozen's (spans key many dicts)
        return (self.start, self.end) == (other.start, other.end) if other.__class__ is Span else NotImplemented

    def __hash__(self) -> int:
        return hash((self.start, self.end))

    def __lt__(self, other):
        return (self.start, self.end) < (other.start, other.end) if other.__class__ is Span else NotImplemented

    def __le__(self, other):
        return (self.start, self.end) <= (other.start, other.end) if other.__class__ is Span else NotImplemented

    def __gt__(self, other):
        return (self.start, self.end) > (other.start, other.end) if other.__class__ is Span else NotImplemented

    def __ge__(self, other):
        return (self.start, self.end) >= (other.start, other.end) if other.__class__ is Span else NotImplemented


def _setters(cls: type) -> tuple:
    """The setters of ``cls``'s slots, in order: what a frozen record's ``__init__`` calls in a hot path."""
    return tuple(getattr(cls, f).__set__ for f in cls.__slots__)


_set_start, _set_end = _setters(Span)


class Provenance(str, enum.Enum):
    LITERAL = "literal"  # written at the launch site, e.g. "--kv-cache-dtype nvfp4"
    RESOLVED = "resolved"  # followed from a variable/constant/default to its literal
    UNKNOWN = "unknown"  # cannot be known statically (environment, call result, f-string hole)


class Value(Frozen):
    """One value (an argv token, or a keyword argument's value) of a launch.

    ``text`` is the value as the program would see it, or ``None`` when unknown.
    ``span`` is where the characters of ``text`` are written in the file, when
    they are written there verbatim (so that replacing ``span`` with new
    characters changes the value).  ``None`` means the value cannot be edited in
    place (it is unknown, synthesised, or spelled with escapes).
    ``use`` is where the value is *used* in the launch when it was resolved from
    elsewhere (e.g. the ``$DTYPE`` in ``--kv-cache-dtype $DTYPE``): findings are
    reported there, fixes edit ``span``.
    ``shared`` is true when the written text feeds other uses too (a variable
    used twice, a module constant): editing it has effects beyond this launch,
    so its fix is *unsafe*.
    ``splat`` marks an unknown value that may expand to any number of argv
    tokens (``$EXTRA_ARGS``, ``"$@"``, ``*args``).
    ``remove`` is the span to delete to take this token out of its argv list
    cleanly (with its separator: a comma, surrounding spaces, a continuation
    line); ``None`` when it cannot be removed safely.
    ``quote`` is the quote character(s) around the value in source, for reference.
    ``offsets`` is the file offset of each character of ``text`` when known (``--kv-cache-dtype="nvfp4"`` is not
    written contiguously, but its value part is): it lets a part of a token be edited.  It takes no part in
    equality, hashing or the printed record.
    ``path`` is the file ``span`` is in when it is not the launch's own (a settings file a script sources).
    """

    __slots__ = ("text", "span", "provenance", "use", "shared", "splat", "remove", "quote", "offsets", "path")

    def __init__(self, text: str | None, span: Span | None = None, provenance: Provenance = Provenance.LITERAL,
                 use: Span | None = None, shared: bool = False, splat: bool = False, remove: Span | None = None,
                 quote: str = "", offsets: tuple[int, ...] | None = None, path: str | None = None) -> None:
        s = _VALUE  # as Span's: a 2 MB script makes 100,000 values
        s[0](self, text)
        s[1](self, span)
        s[2](self, provenance)
        s[3](self, use)
        s[4](self, shared)
        s[5](self, splat)
        s[6](self, remove)
        s[7](self, quote)
        s[8](self, offsets)
        s[9](self, path)

    def __eq__(self, other):
        return _compared(self) == _compared(other) if other.__class__ is Value else NotImplemented

    def __hash__(self) -> int:
        return hash(_compared(self))

    def __repr__(self) -> str:
        return (f"Value(text={self.text!r}, span={self.span!r}, provenance={self.provenance!r}, use={self.use!r}, "
                f"shared={self.shared!r}, splat={self.splat!r}, remove={self.remove!r}, quote={self.quote!r}, "
                f"path={self.path!r})")

    @property
    def known(self) -> bool:
        return self.text is not None

    @property
    def anchor(self) -> Span | None:
        """Where to report a finding about this value."""
        return self.use or self.span

    @staticmethod
    def unknown(use: Span | None = None, *, splat: bool = False) -> "Value":
        return Value(None, None, Provenance.UNKNOWN, use=use, splat=splat)


_VALUE = _setters(Value)
_compared = attrgetter(*(f for f in Value.__slots__ if f != "offsets"))  # what equality and hashing read


class ForeignString(str):
    """A setting's text read from another file of the repository (:mod:`kv4lint.pipeline.sourced`: a sourced script,
    an env file, an included makefile, a sibling module's constant), and where it is written there.

    ``path`` and ``start``: the file and the offset at which the characters of the text are written
    verbatim (so that replacing them changes the setting); ``None`` when they are not (spelled with
    escapes, expanded further by the reader, or computed).  A ``str``, so that it travels wherever a value does;
    any operation on it gives a plain ``str`` (a computed value is not written anywhere).
    """

    path: str | None
    start: int | None

    def __new__(cls, text: str, path: str | None = None, start: int | None = None) -> "ForeignString":
        self = super().__new__(cls, text)
        self.path, self.start = (path, start) if path is not None and start is not None and text else (None, None)
        return self

    def __reduce__(self):
        return ForeignString, (str(self), self.path, self.start)

    def span(self) -> Span | None:
        """The characters' span in :attr:`path`, when written verbatim there."""
        return Span(self.start, self.start + len(self)) if self.start is not None else None


class SourcedVariables(dict):
    """What a sourced shell file leaves set: name -> its value (a :class:`ForeignString`; None: set, not known
    statically), and ``exported``, the names it exports to the programs it starts (``export``, ``declare -x``,
    assigned under ``set -a``): an inner ``bash -c`` of the script that sources it sees those, and only those."""

    def __init__(self, values=(), exported: frozenset[str] = frozenset()) -> None:
        super().__init__(values)
        self.exported = exported

    def __reduce__(self):
        return SourcedVariables, (dict(self), self.exported)


class Hint(Frozen):
    """Something near a launch that tells which machine it targets: raw evidence, read by one resolver
    (the target stage), which applies the precedence stated > the file's own > the repository's > inferred >
    every candidate.

    ``kind`` is ``"platform"``, ``"gpu"``, ``"sglang_version"``, ``"sglang_build"`` (an image of an
    SGLang development build: ``dev``, ``nightly``, ``latest``), ``"sglang_nightly"`` (a nightly image
    with its build day, ``2026-09-01``) or ``"model"``;
    ``value`` is normalised (``"rocm"``, ``"sm100"``, ``"0.5.23"`` ...);
    ``reason`` is a short human phrase quoted in messages and ``--show-target``, naming the form and the
    words (``"export HIP_VISIBLE_DEVICES"``, ``"image lmsysorg/sglang:v0.5.23-rocm700"``,
    ``"#SBATCH --gres=gpu:h100:8"``, ``"heading '### B200'"``); ``span`` is where it is written.

    A ``"gpu"`` hint's ``value`` is a *candidate set*: one or more archs separated by spaces (``"sm90"``,
    ``"sm90 sm100"`` for ``In [H100, B200]``); ``"!"`` before it is its complement, every candidate but
    these (the ``else`` of a branch that tests for a B200: ``"!sm100"``); an empty value is a GPU named
    that kv4lint cannot map (no evidence; ``--show-target`` says so).

    ``scope`` says how near the evidence is to the launch: ``"launch"`` (on the launch itself: its image, a
    comment on or directly above it, the scheduler request or node selector of the job or pod that runs it),
    ``"section"`` (a document heading, tab or admonition title above a fenced launch), ``"file"`` (a file's
    header such as ``#SBATCH`` lines, its name or folder), or ``"guard"`` (a branch condition that tests the
    GPU: it narrows the candidates inside the branch rather than naming them). For the GPU the nearest
    scope that names one decides, the GPUs it names together are the candidate set, and every guard around
    the launch narrows that set.
    """

    __slots__ = ("kind", "value", "reason", "span", "scope")

    def __init__(self, kind: Literal["platform", "gpu", "sglang_version", "sglang_build", "sglang_nightly", "model"],
                 value: str, reason: str, span: Span | None = None,
                 scope: Literal["launch", "section", "file", "guard"] = "launch") -> None:
        self._set("kind", kind)
        self._set("value", value)
        self._set("reason", reason)
        self._set("span", span)
        self._set("scope", scope)


class Launch(Record):
    """One SGLang launch found in a file.

    ``form == "argv"``: ``argv`` holds the server arguments exactly as SGLang's
    argument parser would receive them (the tokens *after* the entry point, e.g.
    after ``python -m sglang.launch_server``), with spellings untouched
    (aliases, abbreviations, ``--flag=value``); normalisation to ServerArgs field
    names is done by :mod:`kv4lint.sglang.options` once the SGLang version is known.

    ``form == "kwargs"``: ``kwargs`` maps ServerArgs field names (as written in
    ``ServerArgs(...)``/``Engine(...)``) to values; ``positional`` holds
    positional arguments (the first is ``model_path``).
    ``unknown_kwargs`` is true when ``**something`` could not be resolved.

    ``entry`` names the entry point (``"sglang.launch_server"``, ``"sglang serve"``,
    ``"sglang.bench_one_batch"``, ``"ServerArgs"``, ``"Engine"``, ``"popen_launch_server"`` ...).
    ``span`` covers the whole launch (command or call); ``anchor`` is where a
    finding that concerns no single value is reported (the entry point).
    ``config`` holds the arguments of a ``--config`` file when a container
    frontend could read it (already as argv tokens with their own spans), to be
    placed before ``argv`` as SGLang does; ``config_path`` names that file.
    ``config_via`` is the entry point that reads ``--config`` for this launch when ``entry`` is a helper
    that runs it (``popen_launch_server`` runs ``sglang.launch_server``).
    ``language`` is the language of the source (``"shell"``, ``"python"``, ``"yaml"`` ...).
    ``disabled``: the codes disabled for this launch by a suppression comment (``# kv4lint:
    disable=KV401`` on the line before a shell command); "ALL" disables all.
    ``condition``: the paths of the script that run this launch with these values, in the user's terms
    (``USE_FP4_KV=1``, ``MODE=fp4``), when a value depends on a branch; None: every run.  A
    command whose value differs between paths is one Launch per path, each judged on its own.
    ``location``: where the launch is in a structured file, in its own terms (a JSON path:
    ``$.configurations[0].args``).
    ``not_judged``: why the launch is not judged, in the user's terms, when the code expects SGLang to refuse it
    (a negative test: built inside ``with pytest.raises(...)``); shown by ``--show-target``.  None: judged.
    The list and dict fields default to new empty ones.
    """

    __slots__ = ("path", "form", "entry", "span", "anchor", "argv", "kwargs", "positional", "unknown_kwargs",
                 "hints", "config_argv", "config_path", "config_via", "language", "disabled", "condition",
                 "location", "not_judged")

    def __init__(self, path: str, form: LaunchForm, entry: str, span: Span, anchor: Span,
                 argv: list[Value] | None = None, kwargs: dict[str, Value] | None = None,
                 positional: list[Value] | None = None, unknown_kwargs: bool = False, hints: list[Hint] | None = None,
                 config_argv: list[Value] | None = None, config_path: str | None = None,
                 config_via: str | None = None, language: str = "shell", disabled: frozenset[str] = frozenset(),
                 condition: str | None = None, location: str | None = None, not_judged: str | None = None) -> None:
        self.path = path
        self.form = form
        self.entry = entry
        self.span = span
        self.anchor = anchor
        self.argv = [] if argv is None else argv
        self.kwargs = {} if kwargs is None else kwargs
        self.positional = [] if positional is None else positional
        self.unknown_kwargs = unknown_kwargs
        self.hints = [] if hints is None else hints
        self.config_argv = [] if config_argv is None else config_argv
        self.config_path = config_path
        self.config_via = config_via
        self.language = language
        self.disabled = disabled
        self.condition = condition
        self.location = location
        self.not_judged = not_judged


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"


class Edit(Frozen):
    """Replace ``span`` of the original text with ``text`` (in ``path``; None: the file of the finding)."""

    __slots__ = ("span", "text", "path")

    def __init__(self, span: Span, text: str, path: str | None = None) -> None:
        self._set("span", span)
        self._set("text", text)
        self._set("path", path)


class Fix(Frozen):
    """A proposed fix, as data and as text edits.

    ``set`` maps ServerArgs field names to new values (e.g. ``{"kv_cache_dtype":
    "fp8_e4m3"}``); ``remove`` names fields whose flags must go (flags that exist
    only for FP4).  ``edits`` realise them on the source text when the launch's
    spans allow it (filled by :func:`kv4lint.fixes.edits.plan`); ``applicability`` is
    ``"unsafe"`` when an edit changes text that other code also uses, or the
    value could not be edited at the launch site.
    """

    __slots__ = ("description", "set", "remove", "edits", "applicability")

    def __init__(self, description: str, set: dict[str, str] | None = None, remove: tuple[str, ...] = (),
                 edits: tuple[Edit, ...] = (), applicability: Applicability = "safe") -> None:
        self._set("description", description)
        self._set("set", {} if set is None else set)
        self._set("remove", remove)
        self._set("edits", edits)
        self._set("applicability", applicability)

    def to_json(self) -> dict:
        return {
            "description": self.description,
            "set": dict(self.set),
            "remove": list(self.remove),
            "applicability": self.applicability,
            "edits": [
                {"start": e.span.start, "end": e.span.end, "text": e.text, **({"path": e.path} if e.path else {})}
                for e in self.edits
            ],
        }


class Position(Frozen):
    """1-based line, 1-based column (as flake8 and editors print them)."""

    __slots__ = ("line", "column")

    def __init__(self, line: int, column: int) -> None:  # as Span's: a line index makes one per ask
        _set_line(self, line)
        _set_column(self, column)


_set_line, _set_column = _setters(Position)


class Finding(Record):
    """One finding: its ``code``, ``severity`` and ``message``, where it is (``path``, ``span``, and ``start`` and
    ``end`` as lines and columns) and its ``fix``.

    ``target``: free-form details for reporters and --show-target (the target that was used and where each part
    came from).  ``field``: the ServerArgs field the finding is about (for anchoring).  ``cell``: in a notebook,
    (cell number, line in the cell), for text output.  ``detail``: SGLang's side of a finding, the function that
    refuses and the resolution steps that led there (JSON, SARIF, the full text format and --show-target; never
    the headline).  ``fingerprint``: the launch's text and the code, hashed: stable when lines move (SARIF).
    """

    __slots__ = ("code", "severity", "message", "path", "span", "start", "end", "fix", "target", "field", "cell",
                 "detail", "fingerprint")

    def __init__(self, code: str, severity: Severity, message: str, path: str = "<argv>", span: Span | None = None,
                 start: Position | None = None, end: Position | None = None, fix: Fix | None = None,
                 target: dict | None = None, field: str | None = None, cell: tuple[int, int] | None = None,
                 detail: str | None = None, fingerprint: str | None = None) -> None:
        self.code = code
        self.severity = severity
        self.message = message
        self.path = path
        self.span = span
        self.start = start
        self.end = end
        self.fix = fix
        self.target = target
        self.field = field
        self.cell = cell
        self.detail = detail
        self.fingerprint = fingerprint

    def sort_key(self):
        s = self.start or Position(0, 0)
        return (self.path, s.line, s.column, self.code)

    def to_json(self) -> dict:
        s = self.start or Position(1, 1)
        e = self.end or s
        return {
            "path": self.path,
            "line": s.line,
            "column": s.column,
            "end_line": e.line,
            "end_column": e.column,
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "fix": self.fix.to_json() if self.fix else None,
            **({"detail": self.detail} if self.detail else {}),
        }


class ScanResult(Record):
    """What a frontend returns for one file: its ``launches``;
    ``errors``, problems with the file itself (syntax errors the parser recovered from, an embedded block that could
    not be read): reported, the run goes on;
    ``disabled``, the codes disabled for the whole file (``# kv4lint: disable-file=KV401``); "ALL" for all;
    ``copies``, the files the scanned file copies into the image it describes (a Dockerfile's COPY/ADD), as
    (source, destination): where to look for a ``--config`` path named inside the image;
    ``sources``, the files the text reads settings from (a shell ``source``), as written: ``script:env.sh`` (beside
    the script: ``$(dirname "$0")/env.sh``) or ``cwd:./env.sh``.  Read after the cache (kv4lint.pipeline.sourced).
    The lists default to new empty ones."""

    __slots__ = ("launches", "errors", "disabled", "copies", "sources")

    def __init__(self, launches: list[Launch] | None = None, errors: list[FileError] | None = None,
                 disabled: frozenset[str] = frozenset(), copies: list[tuple[str, str]] | None = None,
                 sources: list[str] | None = None) -> None:
        self.launches = [] if launches is None else launches
        self.errors = [] if errors is None else errors
        self.disabled = disabled
        self.copies = [] if copies is None else copies
        self.sources = [] if sources is None else sources
