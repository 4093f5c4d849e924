"""A cache of what the frontends found in a file (ruff-style), for ``kv4lint check`` and ``fix`` over trees.

Parsing is most of kv4lint's cost on a tree (issue 8: the libcst parse of a
few large candidates outweighs reading every other file).  Frontends read
only the text they are given: a frontend's result depends on the file's
text, its language and the name it was given as (``Launch.path``; ``.rst``
and ``.md`` read differently) -- nothing outside the file, not the current
directory.  So an entry is keyed by a hash of these plus kv4lint's own code
and its parsers' versions.  The files a launch refers to (``--config``) are
read after the cache, on every run (:mod:`kv4lint.pipeline.launch_configs`), and the
rules run afresh every time (settings, pins, the target machine are not part
of the key).

Only files that pass the pre-filter reach the cache (about 1 % of a tree), so
an entry is one small JSON file; nothing is ever unpickled or executed.  Any
problem with the cache (unwritable, corrupt, a result it cannot encode) means
no caching for that file, never an error.
"""

from __future__ import annotations

import builtins
import enum
import hashlib
import json
import os
import sys
import time
from importlib.machinery import PathFinder  # loaded at start-up by Python itself

from kv4lint.base import file_report
from kv4lint.base.process import gc_paused
from kv4lint.base.record import Record, fields
from kv4lint.base.version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kv4lint.base.model import ScanResult

FORMAT = 4  # 4: records as lists of their fields' values, read by their declared types
RACY_S = 2.0  # do not trust a stat signature younger than this

_fingerprint: str | None = None


def default_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "kv4lint", "scan")


# The parsers the frontends use, by their top-level module.
PARSERS = ("libcst", "tree_sitter", "tree_sitter_bash", "ruamel.yaml", "markdown_it")


def code_fingerprint() -> str:
    """kv4lint's version and source files (an editable install changes without a new version) and its
    parsers' installed files: an entry made by other code is never used.

    A parser is known by the ``stat`` of its package's ``__init__`` file (an
    install or upgrade writes it anew), found without importing the parser:
    ``importlib.metadata`` would cost more than a cached run's whole scan.
    """
    global _fingerprint
    if _fingerprint is None:
        h = hashlib.sha256(f"{FORMAT}\0{__version__}\0{sys.version}".encode())
        pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # kv4lint/, above pipeline/
        sources = []  # (path below kv4lint/, path): every run with a cache pays this walk, so it is lean
        for d, dirs, files in os.walk(pkg):
            dirs[:] = [x for x in dirs if x != "__pycache__"]  # pruned as it walks (sorted, it could not be)
            below = d[len(pkg) + 1:]
            sources += ((os.path.join(below, name), os.path.join(d, name)) for name in files
                        if name.endswith((".py", ".json", ".gz")))
        for name, path in sorted(sources):
            st = os.stat(path)
            h.update(f"{name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
        for module in PARSERS:
            try:
                origin = _origin(module)
                st = os.stat(origin)
                h.update(f"{module}={origin}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
            except (ImportError, AttributeError, TypeError, ValueError, OSError):
                h.update(f"{module}=-\0".encode())
        _fingerprint = h.hexdigest()
    return _fingerprint


def _origin(module: str) -> str | None:
    """The file a module would be loaded from, found without importing it or its parent packages
    (``importlib.util.find_spec("ruamel.yaml")`` imports ``ruamel``)."""
    spec, name = None, ""
    for part in module.split("."):
        name = f"{name}.{part}" if name else part
        path = None if spec is None else list(spec.submodule_search_locations or ())
        if spec is not None and not path:
            return None
        spec = PathFinder.find_spec(name, path)
        if spec is None:
            return None
    return spec.origin


def signature(path: str) -> list | None:
    """What ``stat`` says of ``path``, or None when it does not exist."""
    try:
        return _signature(os.stat(path))
    except OSError:
        return None


_SIG = "%d %d %d %d %d %d"  # _signature as FileIndex records it


def _sig_text(st: os.stat_result) -> str:
    """A file's signature as the index records it (:data:`_SIG`)."""
    return _SIG % (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def _signature(st: os.stat_result) -> list:
    """git's test of an unchanged file: mode, size, modification and change times, inode, device."""
    return [st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def _key(path: str, text: str, language: str) -> str:
    h = hashlib.sha256()
    for part in (code_fingerprint(), language, path):
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def cached_scan(directory: str, path: str, text: str, language: str, scan) -> ScanResult:
    """``scan(path, text, language)``, or its result from the cache in ``directory``."""
    try:
        key = _key(path, text, language)
        entry_path = os.path.join(directory, key[:2], key + ".json")
        hit = _load(entry_path)
        if hit is not None:
            return hit
    except Exception:  # noqa: BLE001 - the cache must never stop a run
        return scan(path, text, language)
    result = scan(path, text, language)
    try:
        mark(directory)
        _store(entry_path, result)
    except Exception:  # noqa: BLE001
        pass
    return result


_marked: set[str] = set()
GITIGNORE = "# Written by kv4lint: this folder is its cache; git need not see it.\n*\n"
CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by kv4lint.\n"
                "# For information about cache directory tags see https://bford.info/cachedir/\n")


def mark(directory: str) -> None:
    """Before the first entry: the cache folder ignores itself (a ``.gitignore`` of ``*``, as ruff's
    does) and says it is a cache (``CACHEDIR.TAG``, for backup tools), wherever it is put
    (``--cache-dir .kv4lint_cache`` inside a repository stays out of ``git status``)."""
    if directory in _marked:
        return
    for name, text in ((".gitignore", GITIGNORE), ("CACHEDIR.TAG", CACHEDIR_TAG)):
        p = os.path.join(directory, name)
        if not os.path.exists(p):
            _write(p, text)
    _marked.add(directory)


def _load(entry_path: str) -> ScanResult | None:
    from kv4lint.base.model import ScanResult

    with gc_paused():  # a large file's entry makes objects by the hundred thousand, as its scan would
        try:
            with open(entry_path, encoding="utf-8") as f:
                entry = json.load(f)
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("format") != FORMAT:
            return None
        try:
            return decode(entry.get("result"), ScanResult)
        except Exception:  # noqa: BLE001 - valid JSON of the wrong shape: scanned and stored anew
            return None


def _store(entry_path: str, result: ScanResult) -> None:
    from kv4lint.base.model import ScanResult

    _write(entry_path, json.dumps({"format": FORMAT, "result": encode(result, ScanResult)}, separators=(",", ":")))


def _unchanged(depends) -> bool:
    """Whether every file of ``depends`` ([path, signature] pairs) is as recorded."""
    return all(signature(p) == sig for p, sig in depends)


def _signatures(paths: list[str], now: int) -> list | None:
    """[path, signature] of each of ``paths``; None when one changed just now (maybe again within the
    timestamps' resolution: not to be trusted)."""
    out = []
    for p in dict.fromkeys(paths):
        sig = signature(p)
        if sig is not None and now - max(sig[2], sig[3]) < RACY_S * 1e9:
            return None
        out.append([p, sig])
    return out


def _write(path: str, data: str) -> None:
    """Write ``path`` whole or not at all (a reader never sees half of it, Ctrl-C leaves no temporary file)."""
    from kv4lint.fixes.writer import signals_held  # a cached run over an unchanged tree writes nothing

    with signals_held():
        _write_held(path, data)


def _write_held(path: str, data: str) -> None:
    d = os.path.dirname(path)
    os.makedirs(d, exist_ok=True)
    import tempfile  # here: it imports shutil (bz2, lzma ...), and a run that writes nothing needs none of them

    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ---------------------------------------------------------------------------
# The file index: files a walk found nothing in, by their stat signature


_STORED_FIELDS = ("findings", "launches", "targets")  # what the index keeps of a file's report (besides its path,
# language and the files it read)


class FileIndex:
    """Files of a directory walk and what they held, keyed by their ``stat`` signature.

    A second ``kv4lint check .`` over an unchanged tree need not even read
    the files that held no launch (99 % of a repository): a file whose
    ``stat`` signature (mode, size, modification and change times, inode,
    device: git's test of an unchanged file) and language are those recorded
    is reported as it was, empty.  One index per current directory and set of
    paths walked, in the cache directory; it holds only files whose report was
    empty (no launch, no finding, no error) or that were read and found to be
    of no language kv4lint scans -- results that no setting can change (the
    settings act on launches), and that depend on nothing but the file.  An
    index written by other code (see :func:`code_fingerprint`) is ignored.
    A file changed within ``RACY_S`` before the walk is not recorded.

    With ``reuse_reports`` (``kv4lint check``), the index also holds the whole report of a file that held
    launches, findings or not, with a digest of the settings it was judged with (:func:`settings_key`: each
    file has its own, from the nearest configuration) and the files the report read besides it
    (``--config`` files, the files its settings are sourced from, a model's ``config.json``:
    :mod:`kv4lint.files.depends`) with their signatures: a second run over an unchanged tree then opens no file
    and imports no parser.  Such a record is used only under the same settings, and while every file it read
    is unchanged.
    """

    def __init__(self, directory: str, roots: list[str], *, reuse_reports: bool = False):
        h = hashlib.sha256("\0".join([os.getcwd(), *roots]).encode("utf-8", "surrogatepass")).hexdigest()
        self.path = os.path.join(directory, "index", h[:32] + ".json")
        self.started = time.time_ns()
        self.reuse_reports = reuse_reports
        self.old: dict[str, str] = {}
        self.new: dict[str, str] = {}
        self.old_reports: dict[str, list] = {}
        self.new_reports: dict[str, list] = {}
        self.old_walk: dict | None = None  # what the walk learned (kv4lint.files.discover.WalkMemo), as it was saved
        self.new_walk: dict | None = None
        self.old_configs: dict[str, list] = {}  # configuration files as read: config() and add_config()
        self.new_configs: dict[str, list] = {}
        try:
            with open(self.path, encoding="utf-8") as f:
                entry = json.load(f)
            if isinstance(entry, dict) and entry.get("code") == code_fingerprint() \
                    and isinstance(entry.get("files"), dict):
                self.old = entry["files"]
                if reuse_reports and isinstance(entry.get("reports"), dict):
                    self.old_reports = entry["reports"]
                if isinstance(entry.get("walk"), dict):
                    self.old_walk = entry["walk"]
                if isinstance(entry.get("configs"), dict):
                    self.old_configs = entry["configs"]
        except Exception:  # noqa: BLE001 - the cache must never stop a run
            pass

    # A file's record is one string, its signature and language: "MODE SIZE MTIME CTIME INO DEV LANGUAGE" (an
    # empty language: of none kv4lint scans).  Decoding a string costs a sixth of decoding a list of seven
    # values, and a second run decodes one per file of the tree.
    def known(self, path: str, language: str | None, st: os.stat_result | None) -> str | None | bool:
        """The language recorded for ``path`` when it is unchanged (and was discovered as ``language``);
        ``False`` when it must be read."""
        rec = self.old.get(path)
        if type(rec) is not str or st is None:
            return False
        sig, _, lang = rec.rpartition(" ")
        if sig != _sig_text(st) or (language is not None and lang != language):
            return False
        self.new[path] = rec
        return lang or None

    def add(self, path: str, language: str | None, st: os.stat_result | None) -> None:
        """Record ``path``, found empty (or of no language) as ``language``, when it is old enough."""
        if st is not None and not self._young(st):
            self.new[path] = _sig_text(st) + " " + (language or "")

    def report(self, path: str, language: str | None, st: os.stat_result | None, key: str | None) -> dict | None:
        """The fields of the report recorded for ``path`` (a :class:`kv4lint.base.file_report.FileReport`) when the
        file, its settings (``key``: :func:`settings_key`) and every file the report read are unchanged."""
        rec = self.old_reports.get(path)
        try:
            if rec is None or key is None or st is None or rec[0] != _signature(st) or rec[4] != key:
                return None
            if language is not None and rec[1] != language:
                return None
            if not _unchanged(rec[2]):
                return None
            if rec[3].keys() != set(_STORED_FIELDS):
                return None
            hints = _hints(file_report.FileReport)
            fields = {k: decode(rec[3][k], hints[k]) for k in _STORED_FIELDS}
            fields.update(path=path, language=decode(rec[1], hints["language"]),
                          depends=decode([p for p, _sig in rec[2]], hints["depends"]))
        except Exception:  # noqa: BLE001 - a damaged record: read the file
            return None
        self.new_reports[path] = rec
        return fields

    def add_report(self, rep, st: os.stat_result | None, key: str | None) -> None:
        """Record the report ``rep`` of a file that held launches (no error), judged with the settings
        ``key``, when the file and what it read are old enough."""
        if not self.reuse_reports or key is None or st is None or rep.errors or not rep.scanned:
            return
        if self._young(st):
            return
        depends = _signatures(rep.depends, self.started)
        if depends is None:
            return
        try:
            hints = _hints(file_report.FileReport)
            fields = {k: encode(getattr(rep, k), hints[k]) for k in _STORED_FIELDS}
        except TypeError:
            return
        self.new_reports[rep.path] = [_signature(st), rep.language, depends, fields, key]

    # A configuration file's settings as read (kv4lint.settings.config.read_config), by its signature: a second run
    # over an unchanged tree then parses no TOML (tomllib and what it imports cost ~5 ms, then each file's parse).
    # Its record: [signature, the kv4lint table (None: a pyproject.toml without one), whether it is a pyproject.toml].
    def config(self, path: str, st: os.stat_result) -> tuple[dict | None, bool] | None:
        """The table and kind recorded for the configuration file ``path`` (absolute) when it is unchanged
        (``st``: its ``stat``); None when it must be read."""
        rec = self.old_configs.get(path)
        if type(rec) is not list or len(rec) != 3 or type(rec[2]) is not bool \
                or not (rec[1] is None or type(rec[1]) is dict) \
                or rec[0] != _sig_text(st):
            return None
        self.new_configs[path] = rec
        return rec[1], rec[2]

    def add_config(self, path: str, st: os.stat_result, table: dict | None, is_pyproject: bool) -> None:
        """Record what ``path`` gave when read (``st``: its ``stat`` before the read), when it is old enough and
        the table is plain JSON (TOML's dates are not)."""
        if self._young(st) or not _plain(table):
            return
        self.new_configs[path] = [_sig_text(st), table, is_pyproject]

    def _young(self, st: os.stat_result) -> bool:
        """Whether the file was changed within :data:`RACY_S` of this run's start: its signature is not to be
        trusted (a change within the timestamps' resolution could go unseen)."""
        return self.started - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_S * 1e9

    def save(self) -> None:
        if self.new == self.old and self.new_reports == self.old_reports and self.new_walk == self.old_walk \
                and self.new_configs == self.old_configs:
            return
        try:
            doc = {"format": FORMAT, "code": code_fingerprint(), "files": self.new}
            if self.reuse_reports:
                doc["reports"] = self.new_reports
            if self.new_walk is not None:
                doc["walk"] = self.new_walk
            if self.new_configs:
                doc["configs"] = self.new_configs
            try:
                data = json.dumps(doc, separators=(",", ":"))
            except (TypeError, ValueError):  # a report JSON cannot write (its values are checked when read only)
                doc["reports"] = {p: r for p, r in self.new_reports.items() if _plain(r)}
                data = json.dumps(doc, separators=(",", ":"))
            mark(os.path.dirname(os.path.dirname(self.path)))
            _write(self.path, data)
        except Exception:  # noqa: BLE001
            pass


def _plain(o) -> bool:
    """Whether ``o`` comes back from JSON as it went in: strings, finite numbers, booleans, None, lists and
    tables of them."""
    t = type(o)
    if o is None or t in (str, int, bool):
        return True
    if t is float:
        return o - o == 0  # not inf or nan
    if t is list:
        return all(_plain(x) for x in o)
    return t is dict and all(type(k) is str and _plain(v) for k, v in o.items())


def settings_key(settings) -> str | None:
    """A digest of everything in ``settings`` that a report can depend on; None when a report also depends
    on the machine (``--platform auto``)."""
    if settings.platform == "auto":
        return None
    values = {f: getattr(settings, f) for f in fields(settings) if f != "cache_dir"}
    data = json.dumps(values, sort_keys=True, default=repr)
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()


# ---------------------------------------------------------------------------
# JSON for kv4lint's records, read and written by their declared types: a file's report and errors
# (kv4lint.base.file_report, kv4lint.base.file_error) and the rich model's records (kv4lint.base.model), which
# loads when the first of them is met (a stored report with findings, a parse), not for a run whose files held
# nothing.
#
# A value is written as what its declared type says it is, with no tags: a record as the list of its fields'
# values in order (a span [start, end]), an enum member as its value, a tuple or frozenset as a list, a
# dict[str, X] as an object.  Reading walks the same declared type and checks each value as it builds it, so
# an entry that is valid JSON of the wrong shape (an older format, an edit, another program's file) is a miss,
# never a crash later in the run, and reading builds nothing but the records the declared type names.  Each
# type's reader and writer are made once per process: a 2 MB script's entry holds 180,000 records, and format
# 3's tagged objects, decoded and then checked by walking the annotations per value, cost 2.5 s to read where
# the script's scan takes 1.7 s.


class Miss(ValueError):
    """A stored value is not of its declared type."""


# A declared type -> (write, read).  ``write`` is None where a value is written as it is (a string, a number, None,
# a list or table of them): the reader checks it all the same, and a value JSON cannot write makes the write fail
# (the entry is not stored).
_coders: dict = {}
_making: set = set()


def encode(o, hint):
    """``o`` as JSON data, written as the declared type ``hint``; TypeError when it is not of that type (or of one
    the cache does not store)."""
    write = _coder(hint)[0]
    return o if write is None else write(o)


def decode(o, hint):
    """The value of declared type ``hint`` that :func:`encode` wrote as ``o``; :class:`Miss` (or another error of
    the data's making) when ``o`` is not such a value."""
    return _coder(hint)[1](o)


def _coder(hint):
    coder = _coders.get(hint)
    if coder is None:
        if hint in _making:
            raise TypeError(f"the cache stores no record that holds itself ({hint})")
        _making.add(hint)
        try:
            coder = _coders[hint] = _make_coder(hint)
        finally:
            _making.discard(hint)
    return coder


def _miss(o):
    raise Miss(f"not of its declared type: {type(o).__name__}")


def _no(o, hint):
    raise TypeError(f"cannot cache a {type(o).__name__} as {getattr(hint, '__name__', hint)}")


_UnionType = type(int | None)  # types.UnionType, without importing types
_SCALARS = (str, int, bool)


def _make_coder(hint):
    origin, args = getattr(hint, "__origin__", None), getattr(hint, "__args__", ())
    if type(hint) is _UnionType:
        other = _optional(hint)
        if other is None:
            raise TypeError(f"the cache stores no {hint}")
        write, read = _coder(other)
        return (None if write is None else lambda o: None if o is None else write(o)), \
            (lambda o: None if o is None else read(o))
    if isinstance(hint, type) and "model_name" in vars(hint):  # a stand-in (_AnnotationNames)
        return _later_coder(hint.model_name)
    typing = sys.modules.get("typing")  # a Literal's module, loaded with it (the model imports it)
    if typing is not None and origin is typing.Literal:
        allowed = {(type(a), a) for a in args}
        return None, lambda o: o if (type(o), o) in allowed else _miss(o)
    if origin is list and args:
        write, read = _coder(args[0])
        return (None if write is None else lambda o: [write(x) for x in o] if type(o) is list else _no(o, hint),
                lambda o: [read(x) for x in o] if type(o) is list else _miss(o))
    if origin is frozenset and args:
        write, read = _coder(args[0])
        if write is None:
            write = _same
        return (lambda o: [write(x) for x in sorted(o)] if type(o) is frozenset else _no(o, hint),
                lambda o: frozenset([read(x) for x in o]) if type(o) is list else _miss(o))
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:  # a list, as JSON reads it back
        write, read = _coder(args[0])
        if write is None:
            write = _same
        return (lambda o: [write(x) for x in o] if type(o) is tuple else _no(o, hint),
                lambda o: tuple([read(x) for x in o]) if type(o) is list else _miss(o))
    if origin is tuple and args:
        coders = [_coder(a) for a in args]
        writers, readers, n = [w or _same for w, _ in coders], [r for _, r in coders], len(coders)
        return (lambda o: [w(x) for w, x in zip(writers, o)] if type(o) is tuple and len(o) == n else _no(o, hint),
                lambda o: tuple([r(x) for r, x in zip(readers, o)]) if type(o) is list and len(o) == n
                else _miss(o))
    if origin is dict and args:
        if args[0] is not str:
            raise TypeError(f"the cache stores no {hint}")
        write, read = _coder(args[1])
        return (None if write is None else lambda o: {k: write(v) for k, v in o.items()} if type(o) is dict
                else _no(o, hint),
                lambda o: {k: read(v) for k, v in o.items()} if type(o) is dict else _miss(o))
    if hint is dict:  # a table of no declared shape (a finding's target): JSON's own values only
        return (lambda o: o if type(o) is dict and _plain(o) else _no(o, hint),
                lambda o: o if type(o) is dict else _miss(o))
    if hint in _SCALARS:
        return None, lambda o: o if type(o) is hint else _miss(o)
    if isinstance(hint, type) and hint.__module__ in _STORED:
        if issubclass(hint, enum.Enum):
            return (lambda o: o.value if type(o) is hint else _no(o, hint)), hint
        if issubclass(hint, Record):
            return _record_coder(hint)
    raise TypeError(f"the cache stores no {getattr(hint, '__name__', hint)}")


# The modules whose records and enums the cache stores (their annotations name only each other's).
_STORED = ("kv4lint.base.model", "kv4lint.base.file_report", "kv4lint.base.file_error")


def _same(o):
    return o


def _record_coder(cls):
    """A record as the list of its fields' values (its ``__init__`` takes them in that order).  A field of one of
    JSON's own types (or None) is checked by its type alone, with no call (a 2 MB script's entry holds 120,000
    spans); any other is read by its reader."""
    hints = _hints(cls)
    names = fields(cls)
    n = len(names)
    get = cls._values
    coders = [_coder(hints[f]) for f in names]
    types = [_types(hints[f]) for f in names]
    writes = [(i, w) for i, (w, _) in enumerate(coders) if w is not None]
    plain = [(i, t) for i, t in enumerate(types) if t is not None]
    reads = [(i, r) for i, (_, r) in enumerate(coders) if types[i] is None]

    def write(o):
        if type(o) is not cls:
            return _no(o, cls)
        out = list(get(o))
        for i, w in writes:
            out[i] = w(out[i])
        return out

    def read(o):
        if type(o) is not list or len(o) != n:
            return _miss(o)
        for i, allowed in plain:
            if type(o[i]) not in allowed:
                return _miss(o[i])
        if reads:
            o = list(o)  # not in place: an index keeps the record it read, to write it again
            for i, r in reads:
                o[i] = r(o[i])
        return cls(*o)
    return write, read


def _types(hint) -> tuple | None:
    """The types a value of ``hint`` may be when it is one of JSON's own scalars or None: ``str | None`` ->
    (str, NoneType); None for any other declared type."""
    if hint in _SCALARS:
        return (hint,)
    other = _optional(hint)
    return (other, type(None)) if other in _SCALARS else None


def _optional(hint):
    """``X`` for the declared type ``X | None``; None for any other (the only unions the cache stores)."""
    if type(hint) is not _UnionType:
        return None
    args = hint.__args__
    if len(args) != 2 or type(None) not in args:
        return None
    return args[0] if args[1] is type(None) else args[1]


def _later_coder(name: str):
    """The coder of the model's class ``name``, made when the first value is read or written: a second run's stored
    reports without findings (``None``, ``[]``) then load neither the model nor ``typing``."""
    coder: list = []

    def made():
        if not coder:
            from kv4lint.base import model

            coder.extend(_coder(vars(model)[name]))
        return coder
    return (lambda o: made()[0](o)), (lambda o: made()[1](o))


_type_hints: dict[type, dict] = {}


def _hints(cls: type) -> dict:
    """A record's fields and their declared types, from its ``__init__``'s annotations (strings: ``from __future__
    import annotations``), evaluated with :class:`_AnnotationNames`."""
    hints = _type_hints.get(cls)
    if hints is None:
        names = _AnnotationNames()
        hints = {k: eval(v, {"__builtins__": {}}, names) if type(v) is str else v  # noqa: S307 - kv4lint's own
                 for k, v in cls.__init__.__annotations__.items() if k != "return"}
        _type_hints[cls] = hints
    return hints


class _AnnotationNames(dict):
    """The names in the stored records' annotations: Python's own types, and the model's records -- each a stand-in
    class (:func:`_later_coder`) while the model is not loaded (the file report's fields name it for type checkers
    only, and a report without findings needs none of it)."""

    def __missing__(self, name: str):
        if hasattr(builtins, name):
            return getattr(builtins, name)
        if name == "Text":
            return object  # a report's text (kv4lint.base.source.Text) is never stored
        model = sys.modules.get("kv4lint.base.model")
        if model is None:
            return type(name, (), {"model_name": name})
        return vars(model)[name]
