"""The launch of a container whose image builds SGLang's command from its environment (RunPod's worker-sglang:
:mod:`kv4lint.sglang.launchers`): the options its variables select, each reported where the variable is set.

The YAML (compose services, Kubernetes containers), Dockerfile (``ENV`` on top of such an image) and JSON
(deployment templates) frontends give the image and the environment as written; this builds the launch the
launcher would run, in the order it adds the options.  A variable's value is edited where it is written (the fix
rewrites ``KV_CACHE_DTYPE=nvfp4`` in place).
"""

from __future__ import annotations

from dataclasses import dataclass

from kv4lint.base.model import Hint, Launch, Provenance, Span, Value
from kv4lint.sglang.launchers import TRUTHY, env_launcher


@dataclass
class Setting:
    """One environment variable as written: its value (``text`` None: set, but not known statically), where the
    value's characters are (``span``, when written verbatim) and the whole entry (``entry``: where a finding about
    the option it selects is reported)."""

    name: str
    text: str | None
    span: Span | None
    entry: Span | None
    shared: bool = False
    path: str | None = None  # the file the value is written in, when not the scanned one (an env file)


def env_launch(image: str | None, settings: list[Setting], *, path: str, span: Span, anchor: Span, language: str,
               hints: list[Hint] | None = None, location: str | None = None) -> Launch | None:
    """The launch the launcher of ``image`` runs with ``settings`` (the last setting of a variable wins), or None:
    the image is no launcher kv4lint knows, or none of its variables is set."""
    launcher = env_launcher(image)
    if launcher is None:
        return None
    env = {s.name: s for s in settings}
    argv: list[Value] = []
    for var, option in launcher.options.items():
        s = env.get(var)
        if s is None or s.text == "":  # the launcher skips a variable that is unset or empty
            continue
        argv.append(Value(option, None, Provenance.LITERAL, use=s.entry))
        # Reported where the variable is set in this file (an env file's value: at the entry that reads the file).
        here = s.span is not None and s.path is None
        argv.append(Value.unknown(s.entry) if s.text is None else Value(
            s.text, s.span, Provenance.RESOLVED, use=None if here else s.entry, shared=s.shared, path=s.path))
    for var in launcher.flags:
        s = env.get(var)
        if s is not None and s.text is not None and s.text.strip().lower() in TRUTHY:
            argv.append(Value(launcher.flag(var), None, Provenance.LITERAL, use=s.entry))
    if not argv:
        return None
    return Launch(path=path, form="argv", entry="sglang.launch_server", span=span, anchor=anchor, argv=argv,
                  hints=list(hints or []), language=language, location=location)
