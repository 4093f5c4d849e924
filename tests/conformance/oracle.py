"""The SGLang oracle: SGLang's own KV4 check functions, executed with small stubs.

For one release, the function bodies are taken from the wheel (see ``wheels``
and ``extract``), compiled and run against a stand-in server-args object. What
SGLang did is recorded as a list of ``Outcome`` records, in order:

* ``error``: the exception SGLang raised (type and message),
* ``warning``: a ``logger.warning`` line (the formatted message),
* ``rewrite``: a ``declare_resolution(...)`` call (the fields it set).

Stubs (the only things not SGLang's own code):
* the server-args object: plain attributes; unset fields read SGLang's default,
  taken from the same wheel's field declarations;
* ``resolving_view``/``resolved_view``: the object itself (its attributes are
  the values the check sees, declarations applied);
* ``declare_resolution``: records a rewrite and applies it to the object;
* ``use_mla_backend``: the test's MLA flag;
* ``is_cuda``/``is_sm100_supported``/... and ``get_platform()``: SGLang's own
  probes on a fake torch (see ``probes``);
* ``logger``: records warnings (info/debug lines are not outcomes).
``attention_backends_of``, ``get_attention_backends`` and
``_resolved_attention_backends`` are SGLang's own, extracted too.
"""

from __future__ import annotations

import ast
import functools
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Callable

from . import extract, probes, wheels

SERVER_ARGS = "sglang/srt/server_args.py"
KV_CACHE_HOOK = "sglang/srt/arg_groups/kv_cache_hook.py"
HELPER_MODULES = (
    "sglang/srt/arg_groups/model_override_base.py",
    "sglang/srt/arg_groups/overrides.py",
    SERVER_ARGS,
)

# Fields a check may read; their defaults are read from the wheel.
FIELDS = (
    "kv_cache_dtype", "attention_backend", "prefill_attention_backend", "decode_attention_backend",
    "enable_unified_memory", "speculative_algorithm", "speculative_ngram_max_bfs_breadth",
    "speculative_draft_attention_backend", "speculative_attention_mode", "disaggregation_mode",
    "enable_hierarchical_cache", "enable_lmcache", "prefill_kv_cache_dequant_dtype",
)


class OracleError(RuntimeError):
    """The oracle itself failed (a stub missing, a field unknown): not an SGLang verdict."""


@dataclass(frozen=True)
class Outcome:
    kind: str  # "error" | "warning" | "rewrite" | "info" (info lines only matter next to a rewrite)
    message: str  # exception/warning text; for a rewrite the preceding warning, if any
    exc_type: str | None = None  # "RuntimeError" | "ValueError" | "AssertionError"
    fields: tuple[tuple[str, Any], ...] = ()  # rewrite: (field, value) pairs
    where: str = ""  # "member:line" of SGLang's statement
    step: str = ""  # the SGLang function


@dataclass
class Verdict:
    outcomes: list[Outcome] = field(default_factory=list)
    args_after: dict[str, Any] = field(default_factory=dict)
    facts_read: frozenset = frozenset()  # platform facts the check read

    @property
    def error(self) -> Outcome | None:
        return next((o for o in self.outcomes if o.kind == "error"), None)


class _Recorder:
    current: list[tuple] | None = None
    step: str = ""  # the resolution step running (set by the simulation)


_REC = _Recorder()


def _caller_where(depth: int = 2) -> str:
    f = sys._getframe(depth)
    return f"{f.f_code.co_filename.split('>/', 1)[-1]}:{f.f_lineno}"


class _Logger:
    def warning(self, msg, *args, **kwargs):
        text = msg % args if args else str(msg)
        _REC.current.append(("warning", text, _caller_where(), _REC.step))

    warn = warning

    def info(self, msg, *args, **kwargs):
        text = msg % args if args else str(msg)
        _REC.current.append(("info", text, _caller_where(), _REC.step))

    def debug(self, *a, **k):
        pass

    def error(self, msg, *args, **kwargs):  # never seen in these checks; fail loudly if it appears
        raise OracleError(f"unexpected logger.error in a KV4 check: {msg % args if args else msg}")

    def isEnabledFor(self, level):
        return True


LOGGER = _Logger()


class FakeArgs:
    """The server-args record as the check sees it."""

    def __init__(self, values: dict[str, Any]):
        self.__dict__.update(values)
        self._resolved_overrides = []

    def __getattr__(self, name):  # only reached for unknown attributes
        raise OracleError(f"the check read field {name!r}, which the conformance oracle does not model")


def _declare_resolution(server_args, source, **fields):
    _REC.current.append(("rewrite", tuple(sorted(fields.items())), _caller_where(), _REC.step, source))
    for k, v in fields.items():
        setattr(server_args, k, v)
    server_args._resolved_overrides.append((source, dict(fields)))


# Names of the platform facts read by the checks run so far (see ``Release.facts_read``).
FACTS_READ: set[str] = set()
_RUN_FACTS: set[str] = set()  # those read by the current run


def _recording(name: str, fn: Callable) -> Callable:
    def probe(*a, **k):
        _RUN_FACTS.add(name)
        return fn(*a, **k)

    return probe


def _identity_view(server_args):
    return server_args


@functools.lru_cache(maxsize=None)
def release(version: str) -> "Release":
    return Release(version)


class Release:
    def __init__(self, version: str):
        self.version = version
        wheels.wheel_path(version)
        self.defaults = self._field_defaults()
        self._base = {k: self.defaults[k] for k in FIELDS if k in self.defaults}
        self._kv4 = self._locate_kv4()
        self._dequant = extract.find_def(version, KV_CACHE_HOOK, "handle_nvfp4_prefill_kv_dequant_dtype")
        self._helpers = self._helper_functions()
        self._fn_cache: dict[tuple, Callable] = {}
        self._probe_fp_cache: dict[tuple, tuple] = {}

    # ---- where the check lives ---------------------------------------------------------
    def _locate_kv4(self) -> tuple[str, ast.FunctionDef, bool]:
        node = extract.find_def(self.version, KV_CACHE_HOOK, "handle_kv4_compatibility")
        if node is not None:
            return KV_CACHE_HOOK, node, False
        node = extract.find_def(self.version, SERVER_ARGS, "_handle_kv4_compatibility", cls="ServerArgs")
        if node is not None:
            return SERVER_ARGS, node, True
        raise OracleError(f"sglang {self.version}: no KV4 check function found")

    @property
    def kv4_step(self) -> str:
        return self._kv4[1].name

    @property
    def kv4_where(self) -> str:
        return f"{self._kv4[0]}::{'ServerArgs.' if self._kv4[2] else ''}{self._kv4[1].name}"

    @property
    def has_dequant(self) -> bool:
        return self._dequant is not None

    def kv4_literals(self) -> set[str]:
        return extract.string_literals(self._kv4[1])

    def kv4_source_segment(self) -> str:
        return ast.unparse(self._kv4[1])

    # ---- defaults and choices ----------------------------------------------------------
    def _field_members(self) -> list[str]:
        ms = [SERVER_ARGS]
        ms += [m for m in wheels.members(self.version) if m.startswith("sglang/srt/arg_groups/fields/")]
        return ms

    def _field_defaults(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for member in self._field_members():
            tree = extract.module_ast(self.version, member)
            if tree is None:
                continue
            for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
                for st in cls.body:
                    if (
                        isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name)
                        and st.target.id in FIELDS and st.value is not None and st.target.id not in out
                    ):
                        try:
                            out[st.target.id] = ast.literal_eval(st.value)
                        except ValueError:
                            pass
        return out

    @functools.cached_property
    def all_defaults(self) -> dict[str, Any]:
        """Every ServerArgs field with a literal default (the simulation reads whatever a step reads)."""
        out: dict[str, Any] = {}
        for member in self._field_members():
            tree = extract.module_ast(self.version, member)
            if tree is None:
                continue
            for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
                if member == SERVER_ARGS and cls.name != "ServerArgs":
                    continue
                for st in cls.body:
                    if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value is not None \
                            and st.target.id not in out:
                        try:
                            out[st.target.id] = ast.literal_eval(st.value)
                        except ValueError:
                            pass
        return out

    @functools.cached_property
    def attention_backend_choices(self) -> list[str]:
        for member in (SERVER_ARGS, "sglang/srt/arg_groups/choices.py"):
            found, value = extract.module_literal(self.version, member, "ATTENTION_BACKEND_CHOICES")
            if found:
                return list(value)
        raise OracleError(f"sglang {self.version}: ATTENTION_BACKEND_CHOICES not found")

    def _choices_of_field(self, name: str) -> list[str] | None:
        """argparse ``choices`` of a field: an add_argument call naming ``--x-y`` or an annotated field."""
        flag = "--" + name.replace("_", "-")
        for member in self._field_members():
            tree = extract.module_ast(self.version, member)
            if tree is None:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                        and node.args[0].value == flag:
                    for kw in node.keywords:
                        if kw.arg == "choices":
                            return list(ast.literal_eval(kw.value))
                if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
                    for sub in ast.walk(node.annotation):
                        if isinstance(sub, ast.keyword) and sub.arg == "choices":
                            return list(ast.literal_eval(sub.value))
        return None

    @functools.cached_property
    def kv_cache_dtype_choices(self) -> list[str]:
        c = self._choices_of_field("kv_cache_dtype")
        if c is None:
            raise OracleError(f"sglang {self.version}: --kv-cache-dtype choices not found")
        return c

    @functools.cached_property
    def prefill_kv_cache_dequant_dtype_choices(self) -> list[str] | None:
        return self._choices_of_field("prefill_kv_cache_dequant_dtype")

    # ---- helpers SGLang's check calls ----------------------------------------------------
    def _helper_functions(self) -> dict[str, Callable]:
        out: dict[str, Callable] = {}
        for member in HELPER_MODULES:
            node = extract.find_def(self.version, member, "attention_backends_of")
            if node is not None:
                out["attention_backends_of"] = extract.compile_defs(self.version, member, [node], {})[
                    "attention_backends_of"]
                break
        return out

    def _stubs(self, machine: tuple[str, str | None], mla: bool) -> dict[str, Any]:
        p = probes.probes(self.version, *machine)
        facts = p.platform_context(record=_RUN_FACTS)
        stubs: dict[str, Any] = {
            "logger": LOGGER,
            "resolving_view": _identity_view,
            "resolved_view": _identity_view,
            "declare_resolution": _declare_resolution,
            "use_mla_backend": lambda server_args: mla,
            "get_platform": lambda: facts,
            "Any": Any,
        }
        for name in ("is_cuda", "is_sm100_supported", "is_sm120_supported", "is_sm90_supported",
                     "is_blackwell", "is_hip"):
            if name in p.ns:
                stubs[name] = _recording(name, p.ns[name])
        stubs.update(self._helpers)
        return stubs

    def _compiled(self, what: str, machine: tuple[str, str | None], mla: bool) -> Callable:
        key = (what, machine, mla)
        fn = self._fn_cache.get(key)
        if fn is not None:
            return fn
        stubs = self._stubs(machine, mla)
        if what == "kv4":
            member, node, is_method = self._kv4
        else:
            member, node, is_method = KV_CACHE_HOOK, self._dequant, False
        ns = extract.compile_defs(self.version, member, [node], stubs,
                                  import_stubs={"sglang.*": types.SimpleNamespace(**stubs)})
        fn = ns[node.name]
        if is_method:
            methods = {node.name: fn, "use_mla_backend": lambda self: mla}
            for mname in ("get_attention_backends", "_resolved_attention_backends"):
                mnode = extract.find_def(self.version, SERVER_ARGS, mname, cls="ServerArgs")
                if mnode is not None:
                    methods[mname] = extract.compile_defs(
                        self.version, SERVER_ARGS, [mnode], stubs,
                        import_stubs={"sglang.*": types.SimpleNamespace(**stubs)})[mname]
            cls = type("ServerArgs", (FakeArgs,), methods)
            fn = (lambda c, name: (lambda obj: getattr(obj, name)()))(cls, node.name)
            fn.cls = cls  # type: ignore[attr-defined]
        self._fn_cache[key] = fn
        return fn

    # ---- running --------------------------------------------------------------------------
    @functools.cached_property
    def _fingerprints(self) -> dict[str, str]:
        """What decides a verdict besides the inputs: the code run (not its line numbers) and the defaults."""
        def dump(nodes):
            return "\n".join(ast.dump(n) for n in nodes if n is not None)

        main = ast.dump(self._kv4[1])
        helpers = [extract.find_def(self.version, SERVER_ARGS, m, cls="ServerArgs")
                   for m in ("get_attention_backends", "_resolved_attention_backends")
                   if self._kv4[2] and f"'{m}'" in main]
        if "attention_backends_of" in main + dump(helpers):
            helpers += [next(filter(None, (extract.find_def(self.version, m, "attention_backends_of")
                                           for m in HELPER_MODULES)), None)]
        base = repr(sorted(self._base.items()))
        return {
            "kv4": dump([self._kv4[1], *helpers]) + base,
            "dequant": dump([self._dequant]) + base,
        }

    def _probe_fingerprint(self, machine) -> tuple:
        p = probes.probes(self.version, *machine)
        return tuple(sorted((k, bool(f())) for k, f in p.ns.items()
                            if k.startswith("is_") and callable(f)))

    def _run(self, what: str, args: dict[str, Any], machine, mla: bool, memo: bool = True) -> Verdict:
        if not memo:
            return self._run_uncached(what, args, machine, mla)
        key = (self._fingerprints[what], self._probe_fp_cache.get(machine) or self._probe_fp(machine), mla,
               tuple(sorted(args.items())))
        hit = _MEMO.get(key)
        if hit is None:
            hit = self._run_uncached(what, args, machine, mla)
            if len(_MEMO) > _MEMO_LIMIT:
                _MEMO.clear()
            _MEMO[key] = hit
        else:
            FACTS_READ.update(hit.facts_read)
        return hit

    def _probe_fp(self, machine) -> tuple:
        fp = self._probe_fingerprint(machine)
        self._probe_fp_cache[machine] = fp
        return fp

    def _run_uncached(self, what: str, args: dict[str, Any], machine, mla: bool) -> Verdict:
        fn = self._compiled(what, machine, mla)
        values = dict(self._base)
        for k in args:
            if k not in self._base:
                raise OracleError(f"field {k!r} has no default in sglang {self.version} (not modelled)")
        values.update(args)
        cls = getattr(fn, "cls", FakeArgs)
        obj = cls(values)
        rec: list[tuple] = []
        _REC.current = rec
        _RUN_FACTS.clear()
        step = self._kv4[1].name if what == "kv4" else self._dequant.name
        err: Outcome | None = None
        try:
            fn(obj)
        except OracleError:
            raise
        except (RuntimeError, ValueError, AssertionError) as e:
            err = Outcome("error", str(e), type(e).__name__, where=_tb_where(e), step=step)
        except Exception as e:  # anything else is a stub problem, not a verdict
            raise OracleError(f"sglang {self.version} {step} raised {type(e).__name__}: {e}") from e
        finally:
            _REC.current = None
        out: list[Outcome] = []
        for r in rec:
            if r[0] in ("warning", "info"):
                out.append(Outcome(r[0], r[1], where=r[2], step=step))
            else:
                out.append(Outcome("rewrite", "", fields=r[1], where=r[2], step=step))
        if err is not None:
            out.append(err)
        FACTS_READ.update(_RUN_FACTS)
        after = {k: obj.__dict__[k] for k in self._base} if what == "dequant" else {}
        facts = frozenset(_RUN_FACTS)
        # identical verdicts are shared (the memo holds hundreds of thousands)
        ikey = (tuple(out), tuple(after.items()), facts)
        v = _INTERN.get(ikey)
        if v is None:
            v = _INTERN[ikey] = Verdict(out, after, facts)
        return v

    def kv4_check(self, args: dict[str, Any], machine: tuple[str, str | None], mla: bool,
                  *, memo: bool = True) -> Verdict:
        """SGLang's verdict. ``memo``: reuse the verdict of an identical check (same code, defaults,
        platform facts and inputs) run for another release; its ``where`` may then name that
        release's line numbers, so pass ``memo=False`` to report a difference."""
        return self._run("kv4", args, machine, mla, memo)

    def prefill_dequant(self, args: dict[str, Any], machine: tuple[str, str | None], *, memo: bool = True) -> Verdict:
        if self._dequant is None:
            return Verdict([], dict(args))
        return self._run("dequant", args, machine, False, memo)


# Verdicts by (code fingerprint, platform facts, MLA, inputs), shared by releases whose check is identical.
_MEMO: dict[tuple, Verdict] = {}
_MEMO_LIMIT = 300_000
_INTERN: dict[tuple, Verdict] = {}


def _tb_where(e: BaseException) -> str:
    tb = e.__traceback__
    where = ""
    while tb is not None:
        fn = tb.tb_frame.f_code.co_filename
        if fn.startswith("<sglang "):
            where = f"{fn.split('>/', 1)[-1]}:{tb.tb_lineno}"
        tb = tb.tb_next
    return where
