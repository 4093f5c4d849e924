"""Find the files to scan and their language.

Walks the given paths, honours git's ignore rules (:mod:`kv4lint.files.ignore`) and configured excludes,
picks files by extension, name (Dockerfile, Makefile) and shebang, and never
follows a symlink out of the tree it was given.
"""

from __future__ import annotations

import functools
import operator
import os
import re
import stat
import time
from fnmatch import translate

from kv4lint.base.record import Record
from kv4lint.files.ignore import GitIgnore, _git_dir

_EXT = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".sh": "shell", ".bash": "shell", ".ksh": "shell", ".zsh": "shell", ".slurm": "shell", ".sbatch": "shell",
    ".yaml": "yaml", ".yml": "yaml",
    ".md": "markdown", ".markdown": "markdown", ".mdx": "markdown", ".rst": "markdown",
    ".ipynb": "notebook",
    ".mk": "makefile",
    ".json": "json", ".jsonc": "json", ".jsonl": "json", ".ndjson": "json",
    ".service": "systemd",
    ".dockerfile": "dockerfile", ".containerfile": "dockerfile",
}
_NAMES = {"dockerfile": "dockerfile", "containerfile": "dockerfile", "makefile": "makefile",
          "gnumakefile": "makefile", "procfile": "procfile", "justfile": "justfile", ".justfile": "justfile",
          "tox.ini": "tox", "pyproject.toml": "pyproject", "supervisord.conf": "supervisord"}
_SHEBANG = re.compile(rb"^#!\s*(?:/usr/bin/env\s+(?:-S\s+)?)?(?:\S*/)?(\w+?)(?:[\d.]*)(?:\s|$)")
_SUPERVISOR_DIR = re.compile(r"(?:^|[/\\])supervisor[d]?(?:[/\\]conf\.d)?[/\\][^/\\]+$")  # supervisor/conf.d/x.conf

DEFAULT_EXCLUDES = [".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", "node_modules",
                    ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages", ".eggs", "build", "dist"]


def language_of(path: str, head: bytes | None = None) -> str | None:
    """The language of a file from its name, or its first line (shebang)."""
    lang = _language_of_name(os.path.basename(path))
    if lang is not None:
        return lang
    if path.endswith((".conf", ".ini")) and _SUPERVISOR_DIR.search(path):
        return "supervisord"
    if head is not None and head.startswith(b"#!"):
        m = _SHEBANG.match(head)
        if m:
            from kv4lint.sglang.commands import SHELLS  # the wrappers' model: for a file named by its shebang only

            prog = m.group(1).decode("ascii", "replace")
            if prog in SHELLS:
                return "shell"
            if prog.startswith(("python", "pypy")):
                return "python"
    return None


def chosen(path: str) -> tuple[bool, str | None]:
    """Does kv4lint read the file at ``path``, and its language when the name tells it (``None``: its shebang
    will, once read)?  One rule for a walk and for the files named on the command line (pre-commit names every
    text file: the hook sees what ``kv4lint check .`` sees): a file whose name or directory tells its language,
    or one without an extension (its shebang decides); never one whose extension names another format."""
    return _chosen(path, os.path.basename(path))


def _chosen(path: str, name: str) -> tuple[bool, str | None]:
    """:func:`chosen` for a walk, which has the file's ``name`` already (a walk's cost is per entry)."""
    lang = _language_of_name(name)
    if lang is not None:
        return True, lang
    if name.endswith((".conf", ".ini")) and _SUPERVISOR_DIR.search(path):
        return True, "supervisord"  # as language_of
    return "." not in name, None  # an extension that names something else (notes.txt, setup.cfg): not read


def _language_of_name(name: str) -> str | None:
    low = name.lower()
    dot = low.rfind(".")
    if dot > 0:  # as os.path.splitext: leading dots do not start an extension
        lang = _EXT.get(low[dot:])
        if lang is not None and low[:dot].strip("."):
            return lang  # dockerfile.py is Python; Dockerfile.prod a Dockerfile
    lang = _NAMES.get(low)
    if lang is not None:
        return lang
    if low.endswith((".conf", ".ini")) and "supervisor" in low:
        return "supervisord"  # supervisor/conf.d/NAME.conf is named by its directory: see language_of
    if low.startswith(("dockerfile.", "containerfile.")):
        return "dockerfile"
    return None


class Candidate(Record):
    """A file to read: its ``path`` as the user will see it (relative to cwd when given relatively), its
    ``language`` (None: decided from the shebang after reading) and its ``stat`` as the walk found it
    (kv4lint.pipeline.cache.FileIndex)."""

    __slots__ = ("path", "language", "stat")

    def __init__(self, path: str, language: str | None, stat: os.stat_result | None = None):
        self.path = path
        self.language = language
        self.stat = stat


class Discovery(Record):
    """What a walk found: the ``files`` to read, ``errors`` and ``skipped`` entries as (path, message)."""

    __slots__ = ("files", "errors", "skipped")

    def __init__(self, files: list[Candidate] | None = None, errors: list[tuple[str, str]] | None = None,
                 skipped: list[tuple[str, str]] | None = None):
        self.files = [] if files is None else files
        self.errors = [] if errors is None else errors
        self.skipped = [] if skipped is None else skipped


class _Ignore:
    """git's ignore rules (:mod:`kv4lint.files.ignore`) for the entries of one walk."""

    def __init__(self, root: str, rules: GitIgnore):
        self.root = os.path.abspath(root)
        self.rules = rules
        self.top = rules.top(self.root, self.root)

    def entries(self, full: str, names):
        """A test ``(name, is_dir) -> bool`` for the entries of the directory ``full`` (absolute; ``names``: all
        of them), or None where no rule (a ``.gitignore`` here or above, up to the repository's root, or
        ``info/exclude``) can ignore one: most directories of a tree, whose entries then cost nothing."""
        self.rules.listed(full, names)
        if not self.rules.has_rules(full, self.top):
            return None
        prefix = full if full.endswith(os.sep) else full + os.sep
        rules, top = self.rules, self.top
        return lambda name, is_dir: rules.entry_ignored(prefix + name, is_dir, top)


_NEVER = re.compile(r"(?!)").match
_NAME = operator.attrgetter("name")
_WILD = re.compile(r"[*?\[]")


@functools.lru_cache(maxsize=32)
def _excluders(patterns: tuple[str, ...]):
    """Compiled forms of ``patterns`` (fnmatch semantics, as :func:`excluded` documents).

    Returns (literal names, name matcher, part matcher, path matcher): literal
    slash-free patterns (``.venv``, ``build``: the defaults) are a set lookup
    on names; the others become one regular expression per use.
    """
    literal, names, parts, paths = set(), [], [], []
    for pat in patterns:
        p = os.path.normcase(pat.rstrip("/"))
        if "/" not in p and not _WILD.search(p):
            literal.add(p)
            continue
        names.append(translate(p))
        if "/" not in p:
            parts.append(translate(p))
        paths += [translate(p), translate(f"*/{p}"), translate(f"{p}/*")]

    def comp(xs):
        return re.compile("|".join(xs)).match if xs else _NEVER

    return frozenset(literal), comp(names), comp(parts), comp(paths)


def excluded(path: str, patterns: list[str]) -> bool:
    """Whether ``path`` matches one of the exclude ``patterns``.

    A pattern (trailing ``/`` ignored) matches the file name, the whole path,
    the path's end (``*/PATTERN``) or its start (``PATTERN/*``); one without
    ``/`` also matches any component of the path.  fnmatch rules: ``*`` also
    matches ``/``.
    """
    literal, m_name, m_part, m_path = _excluders(tuple(patterns))
    path = os.path.normcase(path)
    name = os.path.basename(path)
    if name in literal or m_name(name) or m_path(path):
        return True
    from pathlib import PurePath  # here only: 5 ms to import, and a walk does not call this

    return any(part in literal or m_part(part) for part in PurePath(path).parts)


class _Excluder:
    """:func:`excluded` for the entries of a walk, where the directories above were already checked.

    An entry's path is the walk's root, then directories that passed (their
    names did not match), then the entry's name: so only the entry's name and
    the whole path need testing -- for the default excludes one set lookup per
    entry.  The root's own components are not tested: a directory named on the
    command line is scanned even under ``~/build/`` (as a named file is).
    """

    def __init__(self, patterns: list[str]):
        self.literal, self.m_name, _, self.m_path = _excluders(tuple(patterns))
        self.paths = self.m_path is not _NEVER
        # On a case-sensitive system with only literal names (the defaults), `name in literal` is the whole test.
        self.only_literal = self.m_name is _NEVER and not self.paths and os.path.normcase("A") == "A"

    def __call__(self, path: str, name: str) -> bool:
        name = os.path.normcase(name)
        if name in self.literal or self.m_name(name):
            return True
        return self.paths and self.m_path(os.path.normcase(path)) is not None


OUT_OF_TREE = "a symlink to a path outside the tree being checked; not followed"


def inside(real: str, trees: list[str]) -> bool:
    """Whether the resolved path ``real`` is one of ``trees`` (resolved) or lies in one."""
    return any(real == t or real.startswith(t.rstrip(os.sep) + os.sep) for t in trees)


def roots_of(paths) -> list[str]:
    """The trees named by ``paths`` (resolved): each directory, and each file's directory.  A run reads
    and writes only there (kv4lint.fixes.writer refuses the rest)."""
    out = []
    for p in paths:
        ap = os.path.abspath(p)
        out.append(os.path.realpath(ap if os.path.isdir(ap) else os.path.dirname(ap)))
    return out


def _trees(paths: list[str]) -> list[str]:
    """The trees a named symlink may point into: the working directory and :func:`roots_of` the paths."""
    return [os.path.realpath(os.getcwd()), *roots_of(paths)]


def discover(paths: list[str], *, exclude: list[str] | None = None, respect_gitignore: bool = True,
             force_exclude: bool = False, repository_roots: dict[str, str | None] | None = None,
             listings: dict[str, set[str]] | None = None, memo: WalkMemo | None = None,
             listed: tuple[str, ...] = ()) -> Discovery:
    """Files under ``paths`` that kv4lint can scan.

    ``repository_roots`` (repository_root's table) and ``listings`` (absolute directory -> the names of its
    entries) are filled for every directory walked, so that the configuration's look-ups need not ask the file
    system again what the walk saw.  With ``memo`` (:class:`WalkMemo`), the directories that did not change
    since the walk that filled it are not listed again: their listing then holds only ``.git``, ``.gitignore``
    and the names of ``listed`` that are there.

    A file named explicitly is scanned whatever the names of the directories
    above it, unless ``force_exclude`` (as pre-commit needs) and it matches a
    configured exclude or git ignores it; a named file, as a walked one, when
    :func:`chosen` takes it (pre-commit's hook passes every text file).  A
    named directory that git ignores is not walked (``Discovery.skipped`` says
    so), as git does not look inside it.
    """
    excl = DEFAULT_EXCLUDES + list(exclude or [])
    out = Discovery()
    seen: set[tuple[int, int]] = set()
    trees = _trees(paths)
    rules = GitIgnore(repository_roots)  # filled for every directory walked: the settings' look-up reads it
    if memo is not None:
        memo.start("\0".join([str(WALK_FORMAT), str(respect_gitignore), *sorted(listed), "", *excl]))
    for root in paths:
        try:
            st = os.stat(root)
        except OSError as e:
            out.errors.append((root, f"cannot read: {e.strerror or e}"))
            continue
        if not stat.S_ISDIR(st.st_mode) and os.path.islink(root) and not inside(os.path.realpath(root), trees):
            out.skipped.append((root, OUT_OF_TREE))  # pre-commit names a PR's `run.sh -> /etc/shadow` too
            continue
        if stat.S_ISDIR(st.st_mode):
            if force_exclude and excluded(os.path.normpath(root), list(exclude or [])):
                continue
            stale, young = True, False
            if memo is None:
                ignored = respect_gitignore and rules.ignored(root, True)
            else:  # the answer of the last walk while no rule above the root changed
                above, young = _rules_above(root, rules, memo) if respect_gitignore else ("", False)
                rec = memo.old_roots.get(root)
                stale = not (type(rec) is list and len(rec) == 2 and rec[0] == above and type(rec[1]) is bool)
                ignored = (respect_gitignore and rules.ignored(root, True)) if stale else rec[1]
                if not young:
                    memo.new_roots[root] = [above, ignored]
            if ignored:
                out.skipped.append((root, "ignored by git (.gitignore or .git/info/exclude)"))
                continue
            _walk(root, excl, respect_gitignore, out, seen, rules, listings, memo, stale, young,
                  frozenset(listed))
        elif stat.S_ISREG(st.st_mode):
            if force_exclude and (excluded(os.path.normpath(root), list(exclude or []))
                                  or (respect_gitignore and rules.ignored(root, False))):
                continue
            wanted, lang = chosen(root)
            if wanted:
                out.files.append(Candidate(root, lang, st))
            elif not force_exclude:  # named by hand, not by pre-commit's every text file: say why it was not read
                out.skipped.append((root, "not a format kv4lint reads (its extension names another)"))
        else:
            # Named, so meant to be checked: a file that could not be read (exit 1), never opened (it could block).
            out.errors.append((root, f"cannot read: {_kind(st.st_mode)}, not a regular file; not opened"))
    return out


def _kind(mode: int) -> str:
    return ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else
            "a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode) else
            "a special file")


# ---------------------------------------------------------------------------
# What a walk learned, for the next walk over the same paths (kv4lint.pipeline.cache.FileIndex keeps it)

WALK_FORMAT = 1
_GIT_NAMES = (".git", ".gitignore")


class WalkMemo:
    """What an earlier walk over the same paths with the same excludes learned, directory by directory, and
    what this walk learns for the next one: a second run lists again only the directories that changed, and
    stats the files of the others (issue 37).

    A directory's record holds its ``stat`` signature (modification and change times, inode, device, mode),
    the signature of its ``.gitignore``, which of the names the caller asked about (``listed``: the
    configuration files) and ``.git``/``.gitignore`` it holds, and the walk's result for its entries: the
    subdirectories walked, the files chosen with their language, and the symlinks (decided afresh every walk:
    their targets may change without their directory).  The record is used while

    - the directory's signature is the recorded one: adding, removing or renaming an entry (a file replaced
      by a directory, a new ``.gitignore`` or ``pyproject.toml``) changes its modification time;
    - its ``.gitignore`` is unchanged, and no directory above it (up to the file system's root, and the
      repository's ``info/exclude``) was listed again or had its ``.gitignore`` changed: a changed rule may
      ignore any entry below it;
    - every file it names is still a regular file (each is ``stat``-ed anyway, for the file index).

    git's racy-stat rule, as for the file index: a directory changed within ``racy_s`` before the walk is
    recorded without a signature (listed again next time; its ``.gitignore`` still tells whether the
    directories below keep their records), and nothing below an ignore file changed then is recorded (a change
    within the same timestamp tick would go unseen).  A record of any other shape is ignored.
    """

    def __init__(self, data: object = None, racy_s: float = 2.0):
        self.data = data if isinstance(data, dict) else {}
        self.racy_ns = int(racy_s * 1e9)
        self.started = time.time_ns()
        self.key = ""
        self.old: dict = {}
        self.new: dict[str, list[str]] = {}
        self.old_roots: dict = {}
        self.new_roots: dict[str, list] = {}

    def start(self, key: str) -> None:
        """Use the records of an earlier walk made with ``key`` (the excludes, the ignore switch, ``listed``)."""
        self.key = key
        if self.data.get("key") == key:
            dirs, roots = self.data.get("dirs"), self.data.get("roots")
            self.old = dirs if isinstance(dirs, dict) else {}
            self.old_roots = roots if isinstance(roots, dict) else {}

    def fresh(self, st: os.stat_result) -> bool:
        """Old enough to be trusted (git's racy-stat rule)."""
        return self.started - max(st.st_mtime_ns, st.st_ctime_ns) >= self.racy_ns

    def dump(self) -> dict | None:
        """What to keep for the next walk (None: nothing)."""
        return {"key": self.key, "dirs": self.new, "roots": self.new_roots} if self.new else None


def _dir_sig(st: os.stat_result) -> str:
    return f"{st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino} {st.st_dev} {st.st_mode}"


def _file_sig(path: str, memo: WalkMemo) -> tuple[str, bool]:
    """An ignore file's signature ("-": none) and whether it is too young to be trusted."""
    try:
        st = os.stat(path)
    except OSError:
        return "-", False
    return (f"{st.st_mode} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino} {st.st_dev}",
            not memo.fresh(st))


def _rules_above(root: str, rules: GitIgnore, memo: WalkMemo) -> tuple[str, bool]:
    """The signature of every ignore rule above the walk's ``root`` (its repository's root and its parent's,
    the ``.gitignore`` of each directory up to the file system's root, the repositories' ``info/exclude``),
    and whether one is too young to be trusted."""
    full = os.path.abspath(root)
    parent = os.path.dirname(full)
    tops = [rules.top(full, full), rules.top(parent, parent)]
    parts, racy = list(tops), False
    d = full
    while True:
        up = os.path.dirname(d)
        if up == d:
            break
        d = up
        sig, young = _file_sig(os.path.join(d, ".gitignore"), memo)
        parts.append(sig)
        racy = racy or young
    for top in tops:
        gd = _git_dir(top) if os.path.exists(os.path.join(top, ".git")) else None
        sig, young = _file_sig(os.path.join(gd, "info", "exclude"), memo) if gd else ("-", False)
        parts.append(sig)
        racy = racy or young
    return "\0".join(parts), racy


def _walk(root: str, excl: list[str], respect_gitignore: bool, out: Discovery, seen: set,
          rules: GitIgnore | None = None, listings: dict[str, set[str]] | None = None,
          memo: WalkMemo | None = None, stale: bool = True, young: bool = False,
          listed: frozenset = frozenset()) -> None:
    """Walk ``root``; with ``memo``, reuse the records of the directories that did not change (``stale``: none
    of this root's; ``young``: record none, an ignore rule above it changed just now)."""
    real_root = os.path.realpath(root)
    is_excluded = _Excluder(excl)
    # Names every walk excludes (the defaults, literal names) are one set lookup; the rest one call.
    literal, only_literal = is_excluded.literal, is_excluded.only_literal
    files = out.files
    rules = rules or GitIgnore()
    ignore = _Ignore(root, rules)
    marks_wanted = listed | set(_GIT_NAMES)
    old = memo.old if memo is not None else {}
    stack = [(root, stale, young)]
    seen_files: set[tuple[int, int]] = set()
    linked: list[tuple[str, str | None, tuple[int, int]]] = []  # symlinks to files in the tree: one path per file
    while stack:
        d, stale, young = stack.pop()
        try:
            st = os.stat(d)
        except OSError as e:
            out.errors.append((d, f"cannot read directory: {e.strerror or e}"))
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen:
            continue
        seen.add(key)
        prefix = "" if d == "." else (d if d.endswith(os.sep) else d + os.sep)
        sig = _dir_sig(st) if memo is not None else ""
        rec = None if stale else old.get(d)
        if type(rec) is not list or len(rec) != 4 or not all(type(x) is str for x in rec):
            rec = None
        gi, gi_young = "", False
        if rec is not None and rec[0] == sig:
            if respect_gitignore and ".gitignore" in rec[2].split("/"):
                gi, gi_young = _file_sig(prefix + ".gitignore", memo)
            if gi == rec[1]:
                subdirs = _from_record(d, st, prefix, rec, out, rules, ignore, listings, respect_gitignore,
                                       real_root, seen_files, linked)
                if subdirs is not None:
                    if not (young or gi_young):
                        memo.new[d] = rec
                    stack.extend((s, False, young or gi_young) for s in reversed(subdirs))
                    continue
        # Listed afresh: whatever is below may be ignored differently now.
        try:
            entries = sorted(os.scandir(d), key=_NAME)
        except OSError as e:
            out.errors.append((d, f"cannot read directory: {e.strerror or e}"))
            continue
        subdirs = []
        ignored = None
        names = None
        if entries and (respect_gitignore or listings is not None or memo is not None):
            full, names = os.path.abspath(d), {e.name for e in entries}
            if listings is not None:
                listings[full] = names
            if respect_gitignore:
                ignored = ignore.entries(full, names)
        recorded: list[str] = []  # kind, language, name of each entry the walk keeps: "f"ile, "d"irectory, "l"ink
        whole = True  # every entry could be told: the record may stand for the listing
        for e in entries:
            name = e.name
            if name in literal or (not only_literal and is_excluded(prefix + name, name)):
                continue
            p = prefix + name
            try:
                link = e.is_symlink()
                if link:
                    recorded += ("l", "", name)
                if link and not inside(os.path.realpath(p), [real_root]):
                    out.skipped.append((p, OUT_OF_TREE))
                    continue
                is_dir = e.is_dir()
                is_file = not is_dir and e.is_file()
            except OSError:
                whole = False
                continue
            if ignored is not None and ignored(name, is_dir):
                continue
            if is_dir:
                subdirs.append(p)
                if not link:
                    recorded += ("d", "", name)
            elif is_file:
                wanted, lang = _chosen(p, name)
                if not wanted:
                    continue  # extension says it is something else
                try:
                    fst = e.stat()  # the target's, for a symlink
                except OSError as err:
                    out.errors.append((p, f"cannot read: {err.strerror or err}"))
                    whole = False
                    continue
                # Hard links and symlinks: one path per file.  stat(), not the directory entry's inode:
                # on overlayfs d_ino and st_ino may differ, and two files of different layers share a d_ino.
                if link:
                    linked.append((p, lang, fst))
                else:
                    recorded += ("f", lang or "", name)
                    key = (fst.st_dev, fst.st_ino)
                    if key not in seen_files:
                        seen_files.add(key)
                        files.append(Candidate(p, lang, fst))
        if memo is not None:
            marks = sorted(marks_wanted.intersection(names or ()))
            gi, gi_young = "", False
            if respect_gitignore and ".gitignore" in marks:
                gi, gi_young = _file_sig(prefix + ".gitignore", memo)
            if whole and not (young or gi_young):
                # Changed just now: no signature (the listing is not used next time), but the rules here are
                # known, so that the directories below need not be listed again for it.
                memo.new[d] = [sig if memo.fresh(st) else "", gi, "/".join(marks), "/".join(recorded)]
            # The directories below keep their records unless the rules here changed (or were not known).
            stale = stale or rec is None or rec[1] != gi
        stack.extend((s, stale, young or gi_young) for s in reversed(subdirs))
    # A symlink to a file of the tree is that file: checked (and fixed) once, under its real name.
    for p, lang, fst in linked:
        key = (fst.st_dev, fst.st_ino)
        if key not in seen_files:
            seen_files.add(key)
            out.files.append(Candidate(p, lang, fst))


# Files are stat-ed by name in their directory, opened once (no path to resolve per file), where the system can.
_DIR_FD = os.stat in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")


def _from_record(d: str, st: os.stat_result, prefix: str, rec: list, out: Discovery, rules: GitIgnore,
                 ignore: _Ignore, listings: dict | None, respect_gitignore: bool, real_root: str, seen_files: set,
                 linked: list) -> list[str] | None:
    """The walk of the unchanged directory ``d`` (``st``: its ``stat``) from its record: its files (each
    ``stat``-ed) added to ``out``, its subdirectories returned; None (and nothing added) when a file is no
    longer a regular file or cannot be ``stat``-ed: the directory changed meanwhile, and is listed again."""
    parts = rec[3].split("/") if rec[3] else []
    fd = None
    if _DIR_FD and "f" in parts:
        try:
            fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return None
    try:
        if fd is not None:
            here = os.fstat(fd)
            if (here.st_dev, here.st_ino) != (st.st_dev, st.st_ino):
                return None  # replaced since its stat
        return _record_entries(d, prefix, rec, parts, fd, out, rules, ignore, listings, respect_gitignore,
                               real_root, seen_files, linked)
    finally:
        if fd is not None:
            os.close(fd)


def _record_entries(d: str, prefix: str, rec: list, parts: list[str], fd: int | None, out: Discovery,
                    rules: GitIgnore, ignore: _Ignore, listings: dict | None, respect_gitignore: bool,
                    real_root: str, seen_files: set, linked: list) -> list[str] | None:
    marks = set(rec[2].split("/")) if rec[2] else set()
    full = os.path.abspath(d)
    found: list[Candidate] = []
    subdirs: list[str] = []
    links: list[tuple[str, str | None, os.stat_result]] = []
    skipped: list[tuple[str, str]] = []
    ignored = None
    S_ISREG = stat.S_ISREG
    for i in range(0, len(parts) - 2, 3):
        kind, name = parts[i], parts[i + 2]
        p = prefix + name
        if kind == "f":
            try:
                fst = os.stat(name, dir_fd=fd) if fd is not None else os.stat(p)
            except OSError:
                return None
            if not S_ISREG(fst.st_mode):
                return None
            found.append(Candidate(p, parts[i + 1] or None, fst))
        elif kind == "d":
            subdirs.append(p)
        else:  # a symlink: decided as a walk decides it
            try:
                if not inside(os.path.realpath(p), [real_root]):
                    skipped.append((p, OUT_OF_TREE))
                    continue
                is_dir = os.path.isdir(p)
                is_file = not is_dir and os.path.isfile(p)
            except OSError:
                return None
            if respect_gitignore and ignored is None:
                ignored = ignore.entries(full, marks) or (lambda name, is_dir: False)
            if ignored is not None and ignored(name, is_dir):
                continue
            if is_dir:
                subdirs.append(p)
            elif is_file:
                wanted, lang = chosen(p)
                if wanted:
                    try:
                        links.append((p, lang, os.stat(p)))
                    except OSError:
                        return None
    if listings is not None:
        listings[full] = marks
    rules.listed(full, marks)
    for c in found:
        key = (c.stat.st_dev, c.stat.st_ino)
        if key not in seen_files:
            seen_files.add(key)
            out.files.append(c)
    out.skipped.extend(skipped)
    linked.extend(links)
    return subdirs
