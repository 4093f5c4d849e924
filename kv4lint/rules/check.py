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

from kv4lint.base.memo import Memo
from kv4lint.base.model import Fix, Severity, Value
from kv4lint.base.record import Record, replace
from kv4lint.rules.codes import RULES, Context, kv406
from kv4lint.rules.codes.base import FP4_ONLY_FIELDS, HEADLINE, Said, fp8_fix, join_sentences
from kv4lint.rules.engine import (
    BACKEND_FIELDS, DEFAULTS, FP4_NAMES, UNKNOWN, Event, Machine, Outcome, kv4_dtypes, simulate,
)
from kv4lint.sglang.gpus import describe, every, members, representatives
from kv4lint.sglang.options import Args, table
from kv4lint.sglang.releases import NEWEST_LABEL, release, version_label
from kv4lint.target import ModelInfo, Target

MAX_POSSIBILITIES = 4096


class RuleFinding(Record):
    """A finding before it has a file position: the field (and ``value``: where to report it; None: the launch's
    entry point) it is about; ``detail``, SGLang's function and the resolution steps (never in the headline)."""

    __slots__ = ("code", "severity", "message", "value", "field", "fix", "event", "detail")

    def __init__(self, code: str, severity: Severity, message: str, value: Value | None, field: str | None,
                 fix: Fix | None = None, event: Event | None = None, detail: str = "") -> None:
        self.code = code
        self.severity = severity
        self.message = message
        self.value = value
        self.field = field
        self.fix = fix
        self.event = event
        self.detail = detail


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


def check(args: Args, target: Target, *, fix_dtype: str = "fp8_e4m3", strict: bool | None = None,
          keys_only: bool = False) -> list[RuleFinding]:
    """The KV cache rules' findings on the launch. ``keys_only``: for callers that read only each finding's code
    and severity (``rules.parser._since``), what never changes them is skipped: an error's fix is not replayed to
    settle whether it is safe (:func:`_verified`), nor are the words looked for that a warning's candidates
    refuse it in alike (:func:`_refused_somewhere`)."""
    strict = target.strict if strict is None else strict
    dtype_v = args.get("kv_cache_dtype")
    if dtype_v is None or not dtype_v.known:
        # No (known) dtype: only the dequant flag can be wrong on its own.
        if dtype_v is None and "prefill_kv_cache_dequant_dtype" in args.values:
            return _simulated(args, target, fix_dtype, strict, keys_only)
        return []
    found = _dtype_name(args, target, fix_dtype)
    if found:
        return found
    dequant = args.get("prefill_kv_cache_dequant_dtype")
    if dtype_v.text in kv4_dtypes(release(target.sglang_version)) or (
            dequant is not None and dequant.text != "auto"):
        return _simulated(args, target, fix_dtype, strict, keys_only)
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


def _possibilities(target: Target, plain: dict):
    """The target's candidates (:attr:`Target.machines` x :attr:`Target.models`) x the unknown backend values
    kv4lint cannot rule out; None past :data:`MAX_POSSIBILITIES`."""
    machines = [Machine(p, a) for p, a in target.machines]
    models = target.models
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


# The engine's verdict on one possibility, keyed on everything it reads: the release's rules (its number: the
# engine reads nothing else of the version), the field values, the machine and the model. A launch is judged by
# every older release that takes it too (kv4lint.rules.parser._since), again once that is known, and a file
# repeats launches: each reads the verdicts from here. Held for the process (kv4lint.base.memo).
_VERDICTS: Memo = Memo(8192)


def verdict(version, a: dict, m: Machine, model: ModelInfo) -> tuple[Outcome, list[Event]]:
    """:func:`~kv4lint.rules.engine.simulate` and :func:`refusals` on one possibility (shared: never mutate them)."""
    key = (release(version), frozenset(a.items()), m, model)
    hit = _VERDICTS.get(key)
    if hit is None:
        out = simulate(version, a, m, model)
        hit = _VERDICTS.keep(key, (out, refusals(version, a, m, model, out)))
    return hit


class Verdicts:
    """The engine's verdict on every possibility, and the candidates (a machine and a model) they belong to.

    ``results[i]``: (machine, model, outcome, refusals) of possibility ``i``; ``candidates``: (machine, MLA?) ->
    its possibilities; ``refused_by``: the candidates on which every possibility is refused."""

    def __init__(self, version, poss) -> None:
        self.results: list[tuple[Machine, ModelInfo, Outcome, list[Event]]] = []
        for m, model, a in poss:
            self.results.append((m, model) + verdict(version, a, m, model))
        self.candidates: dict[tuple, list[int]] = {}
        for i, (m, model, _, _) in enumerate(self.results):
            self.candidates.setdefault((m, model.mla), []).append(i)
        self.refused_by = [c for c, idx in self.candidates.items() if all(self.results[i][3] for i in idx)]

    def accepted(self) -> list[tuple]:
        return [c for c in self.candidates if c not in self.refused_by]


def _simulated(args: Args, target: Target, fix_dtype: str, strict: bool,
               keys_only: bool = False) -> list[RuleFinding]:
    """The verdict over the targets the launch can be for.

    A *candidate* is one machine and model the evidence leaves (the GPU archs of the target, one of each kind
    SGLang tells apart; MHA and MLA when the model's attention is unknown); each is tried with every value an
    unknown backend may hold, and refuses the launch only when every one of them fails (an unknown value never
    causes a finding on its own). Refused by every candidate: an error, whose fix is safe when the fixed launch is
    accepted on every candidate. By some: one warning per code and token, naming where, whose fix is unsafe (it
    would take away a choice that works elsewhere). SGLang's warnings and FP4-removing rewrites on the candidates
    that accept the launch: a warning, naming where when not on every candidate. ``strict`` also reports a
    candidate where only some unknown backend value fails.
    """
    plain = _plain(args, args.open_ended)
    n = release(target.sglang_version)
    poss = _possibilities(target, plain)
    if not poss:
        return []
    v = Verdicts(target.sglang_version, poss)
    found: list[RuleFinding] = []
    if len(v.refused_by) == len(v.candidates):
        found += _refused_everywhere(args, target, fix_dtype, poss, v, plain, n)
        for f in found:
            if f.severity != Severity.ERROR:
                f.fix = _opt_in(f.fix, target, v)
            elif not keys_only:
                f.fix = _verified(f.fix, poss, target)
    elif v.refused_by:
        found += _refused_somewhere(args, target, fix_dtype, v, n, keys_only)
    elif strict and any(r[3] for r in v.results):
        i = next(i for i, r in enumerate(v.results) if r[3])
        m, model, o, evs = v.results[i]
        found.append(_finding(evs[0], args, target, m, model, n, fix_dtype, scope="strict", derived=o.derived))
    found += _accepted_with_warnings(args, target, fix_dtype, v, n)
    return found


def _accepted_with_warnings(args, target, fix_dtype, v: Verdicts, n) -> list[RuleFinding]:
    """What SGLang warns of (KV403) or rewrites away from FP4 (KV406) on the candidates that accept the launch:
    a warning, naming the candidates when not every candidate (every possibility of it) has it."""
    found = []
    for code in ("KV406", "KV403"):
        hits = []
        for c in v.accepted():
            events = [next((e for e in v.results[i][2].events if e.code == code), None) for i in v.candidates[c]]
            if all(e is not None for e in events):
                m, model = v.results[v.candidates[c][0]][:2]
                hits.append((c, m, model, events[0]))
        if not hits:
            continue
        _, m, model, ev = hits[0]
        if len(hits) == len(v.candidates):
            found.append(_finding(ev, args, target, m, model, n, fix_dtype, scope="stated"))
            continue
        where = [(x[1], x[2]) for x in hits]
        f = _finding(ev, args, target, m, model, n, fix_dtype, scope="some", refusal=False, where=where,
                     decide=_deciding(target, [(mm, md.mla) for mm, md in where], v.candidates))
        f.fix = _opt_in(f.fix, target, v)
        found.append(f)
    return found


def _refused_everywhere(args, target, fix_dtype, poss, v: Verdicts, plain, n) -> list[RuleFinding]:
    """Every candidate refuses: an error. The headline is the cause common to the possibilities where the dtype
    is otherwise allowed (not refused for the GPU arch); with unknown backends, the launch as written (no hidden
    backend flag) first; the other candidates' causes go to the detail. A cause (code and token) that only some
    candidates have, beside one every candidate has, is a warning naming where (the set rule, per code)."""
    results = v.results
    failing = list(enumerate(results))
    written = [(i, r) for i, r in failing
               if all(poss[i][2].get(f) is None for f in BACKEND_FIELDS if plain.get(f) is UNKNOWN)]
    pool = written or failing
    pool = [(i, r) for i, r in pool if r[3][0].code != "KV404"] or pool
    _, (m, model, o, evs) = pool[0]
    others = _elsewhere(evs[0], results, target)
    scope = "every" if len({(r[0], r[1].mla) for r in results}) > 1 else "stated"
    found: dict[tuple, RuleFinding] = {}
    for k, ev in enumerate(evs):
        if k and not all(any((e.code, e.sglang) == (ev.code, ev.sglang) for e in r[3]) for r in results):
            continue  # a KV4 refusal behind a blocker is reported when it holds for every possibility too
        f = _finding(ev, args, target, m, model, n, fix_dtype, scope=scope, derived=o.derived)
        if k == 0 and others:
            f.detail = join_sentences(f.detail, others)
        same = found.get((f.code, f.field))
        if same is not None:  # one finding per code and token: SGLang refusing it again goes to its detail
            same.detail = join_sentences(same.detail, f"Past that, {sglang_detail(ev, label(target))}")
            continue
        found[(f.code, f.field)] = f
    if scope == "every" and len(found) > 1:
        head = next(iter(found))
        where = [c for c in v.candidates if any(_said(e, args, target, c[0], results[v.candidates[c][0]][1],
                                                      fix_dtype)[1].anchor == head[1] and e.code == head[0]
                                                for e in results[v.candidates[c][0]][3])]
        if len(where) < len(v.candidates):  # the head is some candidates' cause; another is every candidate's
            members_ = [results[v.candidates[c][0]][:2] for c in where]
            found[head] = _finding(evs[0], args, target, m, model, n, fix_dtype, scope="some", derived=o.derived,
                                   where=members_, decide=_deciding(target, [(mm, md.mla) for mm, md in members_],
                                                                    v.candidates))
    return list(found.values())


def _refused_somewhere(args, target, fix_dtype, v: Verdicts, n, keys_only: bool = False) -> list[RuleFinding]:
    """Some candidates refuse, others accept: one warning per code and token (the field it is reported at),
    naming every candidate that refuses for it; its fix is opt-in (:func:`_opt_in`). ``keys_only``: the words
    true of every member are not looked for (each warning's code and severity are its group's: :func:`_finding`)."""
    groups: dict[tuple, list[tuple]] = {}
    for c in v.refused_by:
        m, model, o, evs = v.results[v.candidates[c][0]]
        for ev in evs:  # the first refusal, and a KV4 refusal behind a blocker the dtype does not cause
            said = _said(ev, args, target, m, model, fix_dtype)[1]
            groups.setdefault((ev.code, said.anchor), []).append((c, m, model, o, ev, said))
    accepted = [v.results[v.candidates[c][0]][:2] for c in v.accepted()]
    found = []
    for members_ in groups.values():
        _, m, model, o, ev, first = members_[0]
        where = [(x[1], x[2]) for x in members_]
        general = ""
        if not keys_only and any(x[5].message != first.message for x in members_):  # one per token, true of all
            said_all = [_said(x[4], args, target, x[1], x[2], fix_dtype, refused=_expand([w[0].arch for w in where],
                              target), accepted=_where_refused(accepted, target, plain=True, conj="or", bare=True))[1]
                        for x in members_]
            best = next((i for i, x in enumerate(said_all) if x.general and x.general_own), None)
            best = next((i for i, x in enumerate(said_all) if x.general), 0) if best is None else best
            general = said_all[best].general or first.message
            _, m, model, o, ev, _ = members_[best]  # SGLang's words of the candidate whose cause the headline says
        f = _finding(ev, args, target, m, model, n, fix_dtype, scope="some", derived=o.derived, where=where,
                     decide=_deciding(target, [(mm, md.mla) for mm, md in where], v.candidates), general=general,
                     elsewhere=_where_refused(accepted, target, but=False))
        if general:  # each candidate's own cause in the detail
            f.detail = join_sentences(f.detail, *(
                _upper_first(f"{_where_refused([(x[1], x[2])], target)}: {x[5].message}") for x in members_))
        f.fix = _opt_in(f.fix, target, v)
        found.append(f)
    return found


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def _opt_in(fix: Fix | None, target: Target, v: Verdicts) -> Fix | None:
    """A warning's fix: never safe, for SGLang accepts the launch on other candidates (a fix removes a refusal,
    never a choice that works where the launch runs). The description says where it works and how to decide."""
    if fix is None:
        return None
    works = [v.results[v.candidates[c][0]][:2] for c in v.accepted()]
    said = _where_refused(works, target, plain=True) or "on the other targets"
    decide = _deciding(target, [(m, model.mla) for m, model in works], v.candidates)
    parts = " and ".join(p.split(" (", 1)[0] for p in decide.split(" and "))
    return replace(fix, applicability="unsafe",
                   description=f"{fix.description} (unsafe: SGLang accepts the launch as written {said}; "
                               f"state the {parts} to decide)")


def _deciding(target: Target, refused_by: list[tuple], candidates) -> str:
    """The unstated parts of the target that decide whether SGLang refuses: ``GPU (--gpu)``, ``model's attention
    (--model-attention)`` or both."""
    archs = {m.arch for m, _ in candidates}
    refused: dict[bool | None, set] = {}
    for m, mla in refused_by:
        refused.setdefault(mla, set()).add(m.arch)
    out = []
    if not target.gpu_known and any(0 < len(a) < len(archs) for a in refused.values()):
        out.append("GPU (--gpu)")
    if target.model.mla is None and refused.get(True, set()) != refused.get(False, set()):
        out.append("model's attention (--model-attention)")
    return " and ".join(out) or "target"


def _expand(archs, target: Target) -> tuple[str, ...]:
    """The target's archs that the judged ``archs`` stand for (each of its class)."""
    return tuple(a for rep in archs for a in members(rep, target.archs))


def _gpus(reps, target: Target, but: bool = True, **how) -> str:
    """The GPUs the judged archs ``reps`` stand for (:func:`kv4lint.sglang.gpus.describe`); when the target is
    every GPU and these are most of them (``but``), as ``every GPU but`` the others (``every GPU but Blackwell
    (sm10x)``)."""
    named = describe(_expand(dict.fromkeys(reps), target), **how)
    rest = [a for a in representatives(target.archs) if a not in reps]
    if but and every(target.archs) and rest and len(rest) < len(set(reps)):
        other = f"every GPU but {describe(_expand(rest, target), **how)}"
        return other if len(other) < len(named) else named
    return named


def _where_refused(members_: list[tuple[Machine, ModelInfo]], target: Target, *, plain: bool = False,
                   brief: bool = False, conj: str = "and", bare: bool = False, but: bool = True) -> str:
    """Where the candidates ``members_`` are, in plain words first: ``on Ampere/Ada and Hopper (sm8x, sm90)``,
    ``for an MLA model``, ``on Hopper (sm90) for an MHA model, on any GPU for an MLA model``. ``plain``: the
    families alone (``on Ampere/Ada and Hopper``); ``brief``: the archs alone (``on sm8x and sm90``); ``conj``
    joins the last two; ``bare``: the GPUs alone, without ``on`` ("" when the model's attention matters)."""
    archs_of: dict[str | None, list[str]] = {}
    for m, model in members_:
        archs_of.setdefault(model.attention if target.model.mla is None else None, []).append(m.arch)
    if len(archs_of) == 2 and len({frozenset(a) for a in archs_of.values()}) == 1:
        archs_of = {None: next(iter(archs_of.values()))}  # the same GPUs for MHA and MLA: the model is no matter
    every_arch = set(representatives(target.archs))
    if bare:
        known = [a for a in next(iter(archs_of.values()), []) if a]
        return describe(_expand(dict.fromkeys(known), target), names=plain, brief=brief, conj=conj) \
            if len(archs_of) == 1 and known and not target.gpu_known else ""
    parts = []
    for kind, archs in archs_of.items():
        known = [a for a in archs if a]
        if target.gpu_known or not known:
            on = ""
        elif kind and set(known) == every_arch:
            on = "on any GPU" if len(archs_of) > 1 else ""
        else:
            on = "on " + _gpus(known, target, but, names=plain, brief=brief, conj=conj)
        parts.append(" ".join(p for p in (on, f"for an {kind.upper()} model" if kind else "") if p))
    return ", ".join(p for p in parts if p)


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
    if target.gpu_known:
        return ""
    by_cause: dict[tuple, list[str]] = {}
    for m, _model, _o, evs in results:
        if evs and (evs[0].code, evs[0].sglang) != (head.code, head.sglang) and m.arch:
            by_cause.setdefault((evs[0].exc, evs[0].sglang), []).append(m.arch)
    parts = []
    for (exc, text), archs in by_cause.items():
        names = describe(_expand(dict.fromkeys(archs), target))
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
            if not target.gpu_known and m.platform == "cuda":
                why += f" on {describe(members(m.arch, target.archs))}"
            return replace(fix, applicability="unsafe",
                           description=f"{fix.description} ({why}: {err.exc + ': ' if err.exc else ''}{err.sglang})")
    return fix


def _condition(m: Machine, model: ModelInfo, target: Target) -> str:
    parts = []
    if not target.gpu_known and m.platform == "cuda":
        parts.append(f"on {describe(members(m.arch, target.archs))}")
    if target.model.mla is None:
        parts.append(f"for an {model.attention.upper()} model")
    return " ".join(parts) or "for some backend value"


def _unseen(target: Target, m: Machine) -> list[str]:
    """The parts of the target kv4lint does not know, as the options that state them."""
    out = []
    if not target.gpu_known and m.platform == "cuda":
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


# How to state each part of the target that decides a warning (its detail says it).
HOW_TO_STATE = {
    "GPU": 'state the GPU: --gpu h100 (or b200, rtx5090, any GPU name or arch), or gpu = "h100" in [tool.kv4lint]',
    "model's attention": 'state the model\'s attention: --model-attention mla, or model-attention = "mla" in '
                         '[tool.kv4lint]',
}


def how_to_decide(decide: str) -> str:
    """``To decide, state the GPU: --gpu h100 ...``: how to state the parts ``decide`` names."""
    ways = [HOW_TO_STATE[p.split(" (", 1)[0]] for p in decide.split(" and ") if p.split(" (", 1)[0] in HOW_TO_STATE]
    return f"To decide, {'; and '.join(ways)}" if ways else ""


def _said(ev: Event, args: Args, target: Target, m: Machine, model: ModelInfo, fix_dtype: str, *,
          accepted: str = "", refused: tuple[str, ...] = ()) -> tuple[Context, Said]:
    """What the code of SGLang's event ``ev`` says of it on candidate (``m``, ``model``)."""
    dv = args.values.get("kv_cache_dtype")
    dtype = dv.text if dv is not None and dv.known else "auto"
    ctx = Context(ev, args, target, m, model, label=label(target),
                  dflag=f"--kv-cache-dtype {dtype}" if args.form == "argv" else f"kv_cache_dtype={dtype!r}",
                  sglang=f"{ev.exc}: {ev.sglang}" if ev.exc else ev.sglang,
                  field=ev.fields[0] if ev.fields else "kv_cache_dtype", fix_dtype=fix_dtype, accepted=accepted,
                  refused=refused)
    return ctx, RULES[ev.code or "KV401"].say(ctx)  # refusals() has coded every refusal by its cause


def _finding(ev: Event, args: Args, target: Target, m: Machine, model: ModelInfo, n: int, fix_dtype: str,
             *, scope: str, derived: dict | None = None, where: list | None = None, decide: str = "",
             refusal: bool = True, general: str = "", elsewhere: str = "") -> RuleFinding:
    """A finding of SGLang's event ``ev`` on candidate (``m``, ``model``). ``scope``: ``stated`` (the one target
    there is), ``every`` (every candidate refuses), ``some`` (the candidates ``where`` refuse, or warn when not
    ``refusal``: a warning; ``elsewhere``: where SGLang accepts it), ``strict`` (only some unknown backend value
    fails). ``general``: the candidates refuse for this code and token in different words, and this is what holds
    on all of them."""
    code = ev.code or "KV401"
    dv = args.values.get("kv_cache_dtype")
    ctx, said = _said(ev, args, target, m, model, fix_dtype)
    severity = Severity.WARNING if scope == "some" else RULES[code].severity
    unseen = _unseen(target, m)
    since = next(((first, older) for key, first, older in target.verdict_since
                  if key == (code, severity.value)), None)
    lead = f"from SGLang {since[0]}" if since else ""  # the verdict holds from this release on (parser.judge)
    if since:
        said.detail = join_sentences(
            f"SGLang {since[0]} and newer refuse the launch so; the older releases that take its options too "
            f"(SGLang {since[1]}) do not. No release is stated, and the launch is judged by the newest that takes "
            "them. State the release to decide: --sglang-version, or sglang-version in [tool.kv4lint]", said.detail)
    if scope == "some":
        if general:
            said.message, said.short = general, re.sub(r" [(][^()]*[)]", "", general)
        if refusal:  # a refusal on some: how to decide is the advice; a warning keeps its own
            said.advice = f"set {' and '.join(unseen_flags(decide))} to decide"
        verb = "refused " if refusal and "refused" not in said.message else ""
        full = _where_refused(where or [], target)
        said.detail = join_sentences(
            f"SGLang {'refuses' if refusal else 'warns of'} the launch {_where_refused(where or [], target, but=False)}"
            + (f" and accepts it {elsewhere}" if elsewhere else ", not on the other targets kv4lint considers"),
            how_to_decide(decide), said.detail)
        plain = _where_refused(where or [], target, plain=True)
        brief = _where_refused(where or [], target, brief=True)
        fewest = re.sub(r" for an (MHA|MLA) model", r" for \1", brief)
        advice = [said.advice] + ([f"set {', '.join(unseen_flags(decide))}"] if refusal else [])
        # The fullest headline within about HEADLINE characters: the cause in fewer words, the GPUs by their
        # families alone (plain words first), a shorter advice, then the GPUs by their archs.
        for scope_words, said.advice in ((full, advice[0]), (plain, advice[0]), (plain, advice[-1]),
                                         (brief, advice[-1]), (fewest, advice[-1])):
            msg = said.fit(f"{lead + ', ' if lead else ''}{verb}{scope_words}:")
            if len(msg) <= HEADLINE:
                break
        if len(msg) > HEADLINE + 10:  # far too long (a release's lead too): the advice goes, the detail says it
            said.advice = ""
            msg = said.fit(f"{lead + ', ' if lead else ''}{verb}{fewest}:")
    elif scope == "strict":
        msg = said.fit(f"[strict] may fail {_condition(m, model, target)}:")
    elif scope == "every" and code != "KV402" and unseen:
        gpus = (["any GPU" if every(target.archs) else f"{describe(target.archs, names=True)} GPUs"]
                if not target.gpu_known and m.platform == "cuda" else [])
        scope_words = gpus + (["MHA and MLA models"] if target.model.mla is None else [])
        msg = said.headline(f"{lead}:" if lead else "", after=f"({', '.join(scope_words)})")
        if len(msg) > HEADLINE:  # the scope is the lesser part: it moves to the detail
            msg = said.fit(f"{lead}:" if lead else "")
            said.detail = join_sentences(f"Refused for every target kv4lint considers: {' and '.join(scope_words)}",
                                         said.detail)
    else:
        msg = said.fit(f"{lead}:" if lead else "")
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
