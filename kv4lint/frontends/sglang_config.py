"""SGLang ``--config`` files: YAML mappings whose keys are SGLang's flags (docs/sglang-rules.md §5.3).

SGLang (``prepare_server_args``: ``python -m sglang.launch_server`` and
``sglang serve`` only) reads the file named by the exact token ``--config``
with ``yaml.safe_load`` and turns it into arguments placed *before* the
command line's, so the command line wins:

* every key becomes ``--{key}`` verbatim (``kv-cache-dtype: nvfp4``);
* ``true`` gives the bare flag, ``false`` is dropped (a flag that takes a
  value gets ``--key true|false``, as 0.5.23 does);
* a list gives the flag followed by its items; an empty list nothing;
* anything else ``--key str(value)`` (``None`` for a null, a mapping
  JSON-encoded).

Here a config file becomes argv tokens whose spans are in the YAML file: the
value's characters (so a fix rewrites ``nvfp4`` in place) and, to remove an
option, its whole ``key: value`` line (:func:`config_tokens`).  Two uses:

* :func:`config_launch` - a YAML file that is itself an SGLang config (it has
  ``model-path``, or only SGLang flags among which a KV-cache or attention
  option with a value SGLang accepts): a launch of its own, entry
  ``"sglang config"``.
* a launch that passes ``--config FILE`` gets that file's arguments: the
  pipeline stage :mod:`kv4lint.pipeline.launch_configs` reads the file after the parse
  cache (frontends read only the text they are given).
"""

from __future__ import annotations

import re

from kv4lint.frontends.yaml_nodes import is_map, is_scalar, is_seq, items, mapping_entry_removal, node_span, \
    scalar_map
from kv4lint.base.model import Launch, Provenance, Span, Value
from kv4lint.sglang.options import in_any_release

# PyYAML (YAML 1.1, as SGLang reads the file) resolution of plain scalars.
_BOOL_TRUE = {"yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"}
_BOOL_FALSE = {"no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"}
_NULL = {"", "~", "null", "Null", "NULL"}
_INT_DEC = re.compile(r"^[-+]?(?:0|[1-9][0-9_]*)$")
_FLOAT = re.compile(r"^[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+][0-9]+)?$")

# Keys that make a flat mapping an SGLang config (with every key an SGLang flag).
STRONG_KEYS = frozenset({"kv-cache-dtype", "attention-backend", "prefill-attention-backend",
                         "decode-attention-backend", "prefill-kv-cache-dequant-dtype"})

# SGLang options that vLLM's server takes under the same name (``vllm serve --config`` reads the same kind of flat
# YAML file): alone they never make a file SGLang's.  A vLLM config ``model: ...``, ``tensor-parallel-size: 4``,
# ``kv-cache-dtype: nvfp4`` holds nothing else, every key an SGLang option too.
SHARED_KEYS = frozenset({
    "model", "tokenizer-mode", "revision", "dtype", "kv-cache-dtype", "quantization", "trust-remote-code", "host",
    "port", "api-key", "served-model-name", "chat-template", "tensor-parallel-size", "pipeline-parallel-size",
    "data-parallel-size", "load-format", "download-dir", "enable-lora", "max-lora-rank", "tool-call-parser",
    "reasoning-parser", "skip-tokenizer-init", "ssl-keyfile", "ssl-certfile", "disable-custom-all-reduce", "nnodes",
    "node-rank", "cpu-offload-gb", "device", "otlp-traces-endpoint", "model-impl", "language-model-only", "config",
    "log-level", "attention-backend",
})
# vLLM's attention backends (``--attention-backend``, names of its backend enum, which it also takes in lower
# case): an SGLang config names a backend vLLM does not have (``triton``, ``fa3``, ``trtllm_mha``) to be SGLang's.
VLLM_ATTENTION_BACKENDS = frozenset({
    "FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION", "TREE_ATTN", "XFORMERS", "TORCH_SDPA", "ROCM_ATTN",
    "ROCM_AITER_MLA", "ROCM_AITER_FA", "ROCM_AITER_UNIFIED_ATTN", "CUTLASS_MLA", "FLASHMLA", "FLASHMLA_SPARSE",
    "FLASH_ATTN_MLA", "TRITON_MLA", "FLASHINFER_MLA", "FLASHINFER_MLA_SPARSE", "PALLAS", "IPEX", "NO_ATTENTION",
    "CPU_ATTN", "DIFFERENTIAL_FLASH_ATTN", "MAMBA", "LINEAR_ATTN", "SHORT_CONV_ATTN", "GDN_ATTN", "XPU_MLA",
})


def _resolve_plain(text: str) -> tuple[str, str]:
    """(kind, str(value)) as PyYAML's safe_load and ``str()`` give them for a plain scalar."""
    if text in _BOOL_TRUE:
        return "bool", "true"
    if text in _BOOL_FALSE:
        return "bool", "false"
    if text in _NULL:
        return "null", "None"
    if _INT_DEC.match(text):
        try:
            return "int", str(int(text.replace("_", "")))
        except ValueError:
            pass
    if _FLOAT.match(text) and any(ch.isdigit() for ch in text):
        try:
            return "float", str(float(text.replace("_", "")))
        except ValueError:
            pass
    return "str", text


def _scalar_value(text: str, node, *, remove: Span | None, use: Span | None = None) -> tuple[str, Value]:
    sm = scalar_map(text, node)
    if node.style is None:
        kind, s = _resolve_plain(sm.value)
    else:
        kind, s = "str", sm.value
    span = sm.verbatim if s == sm.value else None
    v = Value(s, span, Provenance.LITERAL, use=use if use is not None else (None if span else node_span(node)),
              remove=remove, quote=sm.quote)
    return kind, v


def config_tokens(text: str, root, *, srtctl: bool = False) -> list[Value] | None:
    """The argv tokens SGLang builds from a config document, with spans in ``text``; None if not a mapping.

    ``srtctl``: as srt-slurm's recipe runner builds them from a ``sglang_config`` mode map instead: a key's
    ``_`` become ``-``, ``true`` is the bare flag and ``false`` nothing, whatever the option takes."""
    if not is_map(root):
        return None
    tokens: list[Value] = []
    for k, v in items(root):
        if not is_scalar(k):
            continue
        key = k.value
        flag = "--" + (key.replace("_", "-") if srtctl else key)
        ks = node_span(k)
        remove = mapping_entry_removal(text, k, v)
        option = Value(flag, None, Provenance.LITERAL, use=ks, remove=remove)
        arity = (in_any_release(flag) or ("value", None))[0]
        if is_scalar(v):
            kind, val = _scalar_value(text, v, remove=remove)
            if kind == "bool":
                if srtctl or arity == "flag":
                    if val.text == "true":
                        tokens.append(option)
                    continue
                if arity in ("value", "optional-value"):
                    tokens += [option, val]
                elif val.text == "true":
                    tokens.append(option)
                continue
            tokens += [option, val]
        elif is_seq(v):
            if not v.value:
                continue
            tokens.append(option)
            for item in v.value:
                if is_scalar(item):
                    tokens.append(_scalar_value(text, item, remove=None)[1])
                else:
                    tokens.append(Value(text[item.start_mark.index:item.end_mark.index], None, use=node_span(item)))
        else:  # a mapping: JSON-encoded (0.5.23) or str(dict) (older): a value no KV4 rule reads
            tokens += [option, Value("{...}", None, use=node_span(v))]
    return tokens


def looks_like_config(root) -> bool:
    """A YAML document that is an SGLang config file even when no launch in the scanned paths names it: kept
    strict, so other frameworks' configs stay silent (compose files, Kubernetes manifests, CI workflows and Hydra
    configs hold mappings or ``snake_case`` keys; vLLM's ``--config`` files hold flat hyphenated keys too).

    ``model-path`` (SGLang's own spelling) is enough.  Otherwise every key must be an SGLang flag (hyphenated, as
    the config wants them), one of them a KV-cache or attention option, every value given to an option with
    choices must be one SGLang accepts (vLLM's ``attention-backend: FLASH_ATTN`` is not), and one key at least must
    be SGLang's own spelling: not one vLLM's server takes too (:data:`SHARED_KEYS`; an attention backend vLLM
    does not have counts as SGLang's).  So ``kv-cache-dtype`` alone, or with ``model`` and
    ``tensor-parallel-size``, never makes a file SGLang's; with ``tp-size``, ``mem-fraction-static``,
    ``context-length``, ``decode-attention-backend`` or ``attention-backend: triton`` it does.
    """
    if not is_map(root):
        return False
    pairs = items(root)
    if not pairs or not all(is_scalar(k) for k, _ in pairs):
        return False
    keys = [k.value for k, _ in pairs]
    if any(is_map(v) for _, v in pairs):
        return False
    if "model-path" in keys:
        return True
    if not any(k in STRONG_KEYS for k in keys):
        return False
    own = False
    for k, v in pairs:
        if "_" in k.value:
            return False
        spec = in_any_release("--" + k.value)
        if spec is None:
            return False
        choices = spec[1]
        if choices is not None:
            vals = [v] if is_scalar(v) else (v.value if is_seq(v) else [])
            for x in vals:
                if not is_scalar(x) or x.value not in choices:
                    return False
        if k.value == "attention-backend":
            own = own or (is_scalar(v) and str(v.value).upper() not in VLLM_ATTENTION_BACKENDS)
        else:
            own = own or k.value not in SHARED_KEYS
    return own


def config_launch(text: str, path: str, root) -> Launch | None:
    """A config document as a launch of its own (entry ``"sglang config"``)."""
    tokens = config_tokens(text, root)
    if tokens is None:
        return None
    pairs = items(root)
    anchor = node_span(pairs[0][0]) if pairs else node_span(root)
    for k, _ in pairs:
        if k.value in STRONG_KEYS or k.value == "model-path":
            anchor = node_span(k)
            break
    return Launch(path=path, form="argv", entry="sglang config", span=node_span(root), anchor=anchor,
                  argv=tokens, language="yaml")
