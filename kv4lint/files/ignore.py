"""git's ignore rules, as git applies them: the repository's ``.gitignore`` files (nested ones
too) and ``.git/info/exclude``, for any path, whether a walk meets it or the user names it.

- Patterns follow git's semantics (pathspec's :class:`~pathspec.GitIgnoreSpec`): ``dir/``
  matches directories only, a leading ``/`` anchors a pattern to its file's directory, ``!``
  re-includes, the last matching line of a file wins.
- A ``.gitignore`` deeper in the tree decides before one above it; ``.git/info/exclude``
  decides last (its patterns are relative to the repository's root).
- A path inside an ignored directory is ignored, whatever a ``!`` pattern says (git does not
  look inside an ignored directory).

Outside a git repository, the ``.gitignore`` files from the walk's root down are read (the
rules a repository made from that directory would have).
"""

from __future__ import annotations

import os

from kv4lint.files.regular_file import read_text


def repository_root(directory: str, *, or_project: bool = False,
                    known: dict[str, str | None] | None = None) -> str | None:
    """The nearest directory at or above ``directory`` (absolute) holding ``.git``, or None.

    The one walk up to a repository's root (git's ignore rules, configuration lookup, report paths,
    settings files read from other files, ``--config`` files).  With ``or_project``, outside a git
    repository: the nearest directory holding ``pyproject.toml`` (a project not under git), or None.
    ``known``: the ``.git`` answers of earlier calls, per directory, filled in for every directory
    this call passes, so that a walk over a tree looks at each directory once.
    """
    root = _nearest(directory, ".git", known)
    return _nearest(directory, "pyproject.toml") if root is None and or_project else root


def _nearest(directory: str, marker: str, known: dict[str, str | None] | None = None) -> str | None:
    walked = []
    d = directory
    found = None
    while True:
        if known is not None and d in known:
            found = known[d]
            break
        walked.append(d)
        if os.path.exists(os.path.join(d, marker)):
            found = d
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    if known is not None:
        for w in walked:
            known[w] = found
    return found


def _git_dir(root: str) -> str | None:
    """The repository's git directory: ``.git``, or where a worktree's ``.git`` file points (its
    common directory holds ``info/exclude``)."""
    dot = os.path.join(root, ".git")
    if os.path.isdir(dot):
        return dot

    try:  # never a FIFO or device (kv4lint.files.regular_file)
        line = read_text(dot, 4096, errors="replace").split("\n", 1)[0].strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    gd = line[len("gitdir:"):].strip()
    gd = gd if os.path.isabs(gd) else os.path.normpath(os.path.join(root, gd))
    try:
        common = read_text(os.path.join(gd, "commondir"), 4096, errors="replace").split("\n", 1)[0].strip()
        return common if os.path.isabs(common) else os.path.normpath(os.path.join(gd, common))
    except OSError:
        return gd


MAX_IGNORE_FILE = 1 << 20  # bytes of a .gitignore (or info/exclude) read


def _below(full: str, directory: str) -> str:
    """``full`` relative to ``directory`` (which holds it), with ``/``."""
    rel = full[len(directory.rstrip(os.sep)) + 1:]
    return rel.replace(os.sep, "/") if os.sep != "/" else rel


def _spec(path: str):
    try:  # a .gitignore that is a FIFO or a link to /dev/zero is not read (kv4lint.files.regular_file)
        lines = read_text(path, MAX_IGNORE_FILE, errors="replace")[:MAX_IGNORE_FILE].splitlines()
    except OSError:
        return None
    if not any(ln.strip() and not ln.lstrip().startswith("#") for ln in lines):
        return None
    import pathspec  # here: a tree without ignore files never imports it

    return pathspec.GitIgnoreSpec.from_lines(lines)


class GitIgnore:
    """Answers "does git ignore this path?" for the paths of one run (directories read once)."""

    def __init__(self, roots: dict[str, str | None] | None = None) -> None:
        # directory -> its repository's root (repository_root's ``known``; shared with the configuration's look-up)
        self.roots: dict[str, str | None] = {} if roots is None else roots
        self._specs: dict[str, object] = {}  # directory -> its .gitignore's spec (or None)
        self._chains: dict[tuple[str, str], tuple] = {}  # (directory, top) -> ((dir, spec), ...) deepest first
        self._excludes: dict[str, object] = {}  # repository root -> info/exclude's spec (or None)
        self._dir_ignored: dict[tuple[str, str], bool] = {}

    def top(self, directory: str, fallback: str | None = None) -> str:
        """The directory whose rules hold at ``directory``: its repository's root, else ``fallback``
        (a walk's root), else ``directory`` itself."""
        return repository_root(directory, known=self.roots) or fallback or directory

    def listed(self, directory: str, names) -> None:
        """What a listing of ``directory`` (absolute) already tells, so that nothing is looked up there again:
        whether it holds a ``.gitignore``, and its repository's root (itself when it holds ``.git``, else its
        parent's, when that is known).  A walk lists every directory it enters."""
        if ".gitignore" not in names:
            self._specs.setdefault(directory, None)
        if directory not in self.roots:
            if ".git" in names:
                self.roots[directory] = directory
            else:
                parent = os.path.dirname(directory)
                if parent in self.roots and parent != directory:
                    self.roots[directory] = self.roots[parent]

    def ignored(self, path: str, is_dir: bool, *, walk_root: str | None = None) -> bool:
        """Whether git ignores ``path``: checked from the repository's root down, so an ignored
        directory above ``path`` counts."""
        full = os.path.abspath(path)
        parent = os.path.dirname(full)
        top = self.top(parent, walk_root and os.path.abspath(walk_root))
        if full == top or not full.startswith(top.rstrip(os.sep) + os.sep):
            return False
        return self._ancestor_ignored(parent, top) or self.entry_ignored(full, is_dir, top)

    def _ancestor_ignored(self, directory: str, top: str) -> bool:
        if directory == top or not directory.startswith(top.rstrip(os.sep) + os.sep):
            return False
        key = (directory, top)
        r = self._dir_ignored.get(key)
        if r is None:
            parent = os.path.dirname(directory)
            r = self._ancestor_ignored(parent, top) or self.entry_ignored(directory, True, top)
            self._dir_ignored[key] = r
        return r

    def has_rules(self, directory: str, top: str) -> bool:
        """Whether any rule can ignore an entry of ``directory`` (absolute): a ``.gitignore`` with a
        pattern in it or above it (up to ``top``), or ``top``'s ``info/exclude``."""
        return bool(self._chain(directory, top)) or self._info_exclude(top) is not None

    def entry_ignored(self, full: str, is_dir: bool, top: str) -> bool:
        """Whether git ignores ``full`` (absolute) when the directories above it are not ignored."""
        suffix = "/" if is_dir else ""
        for d, spec in self._chain(os.path.dirname(full), top):
            r = spec.check_file(_below(full, d) + suffix)
            if r.include is not None:
                return r.include
        ex = self._info_exclude(top)
        if ex is not None:
            r = ex.check_file(_below(full, top) + suffix)
            if r.include is not None:
                return r.include
        return False

    def _chain(self, directory: str, top: str) -> tuple:
        key = (directory, top)
        c = self._chains.get(key)
        if c is None:
            if directory not in self._specs:
                self._specs[directory] = _spec(os.path.join(directory, ".gitignore"))
            spec = self._specs[directory]
            above = () if directory == top or not directory.startswith(top.rstrip(os.sep) + os.sep) \
                else self._chain(os.path.dirname(directory), top)
            c = ((directory, spec),) + above if spec is not None else above
            self._chains[key] = c
        return c

    def _info_exclude(self, top: str):
        if top not in self._excludes:
            gd = _git_dir(top) if os.path.exists(os.path.join(top, ".git")) else None
            self._excludes[top] = _spec(os.path.join(gd, "info", "exclude")) if gd else None
        return self._excludes[top]
