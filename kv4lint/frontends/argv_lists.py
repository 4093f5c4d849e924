"""Argument lists that are data, not shell text: a Dockerfile exec-form ``CMD [...]``, a compose or
Kubernetes ``command:`` list, a Python ``subprocess.run([...])`` argv.

:class:`Word` is one token with where its characters are in the file;
:func:`launches_from_words` strips the wrappers (:func:`kv4lint.sglang.commands.unwrap`),
scans ``sh -c SCRIPT`` as shell and otherwise matches SGLang's entry points.
"""

from __future__ import annotations

from kv4lint.base.file_error import FileError
from kv4lint.base.model import MAX_WORDS, Hint, Launch, Provenance, ScanResult, Span, Value
from kv4lint.base.record import Record
from kv4lint.base.source import OffsetMap
from kv4lint.frontends import budget
from kv4lint.frontends.embedded import EnvDef, merge, read_by, scan_shell_text, with_prelude
from kv4lint.frontends.hints import fact_hints
from kv4lint.sglang.commands import unwrap

# ---------------------------------------------------------------------------
# Words: argv tokens that are data (exec-form arrays, YAML lists)


class Word(Record):
    """One argv word with where its characters are in the file.

    ``value`` is the token as a launch records it (span set when verbatim,
    ``remove`` set when the word can be taken out cleanly); ``omap`` maps the
    word's text into the file character by character, for words that are
    themselves shell scripts (``sh -c "..."``); ``item`` is what the reader
    made the word from (the Python reader's value), kept for the reader.
    Implements :class:`kv4lint.sglang.commands.Word` for :func:`~kv4lint.sglang.commands.unwrap`.
    """

    __slots__ = ("value", "omap", "item", "key")

    def __init__(self, value: Value, omap: OffsetMap | None = None, item: object = None,
                 key: str | None = None) -> None:
        self.value = value
        self.omap = omap
        self.item = item
        self.key = key  # the text to recognise the program by, when the value is unknown (sys.executable)

    @property
    def text(self) -> str | None:
        return self.value.text if self.key is None else self.key

    @property
    def prefix(self) -> str:
        return self.text or ""

    @property
    def raw(self) -> str:
        return self.text or ""

    @property
    def suffix(self) -> str:
        return self.text or ""

    @property
    def unknown(self) -> bool:
        return self.text is None

    @property
    def splat(self) -> bool:
        return self.value.splat

    def anchor(self) -> Span | None:
        return self.value.anchor

    def tail(self, k: int) -> "Word":
        v = self.value
        if v.text is None:
            return Word(Value.unknown(v.anchor))
        verbatim = v.span is not None and v.span.end - v.span.start == len(v.text)
        span = Span(v.span.start + k, v.span.end) if verbatim else None
        use = v.use if v.use is not None or span is not None else v.anchor
        return Word(Value(v.text[k:], span, v.provenance, use=use, shared=v.shared))

    def synth(self, text: str) -> "Word":
        return Word(Value(text, None, Provenance.LITERAL, use=self.value.anchor))

    def concat(self, words) -> "Word":
        texts = [w.text for w in words]
        anchors = [w.value.anchor for w in words if w.value.anchor is not None]
        use = Span(min(a.start for a in anchors), max(a.end for a in anchors)) if anchors else None
        if any(t is None for t in texts):
            return Word(Value.unknown(use))
        return Word(Value(" ".join(texts), None, Provenance.LITERAL, use=use))


def removal_spans(extents: list[tuple[int, int]]) -> list[Span | None]:
    """Spans that take each element of a flow list out with its separator.

    ``extents`` are the elements' ``(start, end)`` in the file, in order.  The
    first element goes with the separator after it, every other one with the
    separator before it, so removing any set of elements (other than the
    first two together) leaves a well-formed list.
    """
    out: list[Span | None] = []
    n = len(extents)
    for k, (s, e) in enumerate(extents):
        if n == 1:
            out.append(Span(s, e))
        elif k == 0:
            out.append(Span(s, extents[1][0]))
        else:
            out.append(Span(extents[k - 1][1], e))
    return out


# ---------------------------------------------------------------------------
# Argument lists -> launches

def launches_from_words(words: list[Word], path: str, *, env: dict[str, str] | None = None,
                        hints: list[Hint] | None = None, language: str = "shell",
                        what: str = "command", defs: list[EnvDef] | None = None,
                        file_text: str | None = None) -> ScanResult:
    """Launches in an argument list given as data (exec form, YAML list): no shell reads it.

    Strips the wrappers that only run their arguments (``env K=V``, ``nohup``,
    ``exec``, ``tini --``), scans ``sh -c SCRIPT`` as shell, and otherwise
    matches SGLang's entry points.
    """
    result = ScanResult()
    if budget.spent():  # the file's launches already passed the bound (kv4lint.frontends.budget)
        return result
    if len(words) > MAX_WORDS:
        line = None
        at = words[0].anchor()
        if file_text is not None and at is not None:
            line = file_text.count("\n", 0, at.start) + 1
        result.errors.append(FileError(path, f"{what}: {len(words)} words, more than {MAX_WORDS} (the limit "
                                             "kv4lint reads per list): not scanned", line))
        return result
    cmd = unwrap(words)
    if cmd is None:
        return result
    hints = fact_hints(cmd.facts, Word.anchor) + list(hints or [])
    env = dict(env or {})
    env.update((name, v.text) for name, v, _ in cmd.env if v is not None and v.text is not None)
    sw = cmd.shell_code
    if sw is not None:
        if sw.text is None:
            return result
        origin = sw.omap
        if origin is None and sw.value.span is not None and sw.value.span.end - sw.value.span.start == len(sw.text):
            origin = OffsetMap.contiguous(sw.value.span.start, len(sw.text))
        if origin is None:
            anchor = sw.value.anchor or Span(0, 0)
            origin = OffsetMap([anchor.start] * (len(sw.text) + 1))
        script, origin, penv = with_prelude(read_by(list(defs or []), sw.text), sw.text, origin)
        sub = scan_shell_text(script, path, origin, env={**env, **penv} if defs else env, hints=hints,
                              what=f"{what} script", file_text=file_text)
        merge(result, sub)
        return result
    m = cmd.match
    if m is None:
        return result
    rest = cmd.words
    anchors = [w.value.anchor for w in rest if w.value.anchor is not None]
    if anchors:
        span = Span(min(a.start for a in anchors), max(a.end for a in anchors))
    else:
        span = Span(0, 0)
    entry_word = rest[m.start - 1] if m.start >= 1 else rest[0]
    anchor = entry_word.value.anchor or span
    argv = [w.value for w in rest[m.start:]]
    launch = Launch(path=path, form="argv", entry=m.entry, span=span, anchor=anchor, argv=argv,
                    hints=list(hints), language=language)
    result.launches.append(launch)
    budget.charge(result, path, lambda: file_text.count("\n", 0, anchor.start) + 1 if file_text is not None else None)
    return result
