"""What a shell script says about the GPU its launches run on (the names mean what :mod:`kv4lint.sglang.gpus` says):

* its ``#SBATCH`` header, the comment lines before its first command where Slurm reads them
  (``#SBATCH --gres=gpu:h100:8``): scope ``file``, every launch of the script;
* a comment on a launch's last line or in the comment lines directly above it (``# 8x H100``): scope ``launch``;
* a branch whose condition tests the GPU: its name (``nvidia-smi ... | grep -q B200``, ``[[ $GPU == *B200* ]]``
  with ``GPU=$(nvidia-smi --query-gpu=name ...)``) or its compute capability (``nvidia-smi --query-gpu=compute_cap``,
  ``[ "$CC" -ge 10 ]``). The launches inside the branch, and the values its assignments give the launches after it
  (a path of :mod:`~kv4lint.frontends.shell.choices`), get a ``guard`` hint: the archs the test holds on, their
  complement in the other branch. A condition that tests anything else besides says nothing.

:class:`Machine` is the state one scan keeps: the variables that hold the GPU's name or capability, the guards
around the statement being walked, and the guard each path condition stands for.
"""

from __future__ import annotations

import re
import shlex
from contextlib import nullcontext

from kv4lint.base.conditions import AND, split_top
from kv4lint.base.model import Hint
from kv4lint.frontends.hints import guard_hint, short, slurm_hints, text_hints
from kv4lint.sglang.commands import SLURM_GPU_OPTIONS
from kv4lint.sglang.gpus import ArchSet, compare_archs, match_archs

# -- #SBATCH ------------------------------------------------------------------

_SBATCH = re.compile(r"#SBATCH[ \t]+")


def header_hints(src) -> list[Hint]:
    """The GPU requests of the ``#SBATCH`` lines Slurm reads: those before the script's first command."""
    out: list[Hint] = []
    at = 0
    text = src.text
    while at < len(text):
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        line = text[at:end]
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        m = _SBATCH.match(line)
        if m:
            out.extend(_sbatch_line(src, at + m.end(), line[m.end():]))
        at = end + 1
    return out


def _sbatch_line(src, start: int, rest: str) -> list[Hint]:
    words = [(w.start(), w.group()) for w in re.finditer(r"\S+", rest)]
    out: list[Hint] = []
    k = 0
    while k < len(words):
        col, word = words[k]
        if word.startswith("#"):
            break
        opt, eq, value = word.partition("=")
        vcol = col + len(opt) + 1
        if not eq and opt in SLURM_GPU_OPTIONS and k + 1 < len(words):
            vcol, value = words[k + 1]
            k += 1
        elif not eq and len(opt) > 2 and opt[:2] in ("-G", "-C") and not opt.startswith("--"):
            opt, value, vcol = opt[:2], opt[2:], col + 2
        if opt in SLURM_GPU_OPTIONS and value:
            span = src.fanchor(start + col, start + vcol + len(value))
            out.extend(slurm_hints(opt, value.strip("'\""), span, how="#SBATCH", scope="file"))
        k += 1
    return out


# -- comments -------------------------------------------------------------------

_MAX_COMMENT_LINES = 5
# After a command on its line: redirections, ``&``, ``;``, then the comment.
_TRAILING = re.compile(r"(?:[ \t]*(?:\d*>>?&?[ \t]*[^\s#;&|]+|\d*<[ \t]*[^\s#;&|]+|&|;))*[ \t]+#(.*)$")


def comment_hints(src, start: int, end: int) -> list[Hint]:
    """The GPUs a comment names on the last line of the statement ``src.text[start:end]`` or in the comment lines
    directly above its first line (no blank line between)."""
    out: list[Hint] = []
    first, last = src.line(start), src.line(max(start, end - 1))
    tail = src.line_text(last)
    col = end - src.line_start(last)
    m = _TRAILING.match(tail[col:]) if 0 <= col <= len(tail) else None
    if m:
        out.extend(_comment(src, src.line_start(last) + col + m.start(1) - 1, "#" + m.group(1)))
    line = first - 1
    while line >= 1 and first - line <= _MAX_COMMENT_LINES:
        text = src.line_text(line)
        body = text.lstrip()
        if not body.startswith("#") or body.startswith(("#!", "#SBATCH")):
            break
        out.extend(_comment(src, src.line_start(line) + len(text) - len(body), body))
        line -= 1
    return out


def _comment(src, at: int, text: str) -> list[Hint]:
    text = text.rstrip()
    return text_hints(text.lstrip("#"), f"comment '{short(text, 50)}'", src.fanchor(at, at + len(text)), "launch")


# -- guards ------------------------------------------------------------------------

class Machine:
    """One scan's state: the variables that read the GPU, the guards around the walk, a guard per path condition."""

    __slots__ = ("gpu_vars", "active", "by_condition", "changes", "_tested")

    def __init__(self):
        self.gpu_vars: dict[str, str] = {}  # name -> how it reads the GPU: name, lname, cc, major, sm
        self.active: list[Hint] = []  # the guards of the branches being walked
        self.by_condition: dict[str, list[Hint] | None] = {}  # a path's condition -> its guard (None: ambiguous)
        # How often gpu_vars changed (naming a condition again as it was named is no change: a walk that named
        # conditions and changed no variable that reads the GPU leaves the machine as walking it again would).
        self.changes = 0
        self._tested: dict[str, tuple] = {}  # a condition -> (changes, its guards then): a script repeats its tests

    def note(self, name: str, raw: str) -> None:
        """``NAME=RAW`` was assigned: remember whether it reads the GPU (and forget an earlier reading)."""
        kind = _reading(raw, self.gpu_vars)
        if self.gpu_vars.get(name) != kind:
            self.changes += 1
        if kind is None:
            self.gpu_vars.pop(name, None)
        else:
            self.gpu_vars[name] = kind

    def test(self, text: str, span) -> tuple[list[Hint], list[Hint]] | None:
        """A branch condition: (the guard where it succeeds, where it fails), or None when it does not test the
        GPU alone."""
        hit = self._tested.get(text)
        if hit is None or hit[0] != self.changes:
            hit = self._tested[text] = (self.changes, _condition(text.strip(), self.gpu_vars))
        found = hit[1]
        if found is None:
            return None
        on, off = found
        cond = " ".join(short(text, 50).split())
        return (guard_hint(on, f"branch where `{cond}` succeeds", span),
                guard_hint(off, f"branch where `{cond}` fails", span))

    def case(self, subject: str, words: list[str], earlier: list[str], span) -> list[Hint]:
        """The guard of a ``case SUBJECT in WORDS) ...`` item, after the items of ``earlier`` words did not match
        (``*`` is the default item); [] when the subject is not the GPU or a pattern is not plain."""
        kind = _operand(subject, self.gpu_vars)
        if kind is None:
            return []
        out: list[Hint] = []
        text = " ".join(short(subject, 30).split())
        mine = [w for w in words if w != "*"]
        for group, on in ((earlier, False), (mine, True)):
            patterns = [_word_pattern(w, True) for w in group]
            if not patterns:
                continue
            if None in patterns:
                return []
            found = match_archs("|".join(f"(?:{p})" for p in patterns), _kind(kind), regex=True,
                                ignore_case=kind == "lname", whole=True)
            if found is None:
                if on:
                    return []
                continue
            what = "matches" if on else "matches none of"
            out += guard_hint(found[0 if on else 1], f"case where {text} {what} {short('|'.join(group), 40)}", span)
        return out

    def name(self, condition: str, hints: list[Hint]) -> None:
        """``condition`` (a path condition in the user's terms, :func:`~kv4lint.frontends.shell.choices.describe`)
        stands for ``hints``; two tests written alike that mean different things stand for nothing."""
        if condition in self.by_condition and self.by_condition[condition] != hints:
            self.by_condition[condition] = None
        else:
            self.by_condition[condition] = hints

    def around(self, conditions: list[str]) -> list[Hint]:
        """The guards of the branches being walked and of the path conditions a launch is expanded under."""
        out = list(self.active)
        for cond in conditions:
            for part in split_top(cond or "", AND):
                out.extend(self.by_condition.get(part) or ())
        return out

    def guarding(self, hints: list[Hint]) -> "_Guarding | nullcontext":
        """Walk a branch body under ``hints`` (``with``; most branches are guarded by nothing)."""
        return _Guarding(self.active, hints) if hints else _UNGUARDED


class _Guarding:
    """The guards ``hints`` hold while a branch body is walked (a class, not a generator: a script has as many
    branches as lines)."""

    __slots__ = ("active", "hints")

    def __init__(self, active: list[Hint], hints: list[Hint]):
        self.active, self.hints = active, hints

    def __enter__(self) -> None:
        self.active.extend(self.hints)

    def __exit__(self, *exc) -> None:
        del self.active[-len(self.hints):]


_UNGUARDED = nullcontext()


def _query(raw: str) -> str | None:
    """How a command substitution reads the GPU: ``nvidia-smi`` (its name, or ``compute_cap``), torch's
    ``get_device_name``/``get_device_capability()[0]``."""
    if "nvidia-smi" in raw:
        q = re.search(r"--query-gpu[= ]([\w.,]+)", raw)
        if q is not None:
            fields = q.group(1).split(",")
            if fields == ["compute_cap"]:
                if re.search(r"tr\s+-d\s*['\"]?\\?\.|sed\s+['\"]?s/\\\.//", raw):
                    return "sm"
                if re.search(r"cut\s+-d\s*['\"]?\.['\"]?\s+-f\s*1\b", raw):
                    return "major"
                return "cc"
            return "name" if fields in (["name"], ["gpu_name"]) else None
        return "name" if re.search(r"nvidia-smi(?:\s+(?:-L|--list-gpus))?\s*(?:\||\)|$)", raw) else None
    if "get_device_name" in raw:
        return "name"
    if re.search(r"get_device_capability\([^)]*\)\s*\[\s*0\s*\]", raw):
        return "major"
    return None


_VAR_USE = re.compile(r"^\"?\$\{?(\w+)(?:(%%?\.\*)|(//\\?\./)|(,,|\^\^))?\}?\"?$")


def _operand(word: str, gpu_vars: dict[str, str]) -> str | None:
    """How a test's operand reads the GPU: a variable that holds it (``$CC``, ``${CC%%.*}``, ``${GPU,,}``) or
    a command substitution (``$(nvidia-smi --query-gpu=name ...)``)."""
    if not gpu_vars and "$(" not in word and "`" not in word:
        return None  # (most operands, while no variable holds the GPU)
    w = word.strip()
    m = _VAR_USE.match(w)
    if m:
        kind = gpu_vars.get(m.group(1))
        if kind is None:
            return None
        if m.group(2):
            return "major" if kind == "cc" else None
        if m.group(3):
            return "sm" if kind == "cc" else None
        if m.group(4):
            return "lname" if kind in ("name", "lname") else None
        return kind
    if w.strip('"').startswith(("$(", "`")):
        return _query(w)
    return None


def _reading(raw: str, gpu_vars: dict[str, str]) -> str | None:
    """What an assignment's value holds of the GPU, if anything."""
    kind = _query(raw) if ("$(" in raw or "`" in raw) else None
    if kind is not None:
        return kind
    kind = _operand(raw, gpu_vars)
    if kind is None and gpu_vars and re.search(r"tr\s+['\"]?(?:\[:upper:\]|A-Z)", raw):
        inner = re.search(r"\$\{?(\w+)", raw)
        if inner and gpu_vars.get(inner.group(1)) in ("name", "lname"):
            return "lname"
    return kind


def _word_pattern(word: str, glob: bool) -> str | None:
    """The right side of ``[[ $X == WORD ]]`` as a regular expression of the whole text: its unquoted ``*`` and
    ``?`` are wildcards (in ``[[ ]]`` only), the rest is literal. None for a word with expansions."""
    out, quote = [], None
    for ch in word:
        if quote:
            if ch == quote:
                quote = None
            else:
                out.append(re.escape(ch))
        elif ch in "'\"":
            quote = ch
        elif ch in "$`\\":
            return None
        elif glob and ch == "*":
            out.append(".*")
        elif glob and ch == "?":
            out.append(".")
        else:
            out.append(re.escape(ch))
    return None if quote else "".join(out)


def _condition(text: str, gpu_vars: dict[str, str]) -> tuple[ArchSet, ArchSet] | None:
    neg = False
    while text.startswith("! "):
        neg, text = not neg, text[2:].strip()
    found = _test(text, gpu_vars) or _pipeline(text, gpu_vars)
    if found is None:
        return None
    return found[::-1] if neg else found


def _test(text: str, gpu_vars: dict[str, str]) -> tuple[ArchSet, ArchSet] | None:
    """``[[ LHS OP RHS ]]``, ``[ LHS OP RHS ]``, ``test LHS OP RHS``, ``(( LHS OP RHS ))``."""
    if text.startswith("[[") and text.endswith("]]"):
        inner, glob = text[2:-2], True
    elif text.startswith("((") and text.endswith("))"):
        inner, glob = text[2:-2], False
    elif text.startswith("[") and text.endswith("]"):
        inner, glob = text[1:-1], False
    elif text.startswith("test "):
        inner, glob = text[5:], False
    else:
        return None
    m = re.fullmatch(r"\s*(\"[^\"]*\"|\S+)\s*(==|=|!=|=~|-eq|-ne|-ge|-gt|-le|-lt|>=|<=|>|<)\s*(.+?)\s*", inner)
    if m is None:
        return None
    left, op, right = m.groups()
    kind = _operand(left, gpu_vars)
    if kind is None and not left.startswith(("$", '"')):
        kind = gpu_vars.get(left)  # (( CC >= 10 ))
    if kind is None:
        return None
    if op.startswith("-") or op in (">=", "<=", ">", "<") or (text.startswith("((") and op in ("==", "!=")):
        if kind in ("name", "lname"):
            return None
        try:
            number = float(right.strip("'\""))
        except ValueError:
            return None
        return compare_archs(kind, op, number)
    if op == "=~":
        pattern = right.strip("'\"") if right[:1] == right[-1:] and right[:1] in "'\"" else right
        found = match_archs(pattern, _kind(kind), regex=True, ignore_case=kind == "lname")
    else:
        pattern = _word_pattern(right, glob)
        if pattern is None:
            return None
        found = match_archs(pattern, _kind(kind), regex=True, ignore_case=kind == "lname", whole=True)
    if found is None:
        return None
    return found[::-1] if op == "!=" else found


def _kind(kind: str) -> str:
    return "name" if kind == "lname" else kind


_FILTERS = {"head", "tail", "awk", "cut", "sed", "sort", "uniq", "xargs", "tr"}


_UNQUOTED = str.maketrans("", "", "'\"\\")  # what shlex leaves of a word: its characters without quotes or escapes


def _pipeline(text: str, gpu_vars: dict[str, str]) -> tuple[ArchSet, ArchSet] | None:
    """``PRODUCER | ... | grep [-q -i -E -w -x -v] PATTERN`` (or ``grep ... <<< "$GPU"``), where the producer
    reads the GPU: ``nvidia-smi`` or ``echo "$GPU"``."""
    if "grep" not in text.translate(_UNQUOTED):  # (most conditions: no grep, not even quoted as g"r"ep)
        return None
    try:
        lex = shlex.shlex(text, posix=True, punctuation_chars="|&;<>")
        lex.whitespace_split = True
        tokens = list(lex)
    except ValueError:
        return None
    if any(t in ("&&", "||", ";", "&", "\n") for t in tokens):
        return None
    words: list[list[str]] = [[]]
    for t in tokens:
        if t == "|":
            words.append([])
        else:
            words[-1].append(t)
    if not all(words) or words[-1][0] != "grep":
        return None
    grep = words[-1]
    kind = None
    if len(words) == 1:
        if "<<<" not in grep or grep.index("<<<") + 2 != len(grep):
            return None
        kind = _operand(grep[-1], gpu_vars)
        grep = grep[:-2]
    else:
        head = words[0]
        if head[0] == "nvidia-smi":
            kind = _query(" ".join(head))
        elif head[0] in ("echo", "printf") and len(head) >= 2 and sum("$" in w for w in head) == 1:
            kind = _operand(head[-1], gpu_vars)
        middle = words[1:-1]
        if any(w[0] not in _FILTERS for w in middle):
            return None
        if any(w[0] == "tr" and any(re.search(r"upper|A-Z", a) for a in w[1:]) for w in middle):
            kind = "lname" if kind in ("name", "lname") else kind
    if kind is None:
        return None
    flags, pattern = set(), None
    k = 1
    while k < len(grep):
        w = grep[k]
        if w in ("-e", "--regexp") and k + 1 < len(grep):
            pattern = grep[k + 1]
            k += 2
            continue
        if w.startswith("--"):
            flags.add(w)
        elif w.startswith("-") and len(w) > 1:
            flags.update(w[1:])
        elif pattern is None:
            pattern = w
        else:
            return None  # a file operand: not the GPU's name
        k += 1
    if pattern is None:
        return None
    regex = not ({"F", "--fixed-strings"} & flags)
    if "w" in flags:
        pattern, regex = rf"\b(?:{pattern if regex else re.escape(pattern)})\b", True
    if not ({"E", "P", "--extended-regexp", "--perl-regexp"} & flags) and regex:
        pattern = pattern.replace(r"\|", "|")  # basic regular expressions: \| is alternation
    found = match_archs(pattern, _kind(kind), regex=regex, ignore_case="i" in flags or kind == "lname",
                        whole="x" in flags)
    if found is None:
        return None
    return found[::-1] if "v" in flags else found
