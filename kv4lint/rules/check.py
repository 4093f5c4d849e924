"""From a launch's normalised arguments and a Target to findings.

Runs the engine once per possibility that kv4lint cannot rule out (unknown GPU
arch, unknown model attention, unknown backend values). A candidate target (a GPU
arch and model attention) refuses the launch when every backend value it may
hold fails: refused by every candidate is an error, by some a warning naming
them; ``strict`` also reports a candidate where only some backend values fail.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace

from kv4lint.model import Fix, Severity, Value
from kv4lint.rules.codes import RULES, Context, kv406
from kv4lint.rules.codes.base import FP4_ONLY_FIELDS, HEADLINE, fp8_fix, join_sentences
from kv4lint.rules.engine import (
    BACKEND_FIELDS, DEFAULTS, FP4_NAMES, UNKNOWN, Event, Machine, Outcome, kv4_dtypes, simulate,
)
from kv4lint.rules.phrases import ARCH_NAMES
from kv4lint.sglang.options import Args, table
from kv4lint.sglang.releases import NEWEST_LABEL, release, version_label
from kv4lint.target import ModelInfo, Target

ENUM_ARCHS = ("sm80", "sm90", "sm100", "sm120")
MAX_POSSIBILITIES = 4096


@dataclass
class RuleFinding:
    """A finding before it has a file position: the field (and value) it is about."""

    code: str
    severity: Severity
    message: str
    value: Value | None  # where to report it (None: the launch's entry point)
    field: str | None
    fix: Fix | None = None
    event: Event | None = None
    detail: str = ""  # SGLang's function and the resolution steps (never in the headline)


def _is_fp4_name(d: str | None) -> bool:
    return d is not None and (d in FP4_NAMES or d.lower() in FP4_NAMES)


def _plain(args: Args, open_ended: bool) -> dict:
    """Field -> plain value for the engine; unknown values become UNKNOWN."""
    out: dict = {}
    for name, v in args.values.items():
        out[name] = v.text if v.known else UNKNOWN
    if open_ended and all(f not in out for f in BACKEND_FIELDS):
        # "$@" or **kwargs may set a backend: the default cannot be assumed.
        out["attention_backend"] = UNKNOWN
    for f in ("enable_unified_memory", "enable_hierarchical_cache", "enable_lmcache", "enable_deterministic_inference",
              "prefill_only_disable_kv_cache", "is_embedding"):
        if f in out and isinstance(out[f], str):
            out[f] = out[f].strip().lower() in ("true", "1", "yes", "on")
    return out


# ---------------------------------------------------------------------------


def check(args: Args, target: Target, *, fix_dtype: str = "fp8_e4m3", strict: bool | None = None) -> list[RuleFinding]:
    strict = target.strict if strict is None else strict
    dtype_v = args.get("kv_cache_dtype")
    if dtype_v is None or not dtype_v.known:
        # No (known) dtype: only the dequant flag can be wrong on its own.
        if dtype_v is None and "prefill_kv_cache_dequant_dtype" in args.values:
            return _simulated(args, target, fix_dtype, strict)
        return []
    found = _dtype_name(args, target, fix_dtype)
    if found:
        return found
    dequant = args.get("prefill_kv_cache_dequant_dtype")
    if dtype_v.text in kv4_dtypes(release(target.sglang_version)) or (
            dequant is not None and dequant.text != "auto"):
        return _simulated(args, target, fix_dtype, strict)
    return []  # not an FP4 launch: SGLang's other checks are not kv4lint's business


def _dtype_name(args: Args, target: Target, fix_dtype: str) -> list[RuleFinding]:
    """KV406: a dtype the release does not accept, or no longer treats as FP4."""
    dv = args.values["kv_cache_dtype"]
    said = kv406.name_refused(dv.text, args.form, target.sglang_version, fp4_name=_is_fp4_name(dv.text),
                              fix_dtype=fix_dtype)
    if said is None:
        return []
    fix = fp8_fix(args, fix_dtype) if _is_fp4_name(dv.text) else None
    return [RuleFinding("KV406", RULES["KV406"].severity, said.headline(), dv, "kv_cache_dtype", fix,
                        detail=said.detail)]


def _possibilities(target: Target, plain: dict, n: int):
    """Machines x models x unknown backend values kv4lint cannot rule out."""
    platforms = [target.platform] if target.platform else ["cuda"]
    machines = []
    for p in platforms:
        if p == "cuda" and not target.arch:
            machines += [Machine("cuda", a) for a in ENUM_ARCHS]
        else:
            machines.append(Machine(p, target.arch if p == "cuda" else None))
    models = [target.model] if target.model.mla is not None else [
        ModelInfo(target.model.architecture, False, target.model.dsa, target.model.source),
        ModelInfo(target.model.architecture, True, target.model.dsa, target.model.source)]
    unknown_fields = [f for f in BACKEND_FIELDS if plain.get(f) is UNKNOWN]
    backend_choices = list(table(target.sglang_version)["--attention-backend"].choices or ()) + [None]
    value_sets = [backend_choices] * len(unknown_fields)
    total = len(machines) * len(models) * max(1, len(backend_choices) ** len(unknown_fields))
    if total > MAX_POSSIBILITIES:
        return None
    out = []
    for m, model in itertools.product(machines, models):
        for combo in itertools.product(*value_sets):
            args = dict(plain)
            args.update(zip(unknown_fields, combo))
            out.append((m, model, args))
    return out


def _simulated(args: Args, target: Target, fix_dtype: str, strict: bool) -> list[RuleFinding]:
    """The verdict over the targets the launch can be for.

    A *candidate* is one machine and model the evidence leaves (every GPU arch of the platform when none is
    stated, MHA and MLA when the model's attention is unknown); each is tried with every value an unknown
    backend may hold, and refuses the launch only when every one of them fails (an unknown value never causes a
    finding on its own). Refused by every candidate: an error. By some: a warning naming them. ``strict`` also
    reports a candidate where only some unknown backend value fails.
    """
    plain = _plain(args, args.open_ended)
    n = release(target.sglang_version)
    poss = _possibilities(target, plain, n)
    if not poss:
        return []
    version = target.sglang_version
    results: list[tuple[Machine, ModelInfo, Outcome, list[Event]]] = []
    for m, model, a in poss:
        out = simulate(version, a, m, model)
        results.append((m, model, out, refusals(version, a, m, model, out)))
    candidates: dict[tuple, list[int]] = {}
    for i, (m, model, _, _) in enumerate(results):
        candidates.setdefault((m, model.mla), []).append(i)
    refused_by = [c for c, idx in candidates.items() if all(results[i][3] for i in idx)]

    found: list[RuleFinding] = []
    if len(refused_by) == len(candidates):
        found += _refused_everywhere(args, target, fix_dtype, poss, results, plain, n)
    elif refused_by:
        found += _refused_somewhere(args, target, fix_dtype, results, candidates, refused_by, n)
    elif strict and any(r[3] for r in results):
        i = next(i for i, r in enumerate(results) if r[3])
        m, model, o, evs = results[i]
        f = _finding(evs[0], args, target, m, model, n, fix_dtype, scope="strict", derived=o.derived)
        found.append(f)
    for f in found:
        f.fix = _verified(f.fix, poss, target)
    # Rewrites that take FP4 away (KV406) and warnings (KV403) that hold wherever SGLang accepts the launch.
    accepted = [results[i] for c, idx in candidates.items() if c not in refused_by for i in idx]
    if accepted and (not refused_by or len(refused_by) < len(candidates)):
        for code in ("KV406", "KV403"):
            hits = [(m, model, next((e for e in o.events if e.code == code), None)) for m, model, o, _ in accepted]
            if all(h[2] is not None for h in hits):
                m, model, ev = hits[0]
                found.append(_finding(ev, args, target, m, model, n, fix_dtype, scope="stated"))
    return found


def _refused_everywhere(args, target, fix_dtype, poss, results, plain, n) -> list[RuleFinding]:
    """Every candidate refuses: an error. The headline is the cause common to the possibilities where the dtype
    is otherwise allowed (not refused for the GPU arch); with unknown backends, the launch as written (no hidden
    backend flag) first; the other candidates' causes go to the detail."""
    failing = list(enumerate(results))
    written = [(i, r) for i, r in failing
               if all(poss[i][2].get(f) is None for f in BACKEND_FIELDS if plain.get(f) is UNKNOWN)]
    pool = written or failing
    pool = [(i, r) for i, r in pool if r[3][0].code != "KV404"] or pool
    _, (m, model, o, evs) = pool[0]
    others = _elsewhere(evs[0], results, target)
    scope = "every" if len({(r[0], r[1].mla) for r in results}) > 1 else "stated"
    found = []
    for k, ev in enumerate(evs):
        if k and not all(any((e.code, e.sglang) == (ev.code, ev.sglang) for e in r[3]) for r in results):
            continue  # a KV4 refusal behind a blocker is reported when it holds for every possibility too
        f = _finding(ev, args, target, m, model, n, fix_dtype, scope=scope, derived=o.derived)
        if k == 0 and others:
            f.detail = join_sentences(f.detail, others)
        found.append(f)
    return found


def _refused_somewhere(args, target, fix_dtype, results, candidates, refused_by, n) -> list[RuleFinding]:
    """Some candidates refuse, others accept: a warning per cause, naming the candidates that refuse."""
    by_cause: dict[tuple, list[tuple]] = {}
    for c in refused_by:
        idx = candidates[c]
        m, model, o, evs = results[idx[0]]
        # A blocker an fp8 KV cache does not change (KV407) on some GPUs only is the launch's own business
        # (`--attention-backend trtllm_mha` refused on Ampere): what the KV cache causes is reported.
        evs = [e for e in evs if e.code != "KV407"]
        if evs:
            by_cause.setdefault((evs[0].code, evs[0].sglang), []).append((m, model, o, evs))
    found = []
    for members in by_cause.values():
        m, model, o, evs = members[0]
        where = [(x[0], x[1]) for x in members]
        f = _finding(evs[0], args, target, m, model, n, fix_dtype, scope="some", derived=o.derived,
                     where=_where_refused(where, target, candidates),
                     decide=_deciding(target, [(mm, md.mla) for mm, md in where], candidates))
        found.append(f)
    return found


def _deciding(target: Target, refused_by: list[tuple], candidates) -> str:
    """The unstated parts of the target that decide whether SGLang refuses: ``GPU (--gpu)``, ``model's attention
    (--model-attention)`` or both."""
    archs = {m.arch for m, _ in candidates}
    refused: dict[bool | None, set] = {}
    for m, mla in refused_by:
        refused.setdefault(mla, set()).add(m.arch)
    out = []
    if not target.arch and any(0 < len(a) < len(archs) for a in refused.values()):
        out.append("GPU (--gpu)")
    if target.model.mla is None and refused.get(True, set()) != refused.get(False, set()):
        out.append("model's attention (--model-attention)")
    return " and ".join(out) or "target"


def _where_refused(members: list[tuple[Machine, ModelInfo]], target: Target, candidates) -> str:
    """Where the candidates ``members`` are: ``on sm80 (Ampere) and sm90 (Hopper)``, ``for an MLA model``,
    ``on sm90 (Hopper) for an MHA model, on any GPU for an MLA model``."""
    archs_of: dict[str | None, list[str]] = {}
    for m, model in members:
        archs_of.setdefault(model.attention if target.model.mla is None else None, []).append(m.arch)
    if len(archs_of) == 2 and len({frozenset(a) for a in archs_of.values()}) == 1:
        archs_of = {None: next(iter(archs_of.values()))}  # the same GPUs for MHA and MLA: the model is no matter
    every_arch = {c[0].arch for c in candidates}
    if len(archs_of) > 1 and len({frozenset(a) for a in archs_of.values()}) == 1:  # the same GPUs for each kind
        archs_of = {None: next(iter(archs_of.values()))}
    parts = []
    for kind, archs in archs_of.items():
        on = "" if target.arch or not archs[0] else (
            "" if kind and set(archs) == every_arch else
            "on " + _and([ARCH_NAMES.get(a, a) for a in dict.fromkeys(archs)]))
        parts.append(" ".join(p for p in (on, f"for an {kind.upper()} model" if kind else "") if p))
    return ", ".join(parts)


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


ATTRIBUTION_DTYPE = "fp8_e4m3"


def refusals(version, a: dict, m: Machine, model: ModelInfo, out: Outcome) -> list[Event]:
    """What to report for one possibility, each event carrying the code of its cause (the attribution rule).

    SGLang's first refusal is replayed with an fp8 KV cache (and the FP4-only options removed): a refusal that
    stays is a blocker the dtype does not cause (KV407); then SGLang is replayed past it, and a KV4 refusal
    behind it is reported as well. Off CUDA, a GPU-arch refusal (KV404) means the platform (KV402).
    """
    ev = out.error
    found: list[Event] = []
    past: set = set()
    fixed = {k: v for k, v in a.items() if k not in FP4_ONLY_FIELDS}
    fixed["kv_cache_dtype"] = ATTRIBUTION_DTYPE
    while ev is not None and len(found) < 4:
        still = simulate(version, fixed, m, model, past=frozenset(past)).error
        if still is not None and (still.step, still.sglang) == (ev.step, ev.sglang):
            found.append(replace(ev, code="KV407"))
            past.add((ev.step, ev.sglang))
            ev = simulate(version, a, m, model, past=frozenset(past)).error
            continue
        code = ev.code or "KV401"
        if code == "KV404" and m.platform != "cuda":
            code = "KV402"
        found.append(replace(ev, code=code))
        break
    return found


def _elsewhere(head: Event, results, target: Target) -> str:
    """The causes of the other possibilities (an unknown GPU arch): secondary text after the headline."""
    if target.arch:
        return ""
    by_cause: dict[tuple, list[str]] = {}
    for m, _model, _o, evs in results:
        if evs and (evs[0].code, evs[0].sglang) != (head.code, head.sglang) and m.arch:
            by_cause.setdefault((evs[0].exc, evs[0].sglang), []).append(m.arch)
    parts = []
    for (exc, text), archs in by_cause.items():
        names = " and ".join(dict.fromkeys(ARCH_NAMES.get(x, x) for x in archs))
        parts.append(f"On {names} SGLang refuses it earlier: {exc + ': ' if exc else ''}{text}")
    return join_sentences(*parts)


def _verified(fix: Fix | None, poss, target: Target) -> Fix | None:
    """Replay the fixed launch: a fix SGLang would still refuse is not safe to apply blindly."""
    if fix is None:
        return None
    for m, model, a in poss:
        fixed = {k: v for k, v in a.items() if k not in fix.remove}
        fixed.update(fix.set)
        err = simulate(target.sglang_version, fixed, m, model).error
        if err is not None:
            why = f"{version_label(target.sglang_version)} would still refuse the result"
            if not target.arch and m.platform == "cuda":
                why += f" on {ARCH_NAMES.get(m.arch, m.arch)}"
            return replace(fix, applicability="unsafe",
                           description=f"{fix.description} ({why}: {err.exc + ': ' if err.exc else ''}{err.sglang})")
    return fix


def _condition(m: Machine, model: ModelInfo, target: Target) -> str:
    parts = []
    if not target.arch and m.platform == "cuda":
        parts.append(f"on {ARCH_NAMES.get(m.arch, m.arch)}")
    if target.model.mla is None:
        parts.append(f"for an {model.attention.upper()} model")
    return " ".join(parts) or "for some backend value"


def _unseen(target: Target, m: Machine) -> list[str]:
    """The parts of the target kv4lint does not know, as the options that state them."""
    out = []
    if not target.arch and m.platform == "cuda":
        out.append("GPU (--gpu)")
    if target.model.mla is None:
        out.append("model's attention (--model-attention)")
    return out


def label(target: Target) -> str:
    """The release a launch is judged by, as messages name it: never an inferred release as if stated."""
    if target.version_inferred and target.sglang_version:
        return f"SGLang {target.sglang_version} (inferred from its options)"
    if target.version_inferred:
        return f"SGLang {NEWEST_LABEL} (no release stated)"
    return version_label(target.sglang_version)


def _finding(ev: Event, args: Args, target: Target, m: Machine, model: ModelInfo, n: int, fix_dtype: str,
             *, scope: str, derived: dict | None = None, where: str = "", decide: str = "") -> RuleFinding:
    """A finding of SGLang's event ``ev`` on candidate (``m``, ``model``). ``scope``: ``stated`` (the one target
    there is), ``every`` (every candidate refuses), ``some`` (the candidates ``where`` refuse: a warning),
    ``strict`` (only some unknown backend value fails)."""
    code = ev.code or "KV401"  # refusals() has coded every refusal by its cause
    dv = args.values.get("kv_cache_dtype")
    dtype = dv.text if dv is not None and dv.known else "auto"
    ctx = Context(ev, args, target, m, model, label=label(target),
                  dflag=f"--kv-cache-dtype {dtype}" if args.form == "argv" else f"kv_cache_dtype={dtype!r}",
                  sglang=f"{ev.exc}: {ev.sglang}" if ev.exc else ev.sglang,
                  field=ev.fields[0] if ev.fields else "kv_cache_dtype", fix_dtype=fix_dtype)
    said = RULES[code].say(ctx)
    severity = RULES[code].severity
    unseen = _unseen(target, m)
    if scope == "some":
        severity = Severity.WARNING
        said.advice = f"set {' and '.join(unseen_flags(decide))} to decide"
        msg = said.headline(f"{where}:")
        if len(msg) > HEADLINE:  # the GPUs by their arch alone, then the shorter cause
            said.detail = join_sentences(f"SGLang refuses the launch {where}, not on the other targets kv4lint "
                                         "considers", said.detail)
            msg = said.fit(f"{re.sub(r' [(][^()]*[)]', '', where)}:")
        if len(msg) > HEADLINE:  # the fewest words: "on sm80 and sm90 for MHA: ...; set --gpu, --model-attention"
            said.advice = f"set {', '.join(unseen_flags(decide))}"
            msg = said.fit(re.sub(r" for an (MHA|MLA) model", r" for \1", re.sub(r" [(][^()]*[)]", "", where)) + ":")
    elif scope == "strict":
        msg = said.fit(f"[strict] may fail {_condition(m, model, target)}:")
    elif scope == "every" and code != "KV402" and unseen:
        every = (["any GPU"] if not target.arch and m.platform == "cuda" else []) + (
            ["MHA and MLA models"] if target.model.mla is None else [])
        msg = said.headline(after=f"({', '.join(every)})")
        if len(msg) > HEADLINE:  # the scope is the lesser part: it moves to the detail
            msg = said.fit()
            said.detail = join_sentences(f"Refused for every target kv4lint considers: {' and '.join(every)}",
                                         said.detail)
    else:
        msg = said.fit()
    fix = RULES[code].fix_for(args, fix_dtype)
    value = args.values.get(said.anchor) or dv
    if value is None:
        value = args.values.get("prefill_kv_cache_dequant_dtype")
    detail = join_sentences(said.detail_after(sglang_detail(ev, ctx.label)), resolution(derived or {}))
    return RuleFinding(code, severity, msg, value, said.anchor, fix, ev, detail=detail)


def unseen_flags(decide: str) -> list[str]:
    """The options that state the parts of the target ``decide`` names (``GPU (--gpu)`` -> ``--gpu``)."""
    flags = [part[part.index("(") + 1:part.index(")")] for part in decide.split(" and ") if "(" in part]
    return flags or ["the target"]


def sglang_detail(ev: Event, label: str) -> str:
    """SGLang's side of a finding, first in its detail (JSON/SARIF/full output): the function and what it raised
    or logged, in SGLang's words."""
    did = f"raises {ev.exc}" if ev.kind == "error" else ("rewrites the launch" if ev.kind == "rewrite" else "warns")
    out = [f"{label}: {ev.step} {did}: {ev.sglang}"]
    if ev.code == "KV407":
        out.append(f"Replayed with --kv-cache-dtype {ATTRIBUTION_DTYPE}, SGLang refuses the launch the same way: "
                   "the KV cache dtype is not the cause")
    return join_sentences(*out)


def resolution(derived: dict) -> str:
    """The resolution steps that set the values SGLang read, last in a finding's detail."""
    trace = [f"{f} set by {step}" for f, step in derived.items()]
    return "Resolution: " + ", ".join(trace) if trace else ""


def is_fp4_launch(args: Args, version: str | None) -> bool:
    v = args.get("kv_cache_dtype")
    return v is not None and v.known and (v.text in kv4_dtypes(release(version)) or _is_fp4_name(v.text))


__all__ = ["RuleFinding", "check", "is_fp4_launch", "DEFAULTS", "FP4_ONLY_FIELDS"]
