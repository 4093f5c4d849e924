"""The SGLang release a repository pins.

:func:`find_sglang_pin` looks, in this order, at:

1. ``requirements*.txt`` at the root and ``requirements/*.txt`` (following
   ``-r``/``-c`` includes),
2. ``pyproject.toml``: ``[project] dependencies`` and optional dependencies,
   ``[dependency-groups]``, ``[tool.poetry.dependencies]`` and Poetry groups,
3. lock files: ``uv.lock``, ``poetry.lock``, ``Pipfile.lock``,
4. container image tags in Dockerfiles and compose files at the root
   (``lmsysorg/sglang:v0.5.23-cu129`` -> 0.5.23),
5. the installed ``sglang`` distribution's metadata (never imported).

Only a pin counts: ``==``/``===`` (and ``~=``, whose lowest release is taken:
it admits later patch releases, and the source says so).  A range such as
``sglang>=0.5.21,<0.6`` is *not* a pin: the lowest admitted release is not the
one that will be installed, so kv4lint does not guess from it.
"""

from __future__ import annotations

import glob
import json
import os
import re
import sys

from kv4lint.base.record import Frozen
from kv4lint.files.regular_file import open_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from packaging.requirements import Requirement

# packaging.requirements (and its markers, tokenizer and tags) costs more to
# import than the rest of a one-file run: imported only for a line that names
# sglang.


def canonicalize_name(name: str) -> str:
    """PEP 503 normalisation (as ``packaging.utils.canonicalize_name``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


PACKAGE = "sglang"
_MAX_BYTES = 20 * 1024 * 1024  # lock files larger than this are not read


class Pin(Frozen):
    """A mention of sglang: its ``version`` (None: named there but not pinned: a range, a URL without a
    version), its ``source`` (``"requirements.txt:3 (sglang[all]==0.5.23)"``) and whether it is ``exact``
    (False for ``~=``: the lowest release of a compatible range)."""

    __slots__ = ("version", "source", "exact")

    def __init__(self, version: str | None, source: str, exact: bool = True):
        self._set("version", version)
        self._set("source", source)
        self._set("exact", exact)


def find_sglang_pin(root: str | None, *, installed: bool = True) -> tuple[str, str] | None:
    """``(version, source)`` of the SGLang release the repository at ``root`` pins, or ``None``."""
    for pin in sglang_pins(root, installed=installed):
        if pin.version is not None:
            return pin.version, pin.source
    return None


def sglang_pins(root: str | None, *, installed: bool = True) -> list[Pin]:
    """Every mention of sglang found, pins and ranges, in the order of :func:`find_sglang_pin`."""
    out: list[Pin] = []
    if root and os.path.isdir(root):
        out += _requirements_files(root)
        out += _pyproject(root)
        out += _uv_lock(root)
        out += _poetry_lock(root)
        out += _pipfile_lock(root)
        out += _images(root)
    if installed:
        out += _installed()
    return out


# ---------------------------------------------------------------------------
# Requirement specifiers


def pin_of(req: Requirement) -> tuple[str | None, bool, str]:
    """The version a requirement pins: ``(version or None, exact, why-not)``."""
    if req.url:
        v = _version_in_url(req.url)
        return (v, True, "") if v else (None, False, "a URL without a release in it")
    specs = list(req.specifier)
    for op in ("===", "=="):
        for sp in specs:
            if sp.operator == op and "*" not in sp.version:
                return sp.version, True, ""
    for sp in specs:
        if sp.operator == "~=":
            return sp.version, False, ""
    if not specs:
        return None, False, "no version"
    return None, False, "a range, not a pin"


# The patterns below are compiled on first use (re's own cache), not at import: most repositories have no
# requirements file or Dockerfile that names sglang, and compiling them all cost 1.2 ms of every start.
_URL_VERSION = [
    (r"/sglang-(\d+(?:\.\d+)+(?:(?:\.?post|rc|a|b)\d+)?)(?:-|\.tar|\.zip)", re.I),  # wheel / sdist
    (r"@v?(\d+\.\d+\.\d+(?:\.?post\d+|rc\d+)?)(?:#|$)", 0),  # git tag
]


def _version_in_url(url: str) -> str | None:
    for rx, flags in _URL_VERSION:
        m = re.search(rx, url, flags)
        if m:
            return m.group(1)
    return None


def _pin_from_text(text: str, source: str) -> Pin | None:
    """A Pin when ``text`` is a requirement on sglang; None otherwise (or not a requirement)."""
    if PACKAGE not in text.lower():
        return None  # cannot name sglang (a name's only spelling variants are its case)
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    if canonicalize_name(req.name) != PACKAGE:
        return None
    version, exact, why = pin_of(req)
    label = f"{source} ({text.strip()})"
    if version is None:
        return Pin(None, f"{label}: {why}")
    if not exact:
        label += f"; ~= admits later releases, judged as {version}"
    return Pin(version, label, exact)


# ---------------------------------------------------------------------------
# requirements*.txt


def _requirements_files(root: str) -> list[Pin]:
    names = sorted(glob.glob(os.path.join(glob.escape(root), "requirements*.txt")))
    names += sorted(glob.glob(os.path.join(glob.escape(root), "requirements", "*.txt")))
    out: list[Pin] = []
    seen: set[str] = set()
    for n in names:
        out += _requirements(n, root, seen)
    return out


_OPTION = r"^(-r|--requirement|-c|--constraint)(?:\s*=\s*|\s+|(?=[^\s-]))(?P<file>\S+)"


def _logical_lines(text: str):
    """(line number, text) with continuation lines joined and comments dropped."""
    buf, start = "", 0
    for i, line in enumerate(text.splitlines(), 1):
        if not buf:
            start = i
        line = re.sub(r"(^|\s)#.*$", "", line)
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        buf += line
        if buf.strip():
            yield start, buf.strip()
        buf = ""
    if buf.strip():
        yield start, buf.strip()


def _requirements(path: str, root: str, seen: set[str]) -> list[Pin]:
    real = os.path.realpath(path)
    if real in seen or not os.path.isfile(path):
        return []
    seen.add(real)
    try:
        with open_file(path, "r", encoding="utf-8", errors="replace") as f:
            text = f.read(_MAX_BYTES)
    except OSError:
        return []
    rel = _rel(path, root)
    out: list[Pin] = []
    for lineno, line in _logical_lines(text):
        m = re.match(_OPTION, line)
        if m:
            inc = m.group("file")
            if "://" not in inc:
                out += _requirements(os.path.join(os.path.dirname(path), inc), root, seen)
            continue
        if line.startswith("-"):  # -e, --index-url, --hash lines ...
            continue
        req = re.split(r"\s+--?[a-z]", line, maxsplit=1)[0]  # drop per-requirement options (--hash=...)
        pin = _pin_from_text(req, f"{rel}:{lineno}")
        if pin is not None:
            out.append(pin)
    return out


def _rel(path: str, root: str) -> str:
    try:
        r = os.path.relpath(path, root)
    except ValueError:
        return path
    return r.replace(os.sep, "/")


# ---------------------------------------------------------------------------
# pyproject.toml


def _load_toml(path: str) -> dict | None:
    import tomllib  # here: 8 ms to import, and most trees have no TOML file with a pin

    try:
        if os.path.getsize(path) > _MAX_BYTES:
            return None
        with open_file(path) as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None


def _pyproject(root: str) -> list[Pin]:
    path = os.path.join(root, "pyproject.toml")
    if not os.path.isfile(path):
        return []
    data = _load_toml(path)
    if not isinstance(data, dict):
        return []
    out: list[Pin] = []

    def reqs(items, where):
        if isinstance(items, list):
            for x in items:
                if isinstance(x, str):
                    p = _pin_from_text(x, f"pyproject.toml {where}")
                    if p is not None:
                        out.append(p)

    project = data.get("project")
    if isinstance(project, dict):
        reqs(project.get("dependencies"), "[project] dependencies")
        opt = project.get("optional-dependencies")
        if isinstance(opt, dict):
            for name, items in opt.items():
                reqs(items, f"[project.optional-dependencies] {name}")
    groups = data.get("dependency-groups")
    if isinstance(groups, dict):
        for name, items in groups.items():
            reqs(items, f"[dependency-groups] {name}")
    poetry = data.get("tool", {}).get("poetry") if isinstance(data.get("tool"), dict) else None
    if isinstance(poetry, dict):
        tables = [("[tool.poetry.dependencies]", poetry.get("dependencies")),
                  ("[tool.poetry.dev-dependencies]", poetry.get("dev-dependencies"))]
        if isinstance(poetry.get("group"), dict):
            for g, body in poetry["group"].items():
                if isinstance(body, dict):
                    tables.append((f"[tool.poetry.group.{g}.dependencies]", body.get("dependencies")))
        for where, table in tables:
            if isinstance(table, dict):
                for name, spec in table.items():
                    if canonicalize_name(name) == PACKAGE:
                        out += _poetry_pin(spec, f"pyproject.toml {where}")
    return out


def _poetry_pin(spec, where: str) -> list[Pin]:
    """Poetry's ``sglang = "0.5.23"`` (exact), ``"==0.5.23"``, ``{version = ...}``, or a list of those."""
    if isinstance(spec, list):
        return [p for s in spec for p in _poetry_pin(s, where)]
    if isinstance(spec, dict):
        if "version" in spec:
            return _poetry_pin(spec["version"], where)
        if "git" in spec and isinstance(spec.get("tag"), str):
            v = spec["tag"].lstrip("v")
            return [Pin(v, f"{where} (sglang git tag {spec['tag']})")] if re.match(r"^\d+\.\d+", v) else []
        return [Pin(None, f"{where}: sglang without a version")]
    if not isinstance(spec, str):
        return []
    s = spec.strip()
    label = f"{where} (sglang = \"{s}\")"
    if re.fullmatch(r"\d+(?:\.\d+)*(?:(?:\.?post|rc|a|b)\d+)?", s):  # Poetry: a bare version is exact
        return [Pin(s, label)]
    if s.startswith(("^", "~")) and not s.startswith("~="):
        return [Pin(None, f"{label}: a range, not a pin")]
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement("sglang" + s)
    except InvalidRequirement:
        return [Pin(None, f"{label}: not a version specifier")]
    version, exact, why = pin_of(req)
    if version is None:
        return [Pin(None, f"{label}: {why}")]
    return [Pin(version, label + ("" if exact else f"; ~= admits later releases, judged as {version}"), exact)]


# ---------------------------------------------------------------------------
# Lock files


def _lock_packages(path: str) -> list[Pin]:
    """``[[package]] name = "sglang" version = "..."`` (uv.lock and poetry.lock share this shape)."""
    if not os.path.isfile(path):
        return []
    try:
        with open_file(path) as f:
            head = f.read(_MAX_BYTES + 1)
    except OSError:
        return []
    if len(head) > _MAX_BYTES or not re.search(rb'name\s*=\s*"sglang"', head):
        return []
    import tomllib

    try:
        data = tomllib.loads(head.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return []
    name = os.path.basename(path)
    out = []
    for pkg in data.get("package", []) if isinstance(data.get("package"), list) else []:
        if isinstance(pkg, dict) and isinstance(pkg.get("name"), str) and canonicalize_name(pkg["name"]) == PACKAGE:
            v = pkg.get("version")
            if isinstance(v, str):
                out.append(Pin(v, f"{name} (sglang {v})"))
    return out


def _uv_lock(root: str) -> list[Pin]:
    return _lock_packages(os.path.join(root, "uv.lock"))


def _poetry_lock(root: str) -> list[Pin]:
    return _lock_packages(os.path.join(root, "poetry.lock"))


def _pipfile_lock(root: str) -> list[Pin]:
    path = os.path.join(root, "Pipfile.lock")
    if not os.path.isfile(path):
        return []
    try:
        if os.path.getsize(path) > _MAX_BYTES:
            return []
        with open_file(path, "r", encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return []
    out = []
    for section in ("default", "develop"):
        deps = data.get(section) if isinstance(data, dict) else None
        if not isinstance(deps, dict):
            continue
        for name, spec in deps.items():
            if canonicalize_name(name) == PACKAGE and isinstance(spec, dict) and isinstance(spec.get("version"), str):
                p = _pin_from_text("sglang" + spec["version"], f"Pipfile.lock [{section}]")
                if p is not None:
                    out.append(p)
    return out


# ---------------------------------------------------------------------------
# Container images


_IMAGE_FILES = ("Dockerfile", "Dockerfile.*", "*.Dockerfile", "*.dockerfile", "Containerfile", "Containerfile.*",
                "docker-compose*.yml", "docker-compose*.yaml", "compose*.yml", "compose*.yaml")
# an image whose repository name is "sglang" (lmsysorg/sglang, a mirror's .../sglang), tagged with a release
IMAGE = (r"(?<![\w./-])(?P<image>(?:[\w.-]+(?::\d+)?/)*sglang):v?(?P<version>\d+\.\d+\.\d+(?:\.?post\d+|rc\d+)?)"
         r"(?P<rest>[\w.-]*)")


def image_version(text: str) -> tuple[str, str] | None:
    """``(version, image:tag)`` for the first SGLang image reference with a release tag in ``text``."""
    m = re.search(IMAGE, text)
    return (m.group("version"), m.group(0)) if m else None


# pip install ... sglang==0.5.23 / "sglang[all]==0.5.23" in a RUN line
_PIP_PIN = (r"(?<![\w.-])sglang(?:\[[\w,\s-]*\])?\s*===?\s*v?(?P<version>\d+\.\d+\.\d+(?:\.?post\d+|rc\d+)?)"
            r"(?![\w.*])")


def _image_file_lines(root: str):
    """(path relative to root, line number, line) of the repository's Dockerfiles and compose files, comments
    left out."""
    files: list[str] = []
    for pat in _IMAGE_FILES:
        files += glob.glob(os.path.join(glob.escape(root), pat))
    for path in sorted(set(files)):
        if not os.path.isfile(path):
            continue
        try:
            with open_file(path, "r", encoding="utf-8", errors="replace") as f:
                text = f.read(_MAX_BYTES)
        except OSError:
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.lstrip().startswith("#"):
                yield _rel(path, root), lineno, line


def _images(root: str) -> list[Pin]:
    out = []
    for where, lineno, line in _image_file_lines(root):
        m = re.search(IMAGE, line)
        if m:
            out.append(Pin(m.group("version"), f"{where}:{lineno} (image {m.group(0)})"))
            continue
        m = re.search(_PIP_PIN, line)
        if m and re.search(r"\b(?:pip3?|uv\s+pip)\b", line):
            out.append(Pin(m.group("version"), f"{where}:{lineno} ({m.group(0)})"))
    return out


# git or source installs of sglang: a build that is not a release (kv4lint/sglang/releases.py: the releases
# kv4lint knows)
_SOURCE_INSTALL = (
    r"git\+\S*sglang\S*"  # pip install git+https://github.com/sgl-project/sglang.git#subdirectory=python
    r"|git\s+clone\s+(?:-\S+\s+)*\S*sgl-project/sglang\S*"  # git clone https://github.com/sgl-project/sglang
    r"|(?:pip3?|uv\s+pip)\s+install\s+(?:-\S+\s+)*-e\s+[\"']?\S*sglang/python\S*")  # pip install -e sglang/python


def sglang_source_installs(root: str | None) -> list[str]:
    """Where the repository installs SGLang from git or a source tree (``path:line (text)``), in file order.

    Requirements naming sglang by a URL without a release, and lines of its Dockerfiles and compose files
    that pip-install sglang from git or clone and install its source.
    """
    if not root or not os.path.isdir(root):
        return []
    out = [p.source for p in _requirements_files(root) + _pyproject(root)
           if p.version is None and "a URL without a release" in p.source]
    for where, lineno, line in _image_file_lines(root):
        m = re.search(_SOURCE_INSTALL, line, re.I)
        if m:
            out.append(f"{where}:{lineno} ({m.group(0)})")
    return out


# ---------------------------------------------------------------------------
# The installed distribution


def _installed() -> list[Pin]:
    if not _maybe_installed():
        return []
    from importlib import metadata

    try:
        dist = metadata.distribution(PACKAGE)  # reads the metadata; does not import sglang
    except metadata.PackageNotFoundError:
        return []
    v = dist.version
    return [Pin(v, f"the installed sglang distribution ({v})")] if v else []


def _maybe_installed() -> bool:
    """Whether a ``sglang-*.dist-info``/``.egg-info`` may be on ``sys.path`` (one listdir per entry).

    Saves importing importlib.metadata (and email, zipfile, csv) where sglang
    is not installed, as in most lint environments; where it may be,
    importlib.metadata decides.
    """
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except NotADirectoryError:
            return True  # a zip file: let importlib.metadata look inside
        except OSError:
            continue  # a missing entry
        for n in names:
            low = n.lower()
            if low.startswith(PACKAGE) and low.endswith((".dist-info", ".egg-info", ".egg-link")):
                return True
    return False
