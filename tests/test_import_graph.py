"""kv4lint's modules import one way: down the stage folders, no cycles, frontends that only read, leaves that
import nothing of kv4lint's.

The graph is read from the source (``import`` statements, module-level,
inside functions and under ``if TYPE_CHECKING:``: an annotation is the same
dependency as a call), and every module is imported once to show the graph is
the real one.  A function-level import is allowed only where it keeps
something off the start-up path: a kv4lint module in ``LAZY_ALLOWED``, another
package in ``HEAVY``, each with its reason.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import kv4lint
from kv4lint import frontends

PACKAGE = Path(kv4lint.__file__).parent

# kv4lint/'s folders (and its top-level modules, the front doors) in pipeline order, leaves first: every import
# between two of them, module-level, inside a function or for type checkers only, points down this list
# (docs/architecture.md, "How modules import").
LAYERS = ("base", "sglang", "files", "frontends", "target", "rules", "fixes", "settings", "pipeline", "reporters",
          "api", "flake8_plugin", "codemod", "cli", "__main__", "__init__")
# Leaf modules: one model of a concept each, imported by everyone, importing nothing of kv4lint's.
LEAVES = {"kv4lint.sglang.commands", "kv4lint.sglang.gpus", "kv4lint.base.suppression", "kv4lint.base.version",
          "kv4lint.base.printable", "kv4lint.base.process"}
# The reading layer: what turns a file's text into launches, and the stage that completes them.
READERS = ("kv4lint.frontends", "kv4lint.sglang.commands", "kv4lint.base.suppression",
           "kv4lint.pipeline.launch_configs", "kv4lint.files.prefilter")
# The only function-level imports of kv4lint's own modules: importer -> (what it may import inside a function,
# why that waits).  The frontend registry loads the frontends by name, through importlib (kv4lint.frontends).
LAZY_ALLOWED: dict[str, tuple[set[str], str]] = {
    "kv4lint": ({"kv4lint.api", "kv4lint.files.isolation", "kv4lint.base.version"},
                "`import kv4lint` imports nothing (it runs before sys.path is clean under python -m kv4lint); the "
                "API (the rules, the option tables) and the version load on first use"),
    "kv4lint.pipeline.read": ({"kv4lint.pipeline.runner"},
                              "a tree's files mostly stop at the pre-filter: the frontends, the rules and the option "
                              "tables load for the first file that may launch"),
    "kv4lint.pipeline.runner": ({"kv4lint.pipeline.cache", "kv4lint.pipeline.launch_configs", "kv4lint.frontends.hints",
                                 "kv4lint.rules.parser", "kv4lint.sglang.options", "kv4lint.base.conditions",
                                 "kv4lint.rules.codes.base", "kv4lint.fixes.edits", "kv4lint.target.resolve"},
                                "the parse cache is off with --no-cache and in the flake8 plugin; the stages after a "
                                "launch is found (the target, the rules, the fixes) load with the first launch: most "
                                "files that pass the pre-filter hold none"),
    "kv4lint.target.resolve": ({"kv4lint.target.platform_detect"}, "the torch probe runs for --platform auto only"),
    "kv4lint.settings.config": ({"kv4lint.target.platform_detect"}, "the torch probe runs for --platform auto only"),
    "kv4lint.pipeline.cache": ({"kv4lint.fixes.writer", "kv4lint.base.model"},
                               "a cached run over an unchanged tree writes nothing: the atomic writer (threading, "
                               "signal) loads for the first entry written; the rich model for the first "
                               "stored finding or parse met"),
    "kv4lint.files.discover": ({"kv4lint.sglang.commands"},
                               "the wrappers' model, for a file named only by its shebang"),
    "kv4lint.base.source": ({"kv4lint.base.model"}, "every candidate is decoded before its parse: the rich model "
                                                    "loads with the first line index or offset map"),
    "kv4lint.frontends.python": ({"kv4lint.frontends.python.scanner"},
                                 "the libcst half of the Python frontend, for a file that passes the ast screen"),
    "kv4lint.reporters": ({"kv4lint.reporters.json_", "kv4lint.reporters.sarif", "kv4lint.reporters.github",
                           "kv4lint.reporters.gitlab", "kv4lint.reporters.text"},
                          "the format registry: the format asked for loads (sarif loads the rule docs)"),
    "kv4lint.reporters.text": ({"kv4lint.rules.codes"}, "--statistics names each code's summary: the rule table "
                                                        "loads only when there are findings to count"),
    "kv4lint.cli": ({"kv4lint.cli.app"}, "the console script's entry point: `kv4lint --version` loads only the "
                                         "version, the command line loads when it runs"),
    "kv4lint.cli.app": ({"kv4lint.cli.check", "kv4lint.cli.fix", "kv4lint.cli.stdin", "kv4lint.cli.server.lsp",
                         "kv4lint.rules.codes", "kv4lint.cli.matrix"},
                        "the dispatcher: each command (check, fix, standard input, server, explain, matrix) loads "
                        "when run; --version and --help load none"),
    "kv4lint.cli.check": ({"kv4lint.pipeline.cache", "kv4lint.pipeline.parallel", "kv4lint.fixes.add_suppressions",
                           "kv4lint.sglang.gpus"},
                          "the file index only when the cache is on (not --no-cache); the readers, the pre-filter "
                          "and the workers only for files to read (a second run over an unchanged tree has none); "
                          "--add-suppressions only; the GPU tables (3 ms) for --show-target's lines only"),
    "kv4lint.settings.options": ({"kv4lint.rules.codes", "kv4lint.sglang.gpus", "kv4lint.sglang.releases",
                                  "kv4lint.target"},
                                 "flake8 imports the option table in every run: the checks of option values load the "
                                 "rule table and the release data when called"),
    "kv4lint.flake8_plugin": ({"kv4lint.settings.options", "kv4lint.settings.config", "kv4lint.base.internal_error",
                               "kv4lint.files.prefilter", "kv4lint.pipeline.runner"},
                              "flake8 imports the plugin in the scanned repository: kv4lint's modules load inside "
                              "trusted_imports() (kv4lint.files.isolation), the pipeline for a file that passes the "
                              "screen"),
    "kv4lint.codemod": ({"kv4lint.settings.options", "kv4lint.settings.config", "kv4lint.pipeline.fix_engine"},
                        "libcst.tool imports the codemod in the scanned repository: kv4lint's modules load inside "
                        "trusted_imports() (kv4lint.files.isolation)"),
}
# Other packages a module may import inside a function: heavy ones, or ones few runs need.
HEAVY = {
    "libcst": "the Python parser, for Python candidates only",
    "tree_sitter": "the shell parser, for shell candidates only",
    "tree_sitter_bash": "the shell grammar, with tree_sitter",
    "ruamel": "the YAML parser, for YAML candidates and --config files only",
    "markdown_it": "the Markdown parser, for Markdown candidates only",
    "pathspec": "git's ignore patterns, only where a tree has .gitignore files",
    "packaging.requirements": "reading the repository's SGLang pins",
    "importlib.metadata": "tens of milliseconds; only where sglang may be installed (the version pin)",
    "importlib.resources": "4 ms; only when kv4lint is imported from a zip",
    "importlib.util": "0.5 ms where site has not loaded it: which interpreter's bytecode, and where it is kept, only "
                      "where a table kept beside it is read or written (kv4lint.base.process: dataclasses' methods "
                      "while a parser is imported, the kv4lint command's regular expressions' programs)",
    "re": "loaded by most starts, but not by `kv4lint --version`: kv4lint's own process has its regular expressions "
          "made from the programs it keeps (kv4lint.base.process.keep_patterns) from before the first is compiled",
    "tomllib": "configuration files, only where one exists",
    "difflib": "'did you mean' suggestions for a mistyped option",
    "ast": "5 ms; Python candidates only (the pre-filter's syntax-tree screen, statement offsets)",
    "pathlib": "5 ms; discovery's walk never needs it",
    "tempfile": "imports shutil (bz2, lzma ...): only a run that writes a file needs it",
    "hashlib": "3 ms (OpenSSL): a finding's fingerprint, only when there are findings",
    "traceback": "2 ms (textwrap, linecache): an internal error's traceback, only with --verbose",
    "dataclasses": "11 ms (inspect, ast, dis, tokenize): kv4lint.base.record.replace of a stage's own dataclass, "
                   "whose module has loaded it",
    "multiprocessing": "the process pool, only for large trees",
    "pickle": "the forked workers' results (kv4lint.pipeline.parallel), only for large trees",
    "signal": "the forked workers' signal handling (kv4lint.pipeline.parallel), only for large trees",
    "fcntl": "POSIX only: the size of the forked workers' chunk pipes (kv4lint.pipeline.parallel), only for large "
             "trees",
    "concurrent": "the process pool, only for large trees",
    "gc": "built in, but not loaded by `kv4lint --version` (kv4lint.base.process.gc_paused, for a file's read)",
}


def _modules() -> dict[str, Path]:
    out = {}
    for p in PACKAGE.rglob("*.py"):
        parts = p.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


MODULES = _modules()


def _targets(module: str, node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:
            pkg = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
            pkg = pkg[:len(pkg) - node.level + 1]
            base = ".".join(pkg + ([base] if base else []))
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
    out = []
    for n in names:
        while n not in MODULES and "." in n:
            n = n.rsplit(".", 1)[0]
        if n in MODULES and n != module:
            out.append(n)
    return out


def _imports(module: str) -> tuple[set[str], set[str]]:
    """(module-level imports, type-only ones included; function-level imports) of kv4lint modules."""
    top: set[str] = set()
    lazy: set[str] = set()

    def walk(node, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                (lazy if in_function else top).update(_targets(module, child))
            else:
                walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    walk(ast.parse(MODULES[module].read_text(encoding="utf-8")), False)
    return top, lazy


GRAPH = {m: _imports(m) for m in MODULES}


def _other_lazy_imports(module: str) -> list[str]:
    """The dotted names a module imports from other packages inside functions (``from a import b``: a.b)."""
    out: list[str] = []

    def walk(node, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import) and in_function:
                out.extend(a.name for a in child.names if a.name.split(".")[0] != "kv4lint")
            elif isinstance(child, ast.ImportFrom) and in_function:
                if child.level == 0 and child.module.split(".")[0] != "kv4lint":
                    out.extend(f"{child.module}.{a.name}" for a in child.names)
            else:
                walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    walk(ast.parse(MODULES[module].read_text(encoding="utf-8")), False)
    return out


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def _reader(m: str) -> bool:
    return any(m == r or m.startswith(r + ".") for r in READERS)


def _frontend_of(m: str) -> str | None:
    """The frontend a module belongs to (a package or module named in the registry), else None."""
    for target in (*frontends.SCANNERS.values(), *frontends.NESTED.values()):
        mod = target.split(":")[0]
        if m == mod or m.startswith(mod + "."):
            return mod
    return None


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not m.endswith(".__main__")))  # __main__ runs
def test_every_module_imports(module):
    importlib.import_module(module)


def test_no_cycle_among_kv4lint_modules_counting_function_level_and_type_only_imports():
    assert _cycles({m: top | lazy for m, (top, lazy) in GRAPH.items()}) == []


def test_function_level_imports_of_kv4lint_modules_are_the_allowed_ones():
    lazy = {(m, t) for m, (_, ts) in GRAPH.items() for t in ts}
    allowed = {(m, t) for m, (targets, _why) in LAZY_ALLOWED.items() for t in targets}
    assert sorted(lazy - allowed) == []  # move the code, or import at module level
    assert sorted(allowed - lazy) == []  # an entry no import needs any more


def test_function_level_imports_of_other_packages_are_heavy_ones():
    bad = sorted((m, name) for m in MODULES for name in _other_lazy_imports(m)
                 if not any(name == h or name.startswith(h + ".") for h in HEAVY))
    assert bad == []


def test_the_reading_layer_imports_nothing_lazily_but_its_parsers():
    assert sorted(m for m in LAZY_ALLOWED if _reader(m)) == ["kv4lint.frontends.python"]


def test_leaves_import_nothing_of_kv4lint():
    assert {m: sorted(GRAPH[m][0] | GRAPH[m][1]) for m in LEAVES} == {m: [] for m in LEAVES}


def test_frontends_never_import_another_frontend_nor_rules():
    bad = []
    for m, (top, lazy) in GRAPH.items():
        own = _frontend_of(m)
        if not m.startswith("kv4lint.frontends"):
            continue
        for t in top | lazy:
            other = _frontend_of(t)
            if t.startswith("kv4lint.rules") or (other is not None and other != own):
                bad.append((m, t))
    assert bad == []


def test_the_registry_names_real_readers():
    for target in (*frontends.SCANNERS.values(), *frontends.NESTED.values(), *frontends.CELLS.values()):
        mod, func = target.split(":")
        assert callable(getattr(importlib.import_module(mod), func)), target


def test_the_target_never_imports_rules_and_frontends_never_import_the_target():
    """The target is decided in one place from the evidence the frontends report (raw hints), and the rules judge
    the target they are given: frontends know nothing of the target's precedence, the target nothing of the
    rules (the release inference is passed to its resolver)."""
    bad = sorted((m, t) for m, (top, lazy) in GRAPH.items() for t in top | lazy
                 if (m.startswith("kv4lint.target") and t.startswith("kv4lint.rules"))
                 or (m.startswith("kv4lint.frontends") and t.startswith("kv4lint.target")))
    assert bad == []


def test_rules_never_import_frontends():
    bad = sorted((m, t) for m, (top, lazy) in GRAPH.items() if m.startswith("kv4lint.rules")
                 for t in top | lazy if t.startswith("kv4lint.frontends"))
    assert bad == []


def _layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.index(parts[1] if len(parts) > 1 else "__init__")


def test_the_top_level_holds_the_front_doors_and_one_folder_per_stage():
    top = {p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"}
    assert top == {"py.typed", *(n if (PACKAGE / n).is_dir() else f"{n}.py" for n in LAYERS)}


def test_every_import_between_folders_points_down_the_pipeline():
    """A folder imports only from itself and from the folders before it in LAYERS: the records and SGLang's
    knowledge first, the command line last, so that a stage never needs a later one."""
    up = sorted((m, t) for m, (top, lazy) in GRAPH.items() for t in top | lazy if _layer(t) > _layer(m))
    assert up == []


def test_nothing_imports_the_command_line():
    """The fix engine, the reporters, the plugin, the codemod and the configuration never import a command (the
    option table is kv4lint.settings.options); ``python -m kv4lint`` runs it."""
    def cli(m: str) -> bool:
        return m == "kv4lint.cli" or m.startswith("kv4lint.cli.")

    bad = sorted((m, t) for m, (top, lazy) in GRAPH.items() if not cli(m) and m != "kv4lint.__main__"
                 for t in top | lazy if cli(t))
    assert bad == []
