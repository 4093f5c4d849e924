"""Keep the scanned tree's own modules off ``sys.path``.

kv4lint imports most of what it uses lazily (pathspec while walking, libcst,
tree-sitter, ruamel.yaml, markdown-it, torch for ``--platform auto``, and
stdlib modules such as ``json`` or ``difflib``).  Python resolves each such
import through ``sys.path``, whose first entry is the working directory under
``python -m kv4lint`` and ``python -m flake8`` (and ``PYTHONPATH`` may add
more).  Run inside a repository, a ``pathspec.py`` of that repository would be
executed by kv4lint.  So every entry route runs with those entries removed:

- ``python -m kv4lint`` drops them for good, before anything else is imported
  (:func:`drop_untrusted`, as pip's ``__main__`` drops the working directory);
- the CLI's ``main`` (the console script, pre-commit), the flake8 plugin, the
  libcst codemod and the Python API remove them while kv4lint works and put
  them back afterwards (:func:`trusted_imports`), so that a program that calls
  kv4lint keeps its own ``sys.path``.

An entry is untrusted when it is the working directory (``''`` included) or
lies inside it or inside a path being scanned -- unless it is a directory of
the Python installation kv4lint runs from (the standard library or a
site-packages directory: a virtual environment inside the repository is the
installation, not the scanned code).  kv4lint's own modules are found through
its package, never through ``sys.path``, once ``kv4lint`` is imported.  Child
interpreters started meanwhile (a ``spawn`` process pool) get
``PYTHONSAFEPATH=1``, so that they do not put their working directory first
either.

This module is a leaf, imported before ``sys.path`` is clean: it imports only
``os`` and ``sys``, which every interpreter has loaded before any of kv4lint's
code runs (not even ``__future__``: a ``__future__.py`` in the working
directory would be found first; ``tests/test_isolation.py`` keeps this so for
``kv4lint/__init__.py``, ``kv4lint/__main__.py``, this module and its package's ``__init__.py``).
"""

import os
import sys


def _real(p: str) -> str:
    return os.path.realpath(os.path.abspath(p))


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


def _trusted() -> set:
    """The Python installation's own entries (the standard library, site-packages): kept even inside
    the scanned tree (a virtual environment in the repository is the installation, not scanned code)."""
    site = sys.modules.get("site")  # never imported here: loaded at start-up unless -S
    dirs = [os.path.dirname(os.__file__)] if getattr(os, "__file__", None) else []
    dirs += [os.path.join(d, "lib-dynload") for d in dirs]
    if site is not None:
        dirs += _call(site.getsitepackages, [])
        if getattr(site, "ENABLE_USER_SITE", False) and getattr(site, "USER_SITE", None):
            dirs.append(site.USER_SITE)
    return {_real(d) for d in dirs}


def _call(f, default):
    try:
        return list(f())
    except Exception:  # noqa: BLE001 - an odd site module (virtualenv's old one) has none
        return default


_last: list = [None, None]  # the last (arguments, answer) of untrusted(): the flake8 plugin asks per file
# What untrusted() resolves, once per process: the flake8 plugin asks for every file that may launch, each
# with its own directory, and resolving every entry of sys.path costs a dozen system calls an entry.
_reals: dict = {}  # (working directory, for a relative path; the path) -> its real path
_installation: list = []  # [_trusted()]


def _real_once(p: str, cwd: str | None) -> str:
    key = (None if os.path.isabs(p) else cwd, p)
    real = _reals.get(key)
    if real is None:
        real = _reals[key] = _real(p)
    return real


def untrusted(entries: list, roots: list | tuple = ()) -> list:
    """The entries of ``entries`` (sys.path) that may hold the scanned tree's modules: the working
    directory and anything inside it or inside ``roots``, but not the installation's own directories."""
    cwd = os.getcwd() if _cwd_exists() else None
    key = (tuple(entries), cwd, tuple(roots))
    if _last[0] == key:
        return list(_last[1])
    tops = [_real_once(t, cwd) for t in ([cwd] if cwd else []) + list(roots)]
    if not _installation:
        _installation.append(_trusted())
    trusted = _installation[0]
    out = []
    for e in entries:
        if not isinstance(e, str):
            continue
        real = _real_once(e, cwd) if e or cwd else None
        if real is None or (real not in trusted and any(_under(real, t) for t in tops)):
            out.append(e)
    _last[:] = [key, out]
    return list(out)


def _cwd_exists() -> bool:
    try:
        os.getcwd()
    except OSError:  # the working directory was removed
        return False
    return True


def drop_untrusted(roots: list | tuple = ()) -> list:
    """Remove the untrusted entries from ``sys.path`` for good; returns them.  For processes kv4lint owns."""
    bad = untrusted(sys.path, roots)
    if bad:
        sys.path[:] = [e for e in sys.path if e not in bad]
    os.environ["PYTHONSAFEPATH"] = "1"
    return bad


class trusted_imports:
    """``with trusted_imports(roots):`` -- while the block runs, ``sys.path`` holds no untrusted entry
    (and child interpreters get ``PYTHONSAFEPATH=1``); afterwards the caller's ``sys.path`` and
    environment are back, plus any entry added meanwhile.  (A class: ``contextlib`` may not be
    imported before ``sys.path`` is clean.)"""

    def __init__(self, roots: list | tuple = ()):
        self.roots = roots

    def __enter__(self) -> None:
        self.saved = list(sys.path)
        self.bad = untrusted(self.saved, self.roots)
        self.safe_env = os.environ.get("PYTHONSAFEPATH")
        if self.bad:
            sys.path[:] = [e for e in self.saved if e not in self.bad]
        os.environ["PYTHONSAFEPATH"] = "1"
        self.cleaned = list(sys.path)

    def __exit__(self, *exc) -> None:
        if self.bad:
            added = [e for e in sys.path if e not in self.cleaned and e not in self.saved]
            sys.path[:] = self.saved + added
        if self.safe_env is None:
            os.environ.pop("PYTHONSAFEPATH", None)
        else:
            os.environ["PYTHONSAFEPATH"] = self.safe_env


def path_arguments(argv: list) -> list:
    """The directories a command line names (a named file's own directory): the trees a CLI run reads.

    Read before argparse (whose imports already need the clean ``sys.path``); an
    option's value that happens to be a path (``--config x.toml``) only makes the
    set of untrusted entries larger.  Each directory once (pre-commit names
    thousands of files).
    """
    out: dict = {}
    for a in argv:
        if isinstance(a, str) and a and not a.startswith("-"):
            try:
                if os.path.isdir(a):
                    out[a] = None
                elif os.path.exists(a):
                    out[os.path.dirname(a) or "."] = None
            except (OSError, ValueError):
                pass
    return list(out)
