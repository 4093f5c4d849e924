"""A local cache of real SGLang wheels, read as zip archives.

The conformance test compares kv4lint with SGLang's own code. That code is
read from the published wheels at test time only: nothing of SGLang is copied
into this repository, installed or imported.

Cache: ``$KV4LINT_WHEEL_CACHE`` or ``~/.cache/kv4lint/sglang-wheels``. A missing
wheel is fetched once with ``pip download --no-deps`` (binary only, for the
CPython 3.11 manylinux tags SGLang publishes, so the download works from any
interpreter). Wheels already present in a directory of ``$KV4LINT_WHEEL_MIRRORS``
(a developer's copies; directories separated by ``os.pathsep``) are linked in
instead of downloaded.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

LOCAL_MIRRORS = tuple(Path(d) for d in os.environ.get("KV4LINT_WHEEL_MIRRORS", "").split(os.pathsep) if d)

# SGLang 0.5.11+ ships cp311 manylinux wheels only; 0.5.10 and older are pure.
PIP_TAG_ARGS = (
    "--only-binary=:all:",
    "--python-version", "3.11",
    "--implementation", "cp",
    "--abi", "cp311",
    "--platform", "manylinux_2_34_x86_64",
    "--platform", "any",
)


def cache_dir() -> Path:
    env = os.environ.get("KV4LINT_WHEEL_CACHE")
    path = Path(env) if env else Path.home() / ".cache" / "kv4lint" / "sglang-wheels"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _find(directory: Path, version: str) -> Path | None:
    if not directory.is_dir():
        return None
    for p in sorted(directory.glob(f"sglang-{version}-*.whl")):
        # "sglang-0.5.8-..." must not match "sglang-0.5.8.post1-..."
        if p.name.split("-")[1] == version and p.stat().st_size > 0:
            return p
    return None


class WheelUnavailable(RuntimeError):
    pass


@functools.lru_cache(maxsize=None)
def wheel_path(version: str) -> Path:
    """The cached wheel of ``sglang==version``, downloading it on first use."""
    cache = cache_dir()
    found = _find(cache, version)
    if found:
        return found
    with _locked(cache):  # pytest-xdist workers share the cache
        found = _find(cache, version)
        if found:
            return found
        for mirror in LOCAL_MIRRORS:
            src = _find(mirror, version)
            if src:
                dest = cache / src.name
                try:
                    os.symlink(src, dest)
                except FileExistsError:
                    pass
                except OSError:
                    shutil.copyfile(src, dest)
                return dest
        # Into a directory of its own, then renamed into the cache: the check above runs without the lock,
        # and another worker must never open a wheel pip is still writing.
        with tempfile.TemporaryDirectory(dir=cache, prefix=".download-") as tmp:
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                   "--disable-pip-version-check", *PIP_TAG_ARGS, "-d", tmp, f"sglang=={version}"]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            got = _find(Path(tmp), version)
            if proc.returncode != 0 or not got:
                raise WheelUnavailable(
                    f"could not download sglang=={version} ({' '.join(cmd)}):\n{proc.stdout}\n{proc.stderr}"
                )
            dest = cache / got.name
            os.replace(got, dest)
        return dest


@contextlib.contextmanager
def _locked(cache: Path):
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield
        return
    with open(cache / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@functools.lru_cache(maxsize=None)
def _zip(version: str) -> zipfile.ZipFile:
    return zipfile.ZipFile(wheel_path(version))


@functools.lru_cache(maxsize=None)
def read_source(version: str, member: str) -> str | None:
    """Text of one ``.py`` member of the wheel, or None if the release lacks it."""
    z = _zip(version)
    try:
        return z.read(member).decode("utf-8")
    except KeyError:
        return None


@functools.lru_cache(maxsize=None)
def members(version: str) -> tuple[str, ...]:
    return tuple(n for n in _zip(version).namelist() if n.endswith(".py"))
