"""How messages name the parts of a launch and its target in the user's terms (shared by the codes' homes)."""

from __future__ import annotations

from kv4lint.sglang.gpus import arch_name
from kv4lint.sglang.options import flag_for


_PICKED_BY = {
    "handle_model_specific_adjustments": "the model's",
    "handle_nvfp4_prefill_kv_dequant_dtype": "NVFP4's",
    "handle_deterministic_inference": "deterministic inference's",
    "handle_attention_backend_compatibility": "SGLang's",
}


def backend_phrase(field: str, backend, args, derived_by: str | None, m, model) -> str:
    """The backend as the headline names it: the launch's own option (``--attention-backend fa3``), or, when
    SGLang picked it, who did (``SGLang's default backend fa3``); :func:`derived_note` says why in the detail."""
    if derived_by:
        who = "SGLang's default" if derived_by == "default attention backend" else _PICKED_BY.get(derived_by, "")
        return f"{who} backend {backend}" if who else f"the backend {backend}"
    if args.form == "kwargs":
        return f"{field}={backend!r}"
    return f"{flag_for(field)} {backend}"


def derived_note(derived_by: str, backend, m, model) -> str:
    """Why SGLang runs ``backend`` when the launch does not set it, for the detail."""
    where = {
        "default attention backend": f"SGLang's default for {arch_name(m.arch) if m.arch else m.platform} and an "
                                     f"{(model.attention or 'unknown').upper()} model",
        "handle_model_specific_adjustments": f"the model override for {model.architecture}",
        "handle_nvfp4_prefill_kv_dequant_dtype": "picked by the NVFP4 prefill step",
        "handle_deterministic_inference": "picked for deterministic inference",
        "handle_attention_backend_compatibility": "SGLang's equal prefill/decode backends",
    }.get(derived_by, derived_by.replace("handle_", "").replace("_", " "))
    return f"The launch does not set the attention backend: SGLang runs {backend} ({where})"


def derived_by(field: str, backend, args, ev) -> str | None:
    """None when the launch itself sets ``backend``; else the step that picked it."""
    v = args.values.get(field)
    if v is not None and v.known and v.text == backend:
        return None
    if field != "attention_backend":
        a = args.values.get("attention_backend")
        if a is not None and a.known and a.text == backend:
            return None
    return ev.data.get("derived_by") or "default attention backend"


def feature_phrase(field: str, args) -> str:
    flag = flag_for(field) if args.form == "argv" else field
    v = args.values.get(field)
    if v is not None and v.known and v.text not in ("true",):
        return f"{flag} {v.text}"
    return flag
