"""Files of a given shape for the benchmark's rows (bench/table.py): generated, so that no third-party file is
committed and every run measures the same bytes.  Each function writes its file into ``out`` (once: the text is
compared, not rewritten) and returns its path.  To add a shape, add a function here and a row in
``table.LARGE_FILES``.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MB2 = 2_000_000


def _write(out: Path, name: str, text: str) -> Path:
    p = out / "shapes" / name
    p.parent.mkdir(parents=True, exist_ok=True)
    if not p.exists() or p.read_text(encoding="utf-8") != text:
        p.write_text(text, encoding="utf-8")
    return p


def _fill(parts: list[str], size: int) -> str:
    """``parts`` joined and repeated, whole parts only, up to ``size`` characters: a part cut in two (a ``for``
    loop without its ``done``) would make the text one syntax error from there on."""
    out: list[str] = []
    n = 0
    for part in itertools.cycle(parts):
        if n + len(part) + 1 > size:
            break
        out.append(part)
        n += len(part) + 1
    return "\n".join(out) + "\n"


def shell_2mb(out: Path) -> Path:
    """One 2 MB shell script with launches: the project's shell fixtures (launches with and without findings,
    decoys, wrappers, loops, heredocs), one after another, repeated up to 2 MB."""
    parts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "fixtures" / "shell").glob("*.sh"))]
    return _write(out, "big.sh", _fill(parts, MB2))


MODELS = ["openvla", "openvla-oft", "openpi", "gr00t", "gr00t_n1d6", "gr00t_n1d7", "dexbotic", "starvla", "lingbotvla",
          "dreamzero", "fastwam", "cosmos3", "qwen3_vl", "abot_m0", "molmoact2", "evo1", "diffusion"]
ENVS = ["behavior", "maniskill_libero", "libero", "metaworld", "calvin", "isaaclab", "robocasa", "robocasa365",
        "franka", "franka-dexhand", "franka-franky", "frankasim", "robotwin", "habitat", "opensora", "wan", "genesis",
        "xsquare_turtle2", "liberopro", "liberoplus", "roboverse", "embodichain", "d4rl", "dosw1", "gim_arm", "so101",
        "piper", "dummy", "polaris"]
PLATFORMS = ["nvidia", "amd", "ascend", "musa"]


def rlinf_install_sh(out: Path, lines: int = 3125, seed: int = 37) -> Path:
    """A script shaped like RLinf's ``requirements/install.sh`` (3,125 lines; the real one costs about the same):
    ninety globals, an option parser, per-platform configure hooks, helpers that compute versions through
    ``$(...)`` and ``case``, one install function per model and environment that calls helpers and other
    installers and sets globals on every branch, and a dispatcher over target and model.  It names sglang (the
    engine, a pip requirement) and pip's ``--config-settings`` (so it passes the pre-filter), and launches
    nothing."""
    rnd = random.Random(seed)
    g = [f"VAR_{i}" for i in range(90)]
    o = ["#! /bin/bash", "", "set -eo pipefail", ""]
    o += [f'{v}="{rnd.choice(["", "0", "1", "auto", "3.11.14"])}"' for v in g]
    o += ['SGLANG_VERSION=""', 'PLATFORM="nvidia"', 'TORCH_VERSION=""', 'MODEL=""', 'ENV_NAME=""', 'TARGET=""',
          'ENGINE="sglang"', 'SCRIPT_DIR="$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"', ""]
    o += ["parse_args() {", '    while [ "$#" -gt 0 ]; do', '        case "$1" in']
    for v in g[:40]:
        opt = v.lower().replace("_", "-")
        o += [f"            --{opt})", '                if [ -z "${2:-}" ]; then',
              f'                    echo "--{opt} requires a value." >&2', "                    exit 1",
              "                fi", f'                {v}="${{2:-}}"', "                shift 2", "                ;;"]
    o += ['            *) TARGET="$1"; shift ;;', "        esac", "    done", "}", ""]
    helpers = []
    for h in range(24):
        name = f"version_of_{h}"
        helpers.append(name)
        o += [f"{name}() {{", '    case "$1" in']
        for j in range(4):
            o += [f'        {rnd.choice(PLATFORMS)}:{j}|{rnd.choice(MODELS)}) echo "2.{rnd.randint(5, 9)}.{j}" ;;']
        o += ['        *) echo "${2:-}" ;;', "    esac", "}", ""]
    for plat in PLATFORMS:
        o += [f"configure_{plat}() {{"]
        for v in rnd.sample(g, 8):
            o += [f'    {v}="$({rnd.choice(helpers)} "{plat}:1" "${{{rnd.choice(g)}}}")"']
        o += ['    if [ -n "$ROCM_VERSION" ]; then', f'        {rnd.choice(g)}="rocm$ROCM_VERSION"', "    else",
              f'        {rnd.choice(g)}="auto"', "    fi", "}", ""]
    installers: list[str] = []
    names = MODELS + ENVS
    k = 0
    while len(o) < lines - 80:
        what = names[k % len(names)]
        name = f"install_{what.replace('-', '_')}_{k}"
        k += 1
        o += [f"{name}() {{", "    local torch_ver",
              f'    torch_ver="$({rnd.choice(helpers)} "$PLATFORM:2" "$TORCH_VERSION")"', '    case "$PLATFORM" in']
        for plat in PLATFORMS:
            o += [f"        {plat})"]
            for v in rnd.sample(g, 2):
                o += [f'            {v}="${{{rnd.choice(g)}}}-$({rnd.choice(helpers)} "{plat}:3" "$torch_ver")"']
            o += ["            ;;"]
        o += ["    esac", f'    if [ "$torch_ver" = "2.{rnd.randint(5, 9)}.0" ]; then']
        o += [f'        {v}="${{{v}}}-torch"' for v in rnd.sample(g, 2)]
        o += ["    else", f'        {rnd.choice(g)}=""', "    fi",
              f'    for pkg in "${{{rnd.choice(g)}}}" "${{{rnd.choice(g)}}}"; do',
              f'        uv pip install "$pkg" -r "$SCRIPT_DIR/embodied/{what}.txt" '
              "--config-settings editable_mode=compat",
              "    done"]
        if installers and rnd.random() < 0.5:
            o += [f"    {rnd.choice(installers[-8:])}"]
        o += ['    if [ "$ENGINE" = "sglang" ]; then',
              '        uv pip install "sglang[all]==${SGLANG_VERSION}" --config-settings editable_mode=compat',
              "    fi", "}", ""]
        installers.append(name)
    o += ["main() {", '    parse_args "$@"', '    case "$PLATFORM" in']
    o += [f"        {p}) configure_{p} ;;" for p in PLATFORMS]
    o += ["    esac", '    case "$TARGET" in', "        embodied)", '            case "$MODEL" in']
    o += [f"                {names[i % len(names)]}{i}) {name} ;;" for i, name in enumerate(installers[:40])]
    o += ["            esac", "            ;;", "    esac", "}", "", 'main "$@"', ""]
    return _write(out, "install.sh", "\n".join(o))
