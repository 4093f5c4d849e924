"""``kv4lint matrix``: a release's KV4 support table (backends x MHA/MLA x FP4 dtype).

Each cell is the verdict of that release's KV4 check with the backend as
attention, prefill and decode backend on a CUDA Blackwell (SM100) machine,
and a mark where an earlier resolution step refuses it anyway.
"""

from __future__ import annotations

from kv4lint.rules.engine import Machine, kv4_check, kv4_dtypes, simulate
from kv4lint.sglang.releases import FIRST_KV4, NEWEST_LABEL, label as release_label, release
from kv4lint.sglang.options import table
from kv4lint.target import ModelInfo, parse_version


def rows(version: str | None):
    n = release(version)
    dtypes = kv4_dtypes(n)
    backends = [b for b in (table(version)["--attention-backend"].choices or ())]
    out = []
    for b in backends:
        cells = []
        for d in dtypes:
            for mla in (False, True):
                args = {"kv_cache_dtype": d, "attention_backend": b}
                ok = not any(e.kind == "error" for e in kv4_check(version, args, Machine("cuda", "sm100"), mla))
                earlier = None
                if ok:
                    outcomes = [simulate(version, args, Machine("cuda", arch), ModelInfo(mla=mla))
                                for arch in ("sm100", "sm120")]
                    errs = [o.error for o in outcomes if o.error is not None]
                    if len(errs) == len(outcomes):
                        earlier = errs[0]
                cells.append((ok, earlier))
        out.append((b, cells))
    return dtypes, out


def matrix(version: str | None, *, markdown: bool = False) -> str:
    if version:
        parse_version(version)
    n = release(version)
    label = version or NEWEST_LABEL
    if n < FIRST_KV4:
        return f"SGLang {label} has no KV4 check (the first is in {release_label(FIRST_KV4)}).\n"
    dtypes, body = rows(version)
    heads = [f"{d} {att}" for d in dtypes for att in ("MHA", "MLA")]
    notes: dict[str, int] = {}

    def cell(ok, earlier):
        if not ok:
            return "no"
        if earlier is None:
            return "yes"
        key = f"{earlier.step}: {earlier.exc}: {earlier.sglang}"
        k = notes.setdefault(key, len(notes) + 1)
        return f"list only [{k}]"

    table_rows = [[b] + [cell(ok, e) for ok, e in cells] for b, cells in body]
    title = (f"SGLang {label}: FP4 KV cache (--kv-cache-dtype {' / '.join(dtypes)}) by attention backend "
             f"(as --attention-backend; CUDA, SM100)")
    lines = []
    if markdown:
        lines += [f"**{title}**", "", "| backend | " + " | ".join(heads) + " |",
                  "|---|" + "---|" * len(heads)]
        lines += ["| " + " | ".join(r) + " |" for r in table_rows]
    else:
        widths = [max(len(x) for x in col) for col in zip(["backend"] + heads, *table_rows)]
        fmt = "  ".join("{:<%d}" % w for w in widths)
        lines += [title, "", fmt.format("backend", *heads), fmt.format(*("-" * w for w in widths))]
        lines += [fmt.format(*r) for r in table_rows]
    lines.append("")
    lines.append("yes: SGLang's KV4 check accepts it; no: the KV4 check refuses it (KV401).")
    for key, k in notes.items():
        lines.append(f"[{k}] accepted by the KV4 list, but an earlier step refuses it on SM100 and SM120: {key}")
    return "\n".join(lines) + "\n"
