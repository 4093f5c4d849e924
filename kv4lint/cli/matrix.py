"""``kv4lint matrix``: a release's FP4 KV cache support table, computed by ``check`` itself.

Each cell is the verdict of :func:`kv4lint.api.check_argv` (the code path of ``kv4lint check``) on the launch
``--kv-cache-dtype D --attention-backend B`` for an MHA or MLA model, on one GPU arch. ``yes`` means kv4lint
finds nothing; otherwise the cell lists the codes ``check`` reports (see ``kv4lint explain CODE``). By default
the table is shown for SM90, SM100 and SM120; ``--gpu`` picks one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from kv4lint.api import check_argv
from kv4lint.rules.codes import RULES
from kv4lint.rules.engine import kv4_dtypes
from kv4lint.sglang.gpus import normalise_gpu
from kv4lint.sglang.options import table
from kv4lint.sglang.releases import FIRST_KV4, NEWEST_LABEL, label as release_label, parse as parse_version, release

DEFAULT_GPUS = ("sm90", "sm100", "sm120")
MODEL = "model"  # a model path that tells kv4lint nothing: the attention comes from the column


def launch(dtype: str, backend: str) -> list[str]:
    """The launch a cell judges (SGLang CLI arguments)."""
    return ["--model-path", MODEL, "--kv-cache-dtype", dtype, "--attention-backend", backend]


@dataclass(frozen=True)
class Cell:
    gpu: str
    backend: str
    dtype: str
    attention: str  # "mha" / "mla"
    codes: tuple[str, ...]

    @property
    def verdict(self) -> str:
        if not self.codes:
            return "yes"
        return "+".join(self.codes)

    def to_json(self) -> dict:
        return {"gpu": self.gpu, "backend": self.backend, "kv_cache_dtype": self.dtype, "attention": self.attention,
                "verdict": "yes" if not self.codes else "no", "codes": list(self.codes),
                "argv": launch(self.dtype, self.backend)}


def cells(version: str | None, gpus=DEFAULT_GPUS) -> list[Cell]:
    n = release(version)
    out = []
    for gpu in gpus:
        for b in table(version)["--attention-backend"].choices or ():
            for d in kv4_dtypes(n):
                for att in ("mha", "mla"):
                    found = check_argv(launch(d, b), sglang_version=version, gpu=gpu, model_attention=att)
                    out.append(Cell(gpu, b, d, att, tuple(dict.fromkeys(f.code for f in found))))
    return out


def matrix(version: str | None, *, gpus=None, fmt: str = "text") -> str:
    if version:
        parse_version(version)
    gpus = tuple(normalise_gpu(g) for g in gpus) if gpus else DEFAULT_GPUS
    label = version or NEWEST_LABEL
    n = release(version)
    if n < FIRST_KV4:
        if fmt == "json":
            return json.dumps({"sglang_version": label, "gpus": list(gpus), "cells": []}, indent=2) + "\n"
        return f"SGLang {label} has no KV4 check (the first is in {release_label(FIRST_KV4)}).\n"
    all_cells = cells(version, gpus)
    if fmt == "json":
        return json.dumps({"sglang_version": label, "gpus": list(gpus),
                           "cells": [c.to_json() for c in all_cells]}, indent=2) + "\n"
    dtypes = kv4_dtypes(n)
    heads = [f"{d} {att.upper()}" for d in dtypes for att in ("mha", "mla")]
    lines: list[str] = []
    used: set[str] = set()
    for gpu in gpus:
        mine = [c for c in all_cells if c.gpu == gpu]
        rows: dict[str, list[str]] = {}
        for c in mine:
            rows.setdefault(c.backend, []).append(c.verdict)
            used.update(c.codes)
        body = [[b, *v] for b, v in rows.items()]
        title = (f"SGLang {label} on {gpu}: --kv-cache-dtype {' / '.join(dtypes)} by --attention-backend "
                 "(what `kv4lint check` reports)")
        if fmt == "markdown":
            lines += [f"**{title}**", "", "| backend | " + " | ".join(heads) + " |", "|---|" + "---|" * len(heads)]
            lines += ["| " + " | ".join(r) + " |" for r in body]
        else:
            widths = [max(len(x) for x in col) for col in zip(["backend", *heads], *body)]
            fmt_row = "  ".join("{:<%d}" % w for w in widths)
            lines += [title, "", fmt_row.format("backend", *heads), fmt_row.format(*("-" * w for w in widths))]
            lines += [fmt_row.format(*r).rstrip() for r in body]
        lines.append("")
    lines.append("yes: kv4lint check finds nothing; otherwise the codes it reports (first the cause SGLang hits):")
    for code in sorted(used):
        lines.append(f"  {code}: {RULES[code].summary}")
    return "\n".join(lines) + "\n"
