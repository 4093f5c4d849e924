"""A document's sections and the GPU each names: headings, tabs and admonition titles above a fenced launch.

A heading (Markdown ``### B200``, a reStructuredText title) holds the lines under it until the next heading of its
level or above; a tab (MkDocs ``=== "B200"``, MDX ``<TabItem label="B200">``, reStructuredText ``.. tab:: B200``,
MyST ``:::{tab-item} B200``) and an admonition with a title (MkDocs ``!!! note "B200 only"``, Docusaurus
``:::tip[B200]``, ``.. admonition:: B200``) hold their body. The nearest of them that names a GPU (or one family, or
a vendor alone: ``AMD``, ``NVIDIA``) gives the launches of a fenced block in it a hint of scope ``section``,
narrowed by the sections around it where they agree (a "Blackwell" lead-in under a "B200" tab); names it cannot
read, and titles that hedge (``H100 vs B200``, ``not on H100``), name nothing
(:func:`kv4lint.sglang.gpus.find_gpus`). Prose is not read: a paragraph names GPUs for many reasons
(requirements, comparisons, results) that say nothing about where the block below runs.
"""

from __future__ import annotations

import re

from kv4lint.base.model import Hint, Span
from kv4lint.base.source import LineIndex
from kv4lint.frontends.hints import short, text_hints
from kv4lint.sglang.gpus import ArchSet, arch_set

# Words that name a vendor's platform as a whole label (a tab "AMD", a heading "NVIDIA GPUs").
VENDORS = {"nvidia": "cuda", "cuda": "cuda", "amd": "rocm", "rocm": "rocm", "amd instinct": "rocm",
           "intel gaudi": "hpu", "gaudi": "hpu", "ascend": "npu", "huawei ascend": "npu"}


class Section:
    """Lines ``first``..``last`` (1-based, inclusive) under a heading, a tab or an admonition titled ``label``."""

    __slots__ = ("first", "last", "kind", "label", "written", "span", "depth", "_hints")

    def __init__(self, first: int, last: int, kind: str, label: str, written: str, span: Span, depth: int):
        self.first = first
        self.last = last
        self.kind = kind  # heading, tab, admonition
        self.label = label  # the title, without its markup
        self.written = written  # the line as written, for reasons
        self.span = span
        self.depth = depth  # nesting: deeper is nearer
        self._hints: list[Hint] | None = None

    def hints(self) -> list[Hint]:
        if self._hints is None:
            self._hints = self._read()
        return self._hints

    def _read(self) -> list[Hint]:
        written = self.written.strip()
        if self.kind == "lead-in" and len(written) > 50:  # its end says where: "... (H200, all features):"
            written = "..." + written[-47:]
        reason = f"{self.kind} '{short(written, 50)}'"
        found = text_hints(self.label, reason, self.span, "section", label=self.kind != "lead-in")
        if found:
            return found
        bare = " ".join(re.sub(r"[^\w\s]", " ", self.label.lower()).replace("gpus", "").replace("gpu", "").split())
        plat = VENDORS.get(bare)
        return [Hint("platform", plat, reason, self.span, "section")] if plat else []


def _line_span(index: LineIndex, line: int) -> Span:
    start = index.starts[line - 1]
    return Span(start, start + len(index.line_text(line)))


def headings(index: LineIndex, found: list[tuple[int, int, str]], last_line: int) -> list[Section]:
    """Sections of headings ``(line, level, title)``: each until the next heading of its level or above."""
    ends = [last_line] * len(found)
    open_: list[int] = []  # headings whose section has not ended, levels increasing
    for k, (line, level, _) in enumerate(found):
        while open_ and found[open_[-1]][1] >= level:
            ends[open_.pop()] = line - 1
        open_.append(k)
    return [Section(line, end, "heading", title, index.line_text(line), _line_span(index, line), level)
            for (line, level, title), end in zip(found, ends)]


_MKDOCS = re.compile(r"^([ \t]*)(===[+!]?|(?:!!!|\?\?\?)\+?[ \t]+[\w-]+(?:[ \t]+[\w-]+)*)"
                     r"[ \t]*(?:\"([^\"]*)\")?[ \t]*$")
_JSX_OPEN = re.compile(r"<(TabItem|Tab)\b([^>]*?)(/?)>")
_JSX_CLOSE = re.compile(r"</(TabItem|Tab)\s*>")
_JSX_ATTR = re.compile(r"\b(label|title|value)\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|\{\s*[\"']([^\"']*)[\"']\s*\})")
_COLON_OPEN = re.compile(r"^[ \t]*(:{3,})[ \t]*(\{[\w-]+\}|[a-z]+)[ \t]*(?:\[([^\]]*)\]|(.*))$")
_COLON_CLOSE = re.compile(r"^[ \t]*(:{3,})[ \t]*$")
_TAB_DIRECTIVES = {"{tab-item}", "{tab}", "{tabbed}"}
_MAX_OPEN = 64  # tabs and ::: blocks open at once that are followed; deeper ones are not sections
_MAX_INDENT = 32  # MkDocs containers nested deeper than 8 (as the Markdown reader reads them) are not sections


def _body_end(index: LineIndex, line: int, indent: int) -> int:
    """The last line of the indented body of the directive on ``line`` (indented ``indent``)."""
    last = line
    for k in range(line + 1, len(index.starts) + 1):
        body = index.line_text(k)
        if body.strip() and len(body) - len(body.lstrip()) <= indent:
            break
        if body.strip():
            last = k
    return last


def containers(index: LineIndex, skip) -> list[Section]:
    """Tabs and titled admonitions of a Markdown text (``skip(line)``: the line is inside a code block)."""
    out: list[Section] = []
    n = len(index.starts)
    jsx: list[tuple[str, int, str, int]] = []  # open tags: (tag, line, label, column)
    colons: list[tuple[int, int, str, str]] = []  # open ::: blocks: (colons, line, kind, label)
    for line in range(1, n + 1):
        if skip(line):
            continue
        text = index.line_text(line)
        m = _MKDOCS.match(text)
        if m and (m.group(3) or m.group(2).startswith("===")) and len(m.group(1).expandtabs()) <= _MAX_INDENT:
            indent = len(m.group(1).expandtabs())
            last = _body_end(index, line, indent)
            kind = "tab" if m.group(2).startswith("===") else "admonition"
            out.append(Section(line, last, kind, m.group(3) or "", text, _line_span(index, line), 100 + indent))
            continue
        for tag in _JSX_OPEN.finditer(text):
            attrs = {a.group(1): a.group(2) or a.group(3) or a.group(4) for a in _JSX_ATTR.finditer(tag.group(2))}
            if not tag.group(3) and len(jsx) < _MAX_OPEN:
                jsx.append((tag.group(1), line, attrs.get("label") or attrs.get("title") or attrs.get("value") or "",
                            tag.start()))
        for tag in _JSX_CLOSE.finditer(text):
            k = next((i for i in range(len(jsx) - 1, -1, -1) if jsx[i][0] == tag.group(1)), None)
            if k is not None:
                name, first, label, _ = jsx.pop(k)
                if label:
                    out.append(Section(first, line, "tab", label, index.line_text(first),
                                       _line_span(index, first), 200 + len(jsx)))
        c = _COLON_CLOSE.match(text)
        if c and colons:
            k = next((i for i in range(len(colons) - 1, -1, -1) if colons[i][0] == len(c.group(1))), len(colons) - 1)
            width, first, kind, label = colons.pop(k)
            if label:
                out.append(Section(first, line, kind, label, index.line_text(first), _line_span(index, first),
                                   300 + len(colons)))
            continue
        o = _COLON_OPEN.match(text)
        if o:
            name = o.group(2)
            label = (o.group(3) if o.group(3) is not None else o.group(4) or "").strip()
            kind = "tab" if name in _TAB_DIRECTIVES else "admonition"
            if name.startswith("{") and name not in _TAB_DIRECTIVES | {"{admonition}"}:
                label = ""  # {note}, {tab-set} ...: a title only where the directive takes one
            if len(colons) < _MAX_OPEN:
                colons.append((len(o.group(1)), line, kind, label))
    return out


# reStructuredText: titles are underlined (and maybe overlined) with a punctuation character; the order styles
# first appear in gives their levels. Tabs and titled admonitions are directives whose body is indented.
_RST_ADORN = re.compile(r"^([=\-~^\"'`#*+:._])\1{2,}\s*$")
_RST_DIRECTIVE = re.compile(r"^([ \t]*)\.\.[ \t]+(tab|tab-item|group-tab|code-tab|admonition)::[ \t]*(.*)$")


def rst_sections(index: LineIndex) -> list[Section]:
    n = len(index.starts)
    found: list[tuple[int, int, str]] = []
    styles: list[tuple[str, bool]] = []
    out: list[Section] = []
    line = 1
    while line < n:
        title, under = index.line_text(line), index.line_text(line + 1)
        m = _RST_ADORN.match(under)
        if title.strip() and not _RST_ADORN.match(title) and m and len(under.rstrip()) >= len(title.rstrip()) \
                and not title.startswith((" ", "\t")):
            over = line > 1 and index.line_text(line - 1).strip() == under.strip()
            style = (m.group(1), over)
            if style not in styles:
                styles.append(style)
            found.append((line, styles.index(style) + 1, title.strip()))
            line += 2
            continue
        line += 1
    out.extend(headings(index, found, n))
    for line in range(1, n + 1):
        m = _RST_DIRECTIVE.match(index.line_text(line))
        if not m or not m.group(3).strip() or len(m.group(1).expandtabs()) > _MAX_INDENT:
            continue
        indent = len(m.group(1).expandtabs())
        kind = "admonition" if m.group(2) == "admonition" else "tab"
        out.append(Section(line, _body_end(index, line, indent), kind, m.group(3).strip(), index.line_text(line),
                           _line_span(index, line), 100 + indent))
    return out


def lead_in(index: LineIndex, fence: int) -> Section | None:
    """The paragraph right above the fence opened on line ``fence`` when it ends with a colon (one blank line
    between at most): the block's lead-in."""
    last = fence - 1
    if last >= 1 and not index.line_text(last).strip():
        last -= 1
    if last < 1 or not index.line_text(last).rstrip().endswith(":"):
        return None
    first = last
    while first > 1 and index.line_text(first - 1).strip() and not re.match(
            r"\s*(?:#|```|~~~|[-*+>|]|\d+\.\s|<)", index.line_text(first - 1)):
        first -= 1
    if re.match(r"\s*(?:#|```|~~~|>|\||<)", index.line_text(first)):
        return None
    text = " ".join(index.line_text(k).strip() for k in range(first, last + 1))
    span = Span(index.starts[first - 1], index.starts[last - 1] + len(index.line_text(last)))
    return Section(last, fence + 1, "lead-in", text, text, span, 1000)


class Around:
    """The sections around the lines of a document, asked in increasing line order (one sweep: each section is
    entered and left once, so a page of many headings and blocks costs its length, not their product)."""

    def __init__(self, sections: list[Section]):
        self.pending = sorted(sections, key=lambda s: s.first, reverse=True)
        self.active: list[Section] = []

    def at(self, line: int, near: Section | None = None) -> list[Hint]:
        """The hints of the nearest sections around ``line`` (and ``near``, a block's lead-in) that name a GPU, and
        a platform: the GPU of one section (the nearest that names one), the platform of the nearest that names
        one."""
        while self.pending and self.pending[-1].first < line:
            self.active.append(self.pending.pop())
        self.active = [s for s in self.active if s.last >= line]
        around = sorted(self.active + ([near] if near else []), key=lambda s: (s.depth, s.first), reverse=True)
        gpu: list[Hint] = []
        platform: list[Hint] = []
        for s in around:
            got = s.hints()
            named = [h for h in got if h.kind == "gpu"]
            if named:
                gpu = _narrowed(gpu, named) if gpu else named
            if not platform and any(h.kind == "platform" for h in got):
                platform = [h for h in got if h.kind == "platform"]
        return gpu + platform


def _narrowed(inner: list[Hint], outer: list[Hint]) -> list[Hint]:
    """The GPU of a section inside another that names one too: the inner section's, narrowed by the outer where they
    agree ("FP4 KV cache (Blackwell):" under a "B200" tab: the B200), the inner's alone where they do not."""
    have = _union(inner)
    both = have & _union(outer)
    if both.negated or not both.archs or both == have:
        return inner
    return [Hint("gpu", both.value, f"{inner[0].reason} under {outer[0].reason}", inner[0].span, "section")]


def _union(hints: list[Hint]) -> ArchSet:
    out = ArchSet(())
    for h in hints:
        out = out | arch_set(h.value)
    return out


def agrees(launch_hints: list[Hint], section: list[Hint]) -> list[Hint]:
    """``section``'s hints for a launch whose own hints may name its platform: none when they name another one (a
    ROCm image under a heading that names an H100), else all of them."""
    own = next((h.value for h in launch_hints if h.kind == "platform" and h.scope != "section"), None)
    theirs = next((h.value for h in section if h.kind == "platform"), "cuda" if section else None)
    if own is not None and theirs is not None and own != theirs:
        return []
    return section
