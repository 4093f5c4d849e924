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

import enum
import hashlib
import json
import os
import sys
import time
from importlib.machinery import PathFinder  # loaded at start-up by Python itself

from kv4lint.base import file_error, file_report
from kv4lint.base.record import Record, fields
from kv4lint.base.version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kv4lint.base.model import ScanResult

FORMAT = 3
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
    try:
        with open(entry_path, encoding="utf-8") as f:
            entry = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT:
        return None
    result = decode(entry["result"])
    return result if conforms(result, _records()["ScanResult"][0]) else None


def _store(entry_path: str, result: ScanResult) -> None:
    _write(entry_path, json.dumps({"format": FORMAT, "result": encode(result)}, separators=(",", ":")))


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
        self.reports_intact = False  # the reports are as this code wrote them (their digest): no shape check
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
                    self.reports_intact = entry.get("reports_digest") == _digest(self.old_reports)
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
            fields = dict({k: decode(v) for k, v in rec[3].items()}, path=path, language=rec[1],
                          depends=[p for p, _sig in rec[2]])
            if not self.reports_intact and not _report_conforms(fields):
                return None
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
            fields = {"findings": encode(rep.findings), "launches": rep.launches, "targets": encode(rep.targets)}
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
                and self.new_configs == self.old_configs and (self.reports_intact or not self.new_reports):
            return
        try:
            doc = {"format": FORMAT, "code": code_fingerprint(), "files": self.new}
            if self.reuse_reports:
                doc["reports"] = self.new_reports
                doc["reports_digest"] = _digest(self.new_reports)
            if self.new_walk is not None:
                doc["walk"] = self.new_walk
            if self.new_configs:
                doc["configs"] = self.new_configs
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


def _digest(reports: dict) -> str:
    """A digest of the index's reports as JSON: equal to the recorded one only for reports as kv4lint wrote
    them, i.e. encoded from its own records (a hand-edited or damaged index is checked record by record)."""
    return hashlib.sha256(json.dumps(reports, separators=(",", ":")).encode("utf-8", "surrogatepass")).hexdigest()


def settings_key(settings) -> str | None:
    """A digest of everything in ``settings`` that a report can depend on; None when a report also depends
    on the machine (``--platform auto``)."""
    if settings.platform == "auto":
        return None
    values = {f: getattr(settings, f) for f in fields(settings) if f != "cache_dir"}
    data = json.dumps(values, sort_keys=True, default=repr)
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()


# ---------------------------------------------------------------------------
# JSON for kv4lint's records (only those: decoding builds nothing else): a file's report and errors
# (kv4lint.base.file_report, kv4lint.base.file_error) and the rich model's records (kv4lint.base.model), which
# loads when the first of them is met (a stored report with findings, a parse), not for a run whose files held
# nothing.

_classes: dict[str, tuple[type, tuple[str, ...] | None]] | None = None  # name -> (class, fields; None: an enum)


def _records() -> dict[str, tuple[type, tuple[str, ...] | None]]:
    global _classes
    if _classes is None:
        from kv4lint.base import model

        out: dict[str, tuple[type, tuple[str, ...] | None]] = {}
        for module in (model, file_report, file_error):
            for c in vars(module).values():
                if not isinstance(c, type) or c.__module__ != module.__name__:
                    continue
                if issubclass(c, Record):
                    out[c.__name__] = (c, fields(c))
                elif issubclass(c, enum.Enum):
                    out[c.__name__] = (c, None)
        _classes = out
    return _classes


def _report_conforms(fields: dict) -> bool:
    """Whether ``fields`` are arguments of :class:`kv4lint.base.file_report.FileReport` of the declared types."""
    hints = _hints(file_report.FileReport)
    return all(k in hints and conforms(v, hints[k]) for k, v in fields.items())


_type_hints: dict[type, dict] = {}


def _hints(cls: type) -> dict:
    """A record's fields and their declared types (a Record's from its ``__init__``, a dataclass's own)."""
    hints = _type_hints.get(cls)
    if hints is None:
        import typing

        from kv4lint.base import model

        # file_report names the model's classes for type checkers only: resolve them here (a report's text,
        # kv4lint.base.source.Text, is never stored).
        names = {**vars(model), "Text": object}
        hints = typing.get_type_hints(cls.__init__ if issubclass(cls, Record) else cls, localns=names)
        hints.pop("return", None)
        _type_hints[cls] = hints
    return hints


def conforms(o, hint) -> bool:
    """Whether the decoded ``o`` is of the declared type ``hint``, through lists, tuples, dicts, unions and
    kv4lint's records: an entry that is valid JSON of the wrong shape (an older format, an edit, another
    program's file) is a cache miss, never a crash later in the run."""
    import types
    import typing

    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        return any(conforms(o, a) for a in args)
    if origin is typing.Literal:
        return any(type(o) is type(a) and o == a for a in args)
    if origin in (list, frozenset):
        return type(o) is origin and all(conforms(x, args[0]) for x in o) if args else type(o) is origin
    if origin is tuple:
        if type(o) is not tuple:
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(conforms(x, args[0]) for x in o)
        return not args or (len(o) == len(args) and all(conforms(x, a) for x, a in zip(o, args)))
    if origin is dict:
        return type(o) is dict and (not args or all(conforms(k, args[0]) and conforms(v, args[1])
                                                    for k, v in o.items()))
    if hint is typing.Any or hint is object:
        return True
    if hint is None or hint is type(None):
        return o is None
    if hint is float:
        return type(o) in (int, float)
    if hint is int:
        return type(o) is int
    if not isinstance(hint, type):
        return False
    if not isinstance(o, hint):
        return False
    known = _records().get(hint.__name__)
    if known is None or known[0] is not hint or known[1] is None:
        return True  # str, bool, an enum member
    hints = _hints(hint)
    return all(conforms(getattr(o, f), hints[f]) for f in known[1] if f in hints)


def encode(o):
    if o is None or type(o) in (str, int, float, bool):
        return o
    t = type(o)
    if t is list:
        return [encode(x) for x in o]
    if t is tuple:
        return {"@t": [encode(x) for x in o]}
    if t is frozenset:
        return {"@f": [encode(x) for x in sorted(o)]}
    if t is dict and all(type(k) is str for k in o):
        return {"@d": {k: encode(v) for k, v in o.items()}}
    known = _records().get(t.__name__)
    if known is not None and known[0] is t:
        if known[1] is None:
            return {"@e": t.__name__, "v": o.value}
        return {"@": t.__name__, **{f: encode(getattr(o, f)) for f in known[1]}}
    raise TypeError(f"cannot cache a {t.__name__}")


def decode(o):
    if type(o) is list:
        return [decode(x) for x in o]
    if type(o) is not dict:
        return o
    if "@" in o:
        cls = _records()[o["@"]][0]
        return cls(**{k: decode(v) for k, v in o.items() if k != "@"})
    if "@e" in o:
        return _records()[o["@e"]][0](o["v"])
    if "@t" in o:
        return tuple(decode(x) for x in o["@t"])
    if "@f" in o:
        return frozenset(decode(x) for x in o["@f"])
    return {k: decode(v) for k, v in o["@d"].items()}
