"""What every rule code's home module defines: its :class:`Rule` (metadata, docs text, examples) and the
message builder that says a finding of that code in the user's terms."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from kv4lint.base.model import Fix, Severity
from kv4lint.base.record import Frozen, Record
from kv4lint.sglang.options import flag_for

# What every dtype fix's safety adds (a fix removes a refusal, never a choice that works where the launch runs).
WARNING_FIX = (" A warning's fix (SGLang refuses the launch on some of the GPUs or models it can be for, not all) is "
               "always unsafe: it would take away a choice that works on the others. State the GPU (`--gpu`) or "
               "the model's attention to decide.")

# Fields that only exist for FP4 KV caches: a fix to fp8 removes them.
FP4_ONLY_FIELDS = ("prefill_kv_cache_dequant_dtype",)


class Example(Frozen):
    """A launch a rule must report (``fires``) or must not, with the target it is judged against.

    ``launch`` is a shell command as a user writes it; ``target`` the kv4lint options that set the target
    (``("--gpu", "h100")``); ``note`` why the example is there, shown above it. The examples feed ``kv4lint
    explain``, the rule pages and one test that runs every example through the real CLI.
    """

    __slots__ = ("launch", "target", "fires", "note")

    def __init__(self, launch: str, target: tuple[str, ...] = (), fires: bool = True, note: str = "") -> None:
        self._set("launch", launch)
        self._set("target", target)
        self._set("fires", fires)
        self._set("note", note)

    def text(self) -> str:
        """The example as explain and the rule pages show it: the note, the target line, the launch."""
        lines = [f"# {self.note}"] if self.note else []
        target = " ".join(self.target) if self.target else "kv4lint's defaults"
        return "\n".join([*lines, f"# target: {target}", self.launch])


class Context(Record):
    """What a message builder reads: SGLang's event (a :class:`kv4lint.rules.engine.Event`) and the launch's
    arguments (:class:`kv4lint.sglang.options.Args`), target, machine and model it came from; ``label``, the release
    (``"SGLang 0.5.23"``); ``dflag``, the dtype as the launch spells it (``"--kv-cache-dtype nvfp4"`` /
    ``"kv_cache_dtype='nvfp4'"``); ``sglang``, SGLang's message with its exception type; ``field``, the ServerArgs
    field SGLang's event names first; ``fix_dtype``, the dtype kv4lint's fix writes.  Where some candidates refuse
    the launch: where SGLang accepts it, in plain words joined by "or" (``accepted``: "Blackwell or Blackwell
    RTX/GB10"), and the archs that refuse it for this code and token (``refused``), for a message true on all of
    them (``Said.general``)."""

    __slots__ = ("event", "args", "target", "machine", "model", "label", "dflag", "sglang", "field", "fix_dtype",
                 "accepted", "refused")

    def __init__(self, event: Any, args: Any, target: Any, machine: Any, model: Any, label: str, dflag: str,
                 sglang: str, field: str, fix_dtype: str = "fp8_e4m3", accepted: str = "",
                 refused: tuple[str, ...] = ()) -> None:
        self.event = event
        self.args = args
        self.target = target
        self.machine = machine
        self.model = model
        self.label = label
        self.dflag = dflag
        self.sglang = sglang
        self.field = field
        self.fix_dtype = fix_dtype
        self.accepted = accepted
        self.refused = refused

    @property
    def release(self) -> str:
        """The release by name alone (``SGLang 0.5.23``), for the detail's later sentences: the first names how it
        was chosen."""
        return self.label.split(" (", 1)[0]

    @property
    def use_fix(self) -> str:
        """The one fix a dtype finding names: the dtype kv4lint's fix writes."""
        return f"use {self.fix_dtype}"


class Said(Record):
    """What a finding says, in two parts.

    The *headline* (the one-line form: text output, flake8, editors) is ``message`` — the user's flag and value
    and the cause, in the user's terms — then ``advice``, the one fix (``use fp8_e4m3``), within about 100
    characters. The *detail* (``--format full``, JSON/SARIF ``detail``) holds SGLang's own words, the resolution
    steps and the alternatives: ``detail`` is written after SGLang's side of it.
    """

    __slots__ = ("message", "anchor", "advice", "detail", "short", "general", "general_own")

    def __init__(self, message: str, anchor: str = "kv_cache_dtype", advice: str = "", detail: str = "",
                 short: str = "", general: str = "", general_own: bool = True) -> None:
        self.message = message
        self.anchor = anchor
        self.advice = advice  # the one fix, an imperative clause; "" when there is none to name
        self.detail = detail  # sentences for the detail: alternatives, what kv4lint assumed
        self.short = short  # the message in fewer words, for a headline that would pass HEADLINE characters
        # The message true on every candidate that refuses for this code and token, where their own messages
        # differ (one finding per token: "--kv-cache-dtype nvfp4 needs Blackwell", not "needs Hopper" and "needs
        # Blackwell"); ``general_own``: it is this candidate's own cause in fewer words (preferred to one derived
        # from elsewhere).
        self.general = general
        self.general_own = general_own

    def headline(self, before: str = "", after: str = "") -> str:
        """``before`` (a scope: ``refused on sm90 (Hopper):``) + the message + ``after`` (``(on any GPU)``), then
        the advice, joined as clauses."""
        head = " ".join(p for p in (before, self.message, after) if p)
        return join_clauses(head, self.advice)

    def fit(self, before: str = "") -> str:
        """The headline, with the shorter message where the full one would pass :data:`HEADLINE` characters."""
        head = self.headline(before)
        if len(head) > HEADLINE and self.short:
            return join_clauses(" ".join(p for p in (before, self.short) if p), self.advice)
        return head

    def detail_after(self, first: str) -> str:
        """The detail: ``first`` (SGLang's side: its function and words), then this finding's own sentences."""
        return join_sentences(first, self.detail)


HEADLINE = 100  # about this many characters: the longest headline, beyond which a phrase moves to the detail
_END = ".!?"


def join_clauses(*parts: str) -> str:
    """Clauses of one sentence joined with ``; `` — never ``.;``, ``;;`` or a clause without its space; empty
    parts are left out, and a part's own closing period is dropped (``... backend.`` + ``use fp8`` ->
    ``... backend; use fp8``)."""
    out: list[str] = []
    for p in parts:
        p = " ".join(p.split())
        if out:
            out[-1] = out[-1].rstrip(";,. ")
        if p.rstrip(";,. "):
            out.append(p)
    return "; ".join(out).rstrip(";, ")


def join_sentences(*parts: str) -> str:
    """Sentences joined with one space, each ending with its own terminal punctuation (a period added where it
    lacks one; a trailing ``;`` or ``,`` dropped first): never ``..``, ``.;`` or ``) On``."""
    out: list[str] = []
    for p in parts:
        p = " ".join(p.split()).rstrip(";, ")
        if not p:
            continue
        if p[-1] not in _END and not p.endswith(('."', ".'", ".)", ".`")):
            p += "."
        out.append(p)
    return " ".join(out)


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str
    what: str
    why: str
    fix: str
    fix_safety: str
    since: str
    examples: tuple[Example, ...] = ()
    say: Callable[[Context], Said] | None = field(default=None, compare=False, repr=False)
    # The fix a finding of this code offers (its title and edits), or None: only a fix that addresses the cause.
    fix_for: Callable[[Any, str], Fix | None] | None = field(default=None, compare=False, repr=False)

    @property
    def example(self) -> str:
        """The launches that must fire, with their targets (the docs' *Example*)."""
        return "\n\n".join(e.text() for e in self.examples if e.fires)

    @property
    def fixed_example(self) -> str:
        """The launches that must not fire, with their targets (shown under *Fix*)."""
        return "\n\n".join(e.text() for e in self.examples if not e.fires)


def fp8_fix(args, fix_dtype: str) -> Fix:
    """The dtype rewrite (``--kv-cache-dtype fp8_e4m3``), removing the options that exist only for FP4; when the
    dtype is already the fix dtype, only the removal."""
    remove = tuple(f for f in FP4_ONLY_FIELDS if f in args.values)
    dv = args.values.get("kv_cache_dtype")
    keep = dv is not None and dv.known and dv.text == fix_dtype and remove  # only the FP4-only options are wrong
    parts = [] if keep else [f"set {flag_for('kv_cache_dtype')} {fix_dtype}" if args.form == "argv"
                             else f"set kv_cache_dtype={fix_dtype!r}"]
    if remove:
        parts.append("remove " + ", ".join(flag_for(f) if args.form == "argv" else f for f in remove))
    return Fix(" and ".join(parts), {} if keep else {"kv_cache_dtype": fix_dtype}, remove)


def no_fix(args, fix_dtype: str) -> None:
    """No automatic fix: the dtype is not the cause, or the right change is the user's call."""
    return None
