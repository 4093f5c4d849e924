"""kv4lint: catch SGLang launches whose FP4 ("KV4") KV cache SGLang will refuse.

Python API (no files needed; for launch templates)::

    import kv4lint
    findings = kv4lint.check_argv(["--model-path", "m", "--kv-cache-dtype", "nvfp4"], gpu="h100")
    findings = kv4lint.check_server_args({"model_path": "m", "kv_cache_dtype": "nvfp4"}, platform="rocm")
"""

# No imports here (not even ``from __future__``): under ``python -m kv4lint`` this runs while the
# working directory is still first on sys.path (kv4lint.files.isolation).

__all__ = ["check_argv", "check_server_args", "__version__"]


def __getattr__(name: str):
    if name == "__version__":  # kv4lint.base.version, a leaf: read on use, so that ``import kv4lint`` imports nothing
        from kv4lint.base.version import __version__

        return __version__
    # The API pulls in the rules and SGLang's option tables: imported on first
    # use, so that ``import kv4lint`` (every CLI start, the flake8 plugin) stays cheap.
    if name in ("check_argv", "check_server_args"):
        from kv4lint.files.isolation import trusted_imports

        with trusted_imports():
            from kv4lint import api

        return getattr(api, name)
    raise AttributeError(f"module 'kv4lint' has no attribute {name!r}")
