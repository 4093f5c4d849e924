"""The Python API: check SGLang arguments without a file."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from kv4lint.isolation import trusted_imports
from kv4lint.model import Finding, Launch, Provenance, Span, Value
from kv4lint.runner import resolve_target
from kv4lint.rules.parser import judge
from kv4lint.settings import DEFAULT_FIX_DTYPE, Settings

_NOWHERE = Span(0, 0)


def _settings(sglang_version, platform, gpu, model_attention, strict, fix_dtype) -> Settings:
    s = Settings(sglang_version=sglang_version, platform=platform, gpu=gpu, model_attention=model_attention,
                 strict=bool(strict), fix_dtype=fix_dtype or DEFAULT_FIX_DTYPE)
    for name in ("sglang_version", "platform", "gpu", "model_attention"):
        if getattr(s, name):
            s.sources[name] = f"{name}= argument"
    return s


def _run(launch: Launch, settings: Settings) -> list[Finding]:
    with trusted_imports():  # platform="auto" imports torch, rules import packaging: never the caller's cwd's
        return _judge(launch, settings)


def _judge(launch: Launch, settings: Settings) -> list[Finding]:
    target, args = resolve_target(launch, settings)
    out = []
    for rf in judge(launch, args, target, fix_dtype=settings.fix_dtype, strict=settings.strict):
        out.append(Finding(rf.code, rf.severity, rf.message, launch.path, None, None, None, rf.fix,
                           target=target.describe(), field=rf.field, detail=rf.detail or None))
    return out


def check_argv(argv: Sequence[str], *, sglang_version: str | None = None, platform: str | None = None,
               gpu: str | None = None, model_attention: str | None = None, strict: bool = False,
               fix_dtype: str | None = None) -> list[Finding]:
    """Check SGLang CLI arguments (``["--model-path", "m", "--kv-cache-dtype", "nvfp4", ...]``).

    Spellings are read as SGLang's parser reads them: ``--flag value``,
    ``--flag=value``, aliases (``--model``, ``--tp``), unique prefixes, the last
    repeated flag wins.  ``platform="auto"`` detects this machine through torch.
    """
    tokens = [Value(str(w), None, Provenance.LITERAL) for w in argv]
    launch = Launch("<argv>", "argv", "sglang.launch_server", _NOWHERE, _NOWHERE, argv=tokens)
    return _run(launch, _settings(sglang_version, platform, gpu, model_attention, strict, fix_dtype))


def check_server_args(mapping: Mapping[str, Any], *, sglang_version: str | None = None,
                      platform: str | None = None, gpu: str | None = None, model_attention: str | None = None,
                      strict: bool = False, fix_dtype: str | None = None) -> list[Finding]:
    """Check ``ServerArgs(**mapping)`` / ``Engine(**mapping)`` keyword arguments (field names).

    ``None`` values count as unset, as SGLang's defaults are.
    """
    kwargs = {}
    for k, v in mapping.items():
        if v is None:
            continue
        text = ("true" if v else "false") if isinstance(v, bool) else str(v)
        kwargs[str(k)] = Value(text, None, Provenance.LITERAL)
    launch = Launch("<server_args>", "kwargs", "ServerArgs", _NOWHERE, _NOWHERE, kwargs=kwargs)
    return _run(launch, _settings(sglang_version, platform, gpu, model_attention, strict, fix_dtype))
