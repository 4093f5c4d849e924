"""The Python API: check SGLang arguments without a file."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from kv4lint.base.model import Finding, Launch, Provenance, Span, Value
from kv4lint.base.settings import DEFAULT_FIX_DTYPE, Settings
from kv4lint.files.isolation import trusted_imports
from kv4lint.pipeline.runner import resolve_target
from kv4lint.rules.parser import judge
from kv4lint.settings.options import check_attention, check_fix_dtype, check_gpu, check_platform, check_version

_NOWHERE = Span(0, 0)


def _option(name: str, value, check):
    """A keyword argument checked as the command line checks its option: a wrong one is the caller's bug."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name}= must be a string, not {type(value).__name__}")
    try:
        return check(value)
    except ValueError as e:
        raise ValueError(f"{name}=: {e}") from None


def _settings(sglang_version, platform, gpu, model_attention, strict, fix_dtype) -> Settings:
    sglang_version = _option("sglang_version", sglang_version, check_version)
    platform = _option("platform", platform, check_platform)
    gpu = _option("gpu", gpu, check_gpu)
    model_attention = _option("model_attention", model_attention, check_attention)
    fix_dtype = _option("fix_dtype", fix_dtype, check_fix_dtype)
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

    Raises ``TypeError`` when ``argv`` is a string (split it first: ``shlex.split``) or not a sequence, and
    ``ValueError`` (naming the argument) for a release, platform, GPU, model attention or fix dtype that the
    command line would refuse.
    """
    if isinstance(argv, (str, bytes, bytearray)) or not isinstance(argv, Sequence):
        raise TypeError(f"argv must be a list of arguments (such as shlex.split(command)), not "
                        f"{type(argv).__name__}")
    tokens = [Value(str(w), None, Provenance.LITERAL) for w in argv]
    launch = Launch("<argv>", "argv", "sglang.launch_server", _NOWHERE, _NOWHERE, argv=tokens)
    return _run(launch, _settings(sglang_version, platform, gpu, model_attention, strict, fix_dtype))


def check_server_args(mapping: Mapping[str, Any], *, sglang_version: str | None = None,
                      platform: str | None = None, gpu: str | None = None, model_attention: str | None = None,
                      strict: bool = False, fix_dtype: str | None = None) -> list[Finding]:
    """Check ``ServerArgs(**mapping)`` / ``Engine(**mapping)`` keyword arguments (field names).

    ``None`` values count as unset, as SGLang's defaults are.  Raises ``TypeError`` when ``mapping`` is not a
    mapping, and ``ValueError`` for a keyword argument as :func:`check_argv` does.
    """
    if not isinstance(mapping, Mapping):
        raise TypeError(f"mapping must be a mapping of ServerArgs fields, not {type(mapping).__name__}")
    kwargs = {}
    for k, v in mapping.items():
        if v is None:
            continue
        text = ("true" if v else "false") if isinstance(v, bool) else str(v)
        kwargs[str(k)] = Value(text, None, Provenance.LITERAL)
    launch = Launch("<server_args>", "kwargs", "ServerArgs", _NOWHERE, _NOWHERE, kwargs=kwargs)
    return _run(launch, _settings(sglang_version, platform, gpu, model_attention, strict, fix_dtype))
