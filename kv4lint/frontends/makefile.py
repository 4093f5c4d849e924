"""Makefiles: recipe lines as shell.

A recipe line (after a rule, starting with a tab or the ``.RECIPEPREFIX``)
is what make hands to the shell after its own expansion:

* ``\\`` continuation lines stay in the text (the shell joins them), the
  recipe prefix of each continuation line is dropped, as make drops it;
* the ``@``/``-``/``+`` prefixes are make's, not the shell's;
* ``$$`` is one ``$`` for the shell;
* ``$(VAR)``/``${VAR}`` are make variables: one assigned once in the Makefile
  with a literal value (``VAR = x``, ``VAR := x``, ``VAR ?= x``) is put before
  the line as a shell assignment mapped to where its value is written, so
  ``--kv-cache-dtype $(KV_DTYPE)`` resolves to the assignment (reported at
  the use, fixed at the assignment, unsafe when other recipes use it too);
  any other variable, automatic variable or function is unknown.

With ``.ONESHELL:`` a rule's recipe lines are one script.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kv4lint.base import internal_error
from kv4lint.base.file_error import FileError
from kv4lint.base.model import ForeignString, Hint, ScanResult, Span
from kv4lint.base.record import replace
from kv4lint.frontends import embedded
from kv4lint.frontends.embedded import TextBuilder
from kv4lint.frontends.hints import env_hints

_ASSIGN = re.compile(r"^[ \t]*((?:(?:export|override|private)[ \t]+)*)([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*"
                     r"(::=|:::=|:=|\?=|\+=|!=|=)[ \t]*")
_RULE = re.compile(r"^[^\t#=][^=#]*?(?<![:=]):(?![=:])")  # "targets: prereqs" (not "x := y")
_DIRECTIVE = re.compile(r"^[ \t]*(ifeq|ifneq|ifdef|ifndef|else|endif|include|-include|sinclude|export|unexport|"
                        r"vpath|override|undefine)\b")
_SHELL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SAFE_VALUE = re.compile(r"^[^\"'\\`$;&|<>()\n]*$")
_REF = re.compile(r"\$(?:\$|\(([^()$:]*)(?::[^()]*)?\)|\{([^{}$:]*)(?::[^{}]*)?\}|([^$({]))")
_UNKNOWN = "${KV4LINT_MAKE_UNKNOWN}"


@dataclass
class MakeVar:
    name: str
    value: str | None  # None: not a single literal value
    value_start: int = 0  # file offset of the value
    span: Span | None = None  # the assignment line
    exported: bool = False
    uses: int = 0
    foreign: bool = False  # set by an included makefile (kv4lint.pipeline.sourced): reported, not edited here


@dataclass
class Recipe:
    # physical lines (start, content end) of one logical line
    lines: list[tuple[int, int]] = field(default_factory=list)
    rule: int = 0  # index of the rule the line belongs to
    line: int = 0  # 1-based line number
    prefix: str = "\t"  # the recipe prefix in force


def _physical(text: str) -> list[tuple[int, int]]:
    out = []
    i, n = 0, len(text)
    while i < n:
        j = text.find("\n", i)
        if j < 0:
            out.append((i, n))
            break
        out.append((i, j - 1 if j > i and text[j - 1] == "\r" else j))
        i = j + 1
    return out


def _continued(text: str, s: int, e: int) -> bool:
    k = e
    count = 0
    while k > s and text[k - 1] == "\\":
        count += 1
        k -= 1
    return count % 2 == 1


def parse(text: str, included: dict[str, dict[str, ForeignString | None]] | None = None,
          includes: list[str] | None = None) -> tuple[dict[str, MakeVar], list[Recipe], bool]:
    """Variables, recipe lines and whether ``.ONESHELL`` is set.

    ``include FILE`` lines are appended to ``includes`` (as ``makeinclude:FILE``); ``included`` gives the
    variables of those files when the pipeline read them (:mod:`kv4lint.pipeline.sourced`), set where the line stands.
    """
    lines = _physical(text)
    variables: dict[str, MakeVar] = {}
    recipes: list[Recipe] = []
    prefix = "\t"
    oneshell = False
    in_rule = False
    rule_no = 0
    in_define = False
    k = 0
    while k < len(lines):
        s, e = lines[k]
        raw = text[s:e]
        if in_define:
            if re.match(r"^[ \t]*endef\b", raw):
                in_define = False
            k += 1
            continue
        if in_rule and raw.startswith(prefix):
            rec = Recipe([(s, e)], rule_no, k + 1, prefix)
            while _continued(text, s, e) and k + 1 < len(lines):
                k += 1
                s, e = lines[k]
                rec.lines.append((s, e))
            recipes.append(rec)
            k += 1
            continue
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            k += 1
            continue
        # logical line (continuations joined with a space, as make does outside recipes)
        first = k
        while _continued(text, s, e) and k + 1 < len(lines):
            k += 1
            s, e = lines[k]
        logical_start, logical_end = lines[first][0], e
        logical = text[logical_start:logical_end]
        k += 1
        m_def = re.match(r"^[ \t]*(?:(?:export|override)[ \t]+)*define[ \t]+([A-Za-z_][A-Za-z0-9_.-]*)", logical)
        if m_def:
            in_define = True
            variables[m_def.group(1)] = MakeVar(m_def.group(1), None)
            continue
        m = _ASSIGN.match(logical)
        if m and not _RULE.match(logical[: m.start(3)]):
            _assign(variables, m, logical, logical_start, first != k - 1)
            continue
        m_inc = re.match(r"^[ \t]*(?:-include|sinclude|include)[ \t]+(.*)$", logical)
        if m_inc:
            for name in m_inc.group(1).split("#", 1)[0].split():
                if "$" in name or "%" in name or "*" in name:
                    continue
                ref = f"makeinclude:{name}"
                if includes is not None and ref not in includes:
                    includes.append(ref)
                for var, value in (included or {}).get(ref, {}).items():
                    variables[var] = MakeVar(var, value, foreign=True)
            continue
        if _DIRECTIVE.match(logical):
            continue
        rm = _RULE.match(logical)
        if rm:
            targets = logical[: rm.end() - 1].split()
            rest = logical[rm.end():]
            if ".ONESHELL" in targets:
                oneshell = True
            ta = _ASSIGN.match(rest)
            if ta:  # target-specific variable: the global value is not what this target sees
                name = ta.group(2)
                variables[name] = MakeVar(name, None)
                in_rule = True
                rule_no += 1
                continue
            in_rule = True
            rule_no += 1
            semi = rest.find(";")
            if semi >= 0 and first == k - 1:  # "target: deps ; recipe"
                start = logical_start + rm.end() + semi + 1
                recipes.append(Recipe([(start, logical_end)], rule_no, first + 1, ""))
            continue
        rp = re.match(r"^[ \t]*\.RECIPEPREFIX[ \t]*:?=[ \t]*(\S)?", logical)
        if rp:
            prefix = rp.group(1) or "\t"
            continue
        in_rule = False
    return variables, recipes, oneshell


def _assign(variables: dict[str, MakeVar], m, logical: str, start: int, multiline: bool) -> None:
    name, op = m.group(2), m.group(3)
    value = logical[m.end():]
    hash_at = value.find("#")
    if hash_at >= 0:
        value = value[:hash_at]
    value = value.rstrip(" \t")
    exported = "export" in m.group(1)
    old = variables.get(name)
    if op == "?=" and old is not None:
        return
    literal = op in ("=", ":=", "::=", ":::=", "?=") and not multiline and "$" not in value
    if old is not None and (old.value != value or not literal):
        variables[name] = MakeVar(name, None, exported=exported or old.exported)
        return
    if op == "+=" or not literal:
        variables[name] = MakeVar(name, None, exported=exported)
        return
    variables[name] = MakeVar(name, value, start + m.end(), Span(start, start + len(logical)), exported)


def _expand(text: str, rec: Recipe, variables: dict[str, MakeVar], b: TextBuilder, used: list[str]) -> None:
    """One logical recipe line as the shell receives it, into ``b``."""
    for n, (s, e) in enumerate(rec.lines):
        if n == 0:
            p = s + len(rec.prefix)
            # make's own prefixes
            while p < e and text[p] in "@-+ \t":
                p += 1
        else:
            p = s + 1 if rec.prefix and text[s:s + 1] == rec.prefix else s
            b.verbatim("\n", s - 1)  # the line break after the backslash
        pos = p
        for m in _REF.finditer(text, p, e):
            b.verbatim(text[pos:m.start()], pos)
            if m.group() == "$$":
                b.mapped("$", [None])  # two characters for one: not verbatim
            else:
                name = m.group(1) if m.group(1) is not None else m.group(2) if m.group(2) is not None else m.group(3)
                var = variables.get((name or "").strip()) if name and " " not in name.strip() else None
                if var is not None and var.value is not None and ":" not in m.group()[2:]:
                    var.uses += 1
                    if var.foreign and not (isinstance(var.value, ForeignString) and var.value.path is not None
                                            and _SHELL_NAME.match(var.name) and _SAFE_VALUE.match(var.value)):
                        b.synthetic(var.value, m.start())  # from an included file, not editable from here
                    elif _SHELL_NAME.match(var.name) and _SAFE_VALUE.match(var.value):
                        ref = "${" + var.name + "}"
                        b.mapped(ref, list(range(m.start(), m.start() + len(ref))) if len(m.group()) == len(ref)
                                 else [m.start()] * len(ref))
                        if var.name not in used:
                            used.append(var.name)
                    else:  # make pastes the text: the shell reads its quotes and words
                        b.mapped(var.value, list(range(var.value_start, var.value_start + len(var.value))))
                else:
                    b.synthetic(_UNKNOWN, m.start())
            pos = m.end()
        b.verbatim(text[pos:e], pos)


def scan_makefile(text: str, path: str, *,
                  included: dict[str, dict[str, ForeignString | None]] | None = None) -> ScanResult:
    """Launches in a Makefile's recipes (see the module docstring); ``included``: see :func:`parse`."""
    result = ScanResult()
    try:
        variables, recipes, oneshell = parse(text, included, result.sources)
    except Exception as e:  # noqa: BLE001 - never raise on any input
        result.errors.append(FileError(path, f"cannot read the Makefile ({type(e).__name__}: {e})"))
        return result
    groups: list[list[Recipe]] = []
    for rec in recipes:
        if oneshell and groups and groups[-1][0].rule == rec.rule:
            groups[-1].append(rec)
        else:
            groups.append([rec])
    hints: list[Hint] = []
    for var in variables.values():
        if var.exported:
            hints.extend(env_hints(var.name, var.value, var.span, how="export"))
    for group in groups:
        try:
            _scan_group(result, group, variables, hints, text, path)
        except Exception as e:  # noqa: BLE001 - one recipe must not stop the others
            result.errors.append(internal_error.scan_error(path, "while scanning a recipe", e, group[0].line))
    _mark_shared(result, variables)
    # A line continuing a recipe line (after a "\\") is part of its shell command (a string there), not a comment.
    embedded.apply_disabled(result, text, comments=lambda: lambda offset: not _continues(text, offset))
    result.launches.sort(key=lambda launch: (launch.span.start, launch.anchor.start))
    return result


def _continues(text: str, offset: int) -> bool:
    """Whether the line at ``offset`` continues a line that ends with a backslash."""
    ls = text.rfind("\n", 0, offset)
    if ls <= 0:
        return False
    prev = text[text.rfind("\n", 0, ls) + 1:ls].rstrip("\r")
    return prev.startswith("\t") and prev.endswith("\\")


def _scan_group(result: ScanResult, group: list[Recipe], variables: dict[str, MakeVar], hints: list[Hint],
                text: str, path: str) -> None:
    body = TextBuilder()
    used: list[str] = []
    for n, rec in enumerate(group):
        if n:
            body.synthetic("\n", rec.lines[0][0])
        _expand(text, rec, variables, body, used)
    cmd, cmap = body.build(end=group[-1].lines[-1][1])
    if "sglang" not in cmd and not any("sglang" in (variables[u].value or "") for u in used):
        return
    b = TextBuilder()
    env: dict[str, str] = {}
    for name in used:
        var = variables[name]
        if var.foreign:  # written in an included makefile: the shell reads it from there (fixed there, unsafe)
            env[name] = var.value
            continue
        assert var.value is not None and var.span is not None
        b.synthetic(name + '="', var.value_start)
        b.verbatim(var.value, var.value_start)
        b.synthetic('"\n', var.value_start + len(var.value))
    b.mapped(cmd, cmap.outer)
    full, fmap = b.build(end=cmap.outer[-1])
    sub = embedded.scan_shell_text(full, path, fmap, env=env, hints=hints, what="recipe", line=group[0].line,
                                   file_text=text)
    embedded.merge(result, sub)


def _mark_shared(result: ScanResult, variables: dict[str, MakeVar]) -> None:
    """A value from a make variable that several recipes use is shared: editing it is an unsafe fix."""
    spans = [Span(v.value_start, v.value_start + len(v.value)) for v in variables.values()
             if v.value is not None and v.uses > 1 and not v.foreign]
    if not spans:
        return
    for launch in result.launches:
        for k, v in enumerate(launch.argv):
            if v.span is None or v.shared:
                continue
            if any(s.start <= v.span.start and v.span.end <= s.end for s in spans):
                launch.argv[k] = replace(v, shared=True)
