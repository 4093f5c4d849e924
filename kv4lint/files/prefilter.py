"""The cheap test every file goes through before it is decoded or parsed.

A file can only produce a finding if it sets SGLang's KV cache dtype (or the
NVFP4 prefill dequant dtype, the other option the rules read) in a launch, or
hands a launch a ``--config`` file that may set it.  So a candidate must hold:

1. ``sglang`` (lower case): every entry point is spelled with it -- the
   modules (``python -m sglang.launch_server``), the CLI (``sglang serve``),
   the imports of the Python API (``from sglang import Engine``), the images
   (``lmsysorg/sglang``).  The exceptions: an SGLang ``--config`` YAML file,
   which holds only keys (``kv-cache-dtype: nvfp4``), and SGLang's Python
   test and doc helpers (``popen_launch_server`` ...) called without an
   import of sglang in sight -- through another module's ``import *``, or
   in a Markdown fence or a notebook cell -- which are looked for by name;
2. and a spelling of one of the two options: ``kv_cache_dtype`` /
   ``prefill_kv_cache_dequant_dtype`` (Python keywords, dict keys), their flags
   and every prefix argparse accepts for them (``--kv-c`` is the shortest
   unique prefix of ``--kv-cache-dtype`` in any release, ``--prefill-k`` of
   ``--prefill-kv-cache-dequant-dtype``), config keys (``kv-cache-dtype:``,
   abbreviated ``kv-c:``) -- or ``--config``.

Python files (``language="python"``) must also name an entry point a launch
is made with (``ServerArgs(``, ``Engine(``, ``popen_launch_server(``, a
``sglang.launch_server`` / ``sglang serve`` string ...) and set the dtype the
way a launch does (a keyword or an assignment, a dict key, a flag string) rather
than only reading ``x.kv_cache_dtype``: SGLang's own sources and their
forks mention ``kv_cache_dtype`` everywhere without launching anything.

Outside Python, a shell may remove quotes inside a word (``--kv-"cache-dtype"``
is ``--kv-cache-dtype``): a file that names sglang and fails the option test
is tested again without quotes and backslashes.  Not handled: ``sglang``
itself split by quotes, and quotes inside a flag in a Python string that a
shell runs (``os.system('... --kv-"cache-dtype" ...')``).

The test is a few scans of the raw bytes: ``bytes.find`` for each other
needle, and one pass of ``OPTION_GATE`` for the three option needles (a
pattern that starts with the literal ``k`` they share, which ``re`` looks for
as fast as ``bytes.find``); every other regular expression is anchored at an occurrence
those scans found, never run over a whole file (an unanchored alternation
scans a file at a tenth of the speed).  ``SPEC`` holds the same
tests as plain regular expressions: the definition, which the tests compare
this implementation with.  False positives cost a parse; false negatives
would hide findings, so every test here is a necessary condition, never a
guess.

``GREP_PATTERN`` is the same substrings for ``grep -E`` (the benchmark's
floor).
"""

from __future__ import annotations

import functools
import re
import warnings

from kv4lint.sglang.commands import DOC_HELPERS, HELPERS, PY_API, PY_COMMAND_CALLS, SERVER_MODULES, TEST_BASES
from kv4lint.sglang.launchers import LAUNCHER_IMAGES, LAUNCHER_KV_SETTINGS

# Stage 1 needles (plain substrings).
ENTRY_NEEDLE = "sglang"
OPTION_NEEDLES = ("kv_cache_d", "kv-c", "prefill-k")  # every spelling of the two options contains one
CONFIG_NEEDLE = "--config"
NEEDLES = (ENTRY_NEEDLE, *OPTION_NEEDLES, CONFIG_NEEDLE)

GREP_PATTERN = "|".join(NEEDLES)  # no regex metacharacters in the needles


def _needle_gate(needles) -> str:
    """A pattern that matches at the first ``k`` of each occurrence of ``needles``.

    It starts with the letter alone: ``re`` scans for a leading literal character at about the speed of
    one ``bytes.find``, and tries the rest only at each ``k`` (``k(?:v_cache_d|v-c|(?<=prefill-k))``).  A
    plain alternation, or a pattern led by a character class, is scanned ten times slower.  As no needle
    holds a second ``k``, no match covers the ``k`` of another occurrence: ``finditer`` finds them all.
    """
    alternatives = []
    for needle in needles:
        before, k, after = needle.partition("k")
        if not k or "k" in after:
            raise ValueError(f"a needle without exactly one k: {needle!r}")
        alternatives.append(f"(?<={re.escape(before)}k)" if before else re.escape(after))
    return "k(?:" + "|".join(alternatives) + ")"


# Each occurrence of an option needle in one pass (not one pass per needle): most of the Python files of
# SGLang's own sources name sglang and hold none.
OPTION_GATE = _needle_gate(OPTION_NEEDLES)

# The Python API's entry points: SGLang's classes and functions, and the test and doc helpers
# (kv4lint.sglang.commands, shared with the Python frontend).
PY_HELPERS = (*HELPERS, *DOC_HELPERS)
PY_ENTRY_WORDS = (*PY_API, "from_cli_args", "run_server", "launch_server", *PY_HELPERS)
# Substrings that find every word above (the whole identifier is then compared; tests/test_knowledge_tables.py
# checks that they do).
_PY_ENTRY_NEEDLES = ("ServerArgs", "Engine", "Runtime", "launch_server", "run_server", "prepare_server_args",
                     "from_cli_args", "popen_launch_pd_server", "run_bench_", "run_score_benchmark",
                     "run_embeddings_benchmark")
# python -m MODULE, or the module named in a string: the server modules (kv4lint.sglang.commands).
_SERVER_MODULE = "|".join(re.escape(m) for m in SERVER_MODULES)

# An SGLang command: -m MODULE; sglang serve, ["sglang", "serve"], -m sglang.cli.main serve.
_COMMAND = _SERVER_MODULE + r"|sglang(?:\.[\w.]+)?[\s\"',\[\]-]+serve\b"

# The definition, as regular expressions over the whole text (see might_launch).
SPEC = {
    # Where an option is *spelled as an option* (not "the kv-cache is ..."):
    "option": (r"(?:prefill_)?kv_cache_d"  # Python keywords, dict keys, attributes
               r"|(?<=[-\"'])(?:kv-c|prefill-k)"  # flags and their argparse prefixes (--kv-c), "--" + "kv-cache-dtype"
               r"|(?:kv-c|prefill-k)[\w-]*[\"']?[ \t]*:"),  # config keys, full or abbreviated (kv-c: nvfp4)
    # An SGLang --config file (block or flow mapping): one of the two keys.
    "config_key": r"(?:kv-c|prefill-k)[\w-]*[\"']?[ \t]*:",
    # Python: how a launch sets the option -- a keyword or an assignment (not
    # ``self.kv_cache_dtype = ...`` inside a class, not ``==``), a dict key or a
    # setattr name, a flag in a string.
    "py_option": (r"(?<!\w)(?<!self\.)(?:prefill_)?kv_cache_d\w*\s*=(?!=)"
                  r"|[\"'](?:prefill_)?kv_cache_d"
                  r"|(?<=[-\"'])(?:kv-c|prefill-k)"),
    # Python: an entry point of docs/sglang-rules.md §6 called (the frontend resolves a callee through imports only:
    # it is called under its own name or imported under an alias), or named as a command string.
    "py_entry": (r"(?<!\w)(?:" + "|".join(PY_ENTRY_WORDS) + r")(?:\s*\(|\s+as\s+\w)"  # called, or aliased
                 r"|(?<!\w)(?:" + "|".join(TEST_BASES) + r")(?!\w)"  # a server-test base class, named
                 r"|" + _COMMAND),
    # ... or both of these, anywhere: the CLI or the package as a word, and "serve" starting a string or
    # after an f-string hole ([SGLANG_BIN, "serve"], SGLANG + " serve ...", f"{bin} serve ...").
    "sglang_word": r"sglang(?![\w.])|sglang\.cli\b",
    "serve_string": r"[\"'}][ \t]*serve\b",
    # A shell script that reads settings from another file (``source env.sh``, ``. ./env.sh``,
    # ``docker run --env-file``): its launch may take every option from there (kv4lint.pipeline.sourced).  Shell
    # files only: an embedded snippet (a doc's code block) is not followed to other files.
    # (with an SGLang command, ``command`` or ``sglang_word`` + ``serve_string``).
    "sources": r"(?m)(?:^|[;&|({]|\s)(?:source|\.)[ \t]+[^\s=;&|]|--env-file",
    # A launcher image that builds SGLang's command from its environment (kv4lint.sglang.launchers), and its KV
    # cache variable (or an env file) set: outside Python, both anywhere.
    "launcher": "|".join(re.escape(n) for n in LAUNCHER_IMAGES),
    "launcher_env": "|".join(re.escape(n) for n in LAUNCHER_KV_SETTINGS),
    "command": _COMMAND,
}


class _Flavour:
    """The tests for ``bytes`` or ``str``; anchored expressions compiled on first use."""

    def __init__(self, conv):
        self.conv = conv
        self.entry = conv(ENTRY_NEEDLE)
        self.kv_cache_d, self.kv_c, self.prefill_k = (conv(n) for n in OPTION_NEEDLES)
        self.needles_k = tuple((conv(n), n.index("k")) for n in OPTION_NEEDLES)  # each with its first k
        self.prefill_ = conv("prefill_")
        self.flag_lead = (conv("-"), conv('"'), conv("'"))
        self.config = conv(CONFIG_NEEDLE)
        self.config_search = re.compile(re.escape(self.config)).search
        self.continuation = conv("\\\n")
        self.empty = conv("")
        self.quoting = b"\"'\\" if conv is _ascii else str.maketrans("", "", "\"'\\")
        self.entry_needles = tuple(conv(n) for n in (*_PY_ENTRY_NEEDLES, *TEST_BASES))
        self.entry_words = frozenset(conv(n) for n in PY_ENTRY_WORDS)
        self.base_words = frozenset(conv(n) for n in TEST_BASES)
        self.launcher_images = tuple(conv(n) for n in LAUNCHER_IMAGES)
        self.launcher_env = tuple(conv(n) for n in LAUNCHER_KV_SETTINGS)
        self.star = conv("import *")
        self.serve = conv("serve")
        self.blanks = (conv(" "), conv("\t"))
        self.string_starts = (conv('"'), conv("'"), conv("}"))

    def dequote(self, data):
        """``data`` without line continuations, quotes and backslashes."""
        data = data.replace(self.continuation, self.empty)
        return data.translate(None, self.quoting) if isinstance(data, bytes) else data.translate(self.quoting)

    def _re(self, pattern: str):
        return re.compile(self.conv(pattern))

    @functools.cached_property
    def option_gate(self):
        return self._re(OPTION_GATE)

    # Anchored at an occurrence of a needle.
    @functools.cached_property
    def key_at(self):
        return self._re(r"(?:kv-c|prefill-k)[\w-]*[\"']?[ \t]*:")

    @functools.cached_property
    def py_setting_at(self):
        return self._re(r"(?<!\w)(?<!self\.)(?:prefill_)?kv_cache_d\w*\s*=(?!=)|(?<=[\"'])(?:prefill_)?kv_cache_d")

    @functools.cached_property
    def word_before(self):
        return self._re(r"\w*\Z")

    @functools.cached_property
    def word_at(self):
        return self._re(r"\w+")

    @functools.cached_property
    def call_or_alias_at(self):
        return self._re(r"\s*\(|\s+as\s+\w")

    @functools.cached_property
    def module_at(self):
        return self._re(_COMMAND)

    @functools.cached_property
    def sglang_word_at(self):
        return self._re(r"sglang(?![\w.])|sglang\.cli\b")

    @functools.cached_property
    def serve_at(self):
        return self._re(r"serve\b")

    @functools.cached_property
    def sources_at(self):
        return self._re(SPEC["sources"])

    # The tests of SPEC.
    def _hits(self, data):
        """Each occurrence of an option needle in ``data`` as (needle, index), in one pass (``OPTION_GATE``)."""
        for m in self.option_gate.finditer(data):
            k = m.start()
            for needle, offset in self.needles_k:
                i = k - offset
                if i >= 0 and data.startswith(needle, i):
                    yield needle, i

    def _flag(self, data, i) -> bool:
        """A needle at ``i`` ("kv-c" / "prefill-k") that is a flag: after a ``-`` (``--kv-c``), or at the start
        of a string (``"--" + "kv-cache-dtype"``)."""
        return i >= 1 and data[i - 1:i] in self.flag_lead

    def option(self, data) -> bool:
        for needle, i in self._hits(data):
            if needle == self.kv_cache_d or self._flag(data, i) or self.key_at.match(data, i):
                return True
        return False

    def has_config(self, data) -> bool:
        """``--config`` in ``data``: a pass over most files (those that name sglang and set no option), where
        ``re`` finds it in bytes a fifth faster than ``in``."""
        return self.config_search(data) is not None

    def config_key(self, data) -> bool:
        return any(needle != self.kv_cache_d and self.key_at.match(data, i) for needle, i in self._hits(data))

    def py_option(self, data) -> bool:
        for needle, i in self._hits(data):
            if needle != self.kv_cache_d:
                if self._flag(data, i):
                    return True
            elif self.py_setting_at.match(data, i) or (
                    i >= 8 and data[i - 8:i] == self.prefill_ and self.py_setting_at.match(data, i - 8)):
                return True
        return False

    def py_entry(self, data) -> bool:
        for needle in self.entry_needles:
            i = data.find(needle)
            while i >= 0:
                # the whole identifier around the occurrence
                start = self.word_before.search(data, max(0, i - 32), i).start()
                word = self.word_at.match(data, start).group()
                if word in self.base_words or (
                        word in self.entry_words and self.call_or_alias_at.match(data, start + len(word))):
                    return True
                i = data.find(needle, i + 1)
        return self.cli(data)

    def cli(self, data) -> bool:
        """An SGLang command in the text: ``sglang.launch_server`` ..., ``sglang serve``, or ``sglang`` and
        a string starting with ``serve``."""
        word = False
        i = data.find(self.entry)
        while i >= 0:
            if self.module_at.match(data, i):
                return True
            if not word and self.sglang_word_at.match(data, i):
                word = True
            i = data.find(self.entry, i + 1)
        if word:
            i = data.find(self.serve)
            while i >= 0:
                if self.serve_at.match(data, i):
                    j = i
                    while j > 0 and data[j - 1:j] in self.blanks:
                        j -= 1
                    if j > 0 and data[j - 1:j] in self.string_starts:
                        return True
                i = data.find(self.serve, i + 1)
        return False

    def test(self, data, language: str | None) -> bool:
        if self.entry not in data:
            return self.test_without_entry(data, language)
        if language == "python":
            return (self.py_option(data) or self.has_config(data)) and self.py_entry(data)
        if self.option(data) or self.has_config(data):
            return True
        if language in (None, "shell") and self.sources_at.search(data) and self.cli(data):
            return True
        if any(n in data for n in self.launcher_images) and any(n in data for n in self.launcher_env):
            return True
        # A shell removes quotes and backslashes inside a word (--kv-"cache-dtype" is --kv-cache-dtype):
        # look again without them.  Only files that name sglang get here, a few in most repositories.
        plain = self.dequote(data)
        return plain != data and (self.option(plain) or self.has_config(plain))

    def test_without_entry(self, data, language: str | None) -> bool:
        """Files that do not name sglang."""
        if language == "python":
            # SGLang's helpers imported through another module's ``import *``: the frontend takes an
            # unbound helper name for SGLang's.
            return self.star in data and (self.py_option(data) or self.has_config(data)) and self.py_entry(data)
        if language in (None, "markdown", "notebook") and (self.option(data) or self.has_config(data)) \
                and self.py_entry(data):
            return True  # Python in a fence or a cell calling a helper imported elsewhere
        # An SGLang --config file holds keys only.
        return language in (None, "yaml") and self.config_key(data)


def _ascii(s: str) -> bytes:
    return s.encode("ascii")


_BYTES = _Flavour(_ascii)
_STR = _Flavour(lambda s: s)


# ---------------------------------------------------------------------------
# Python, by its syntax tree


# The calls the Python frontend classifies as launches, by the qualified name of the callee
# (kv4lint.sglang.commands): SGLang's API, through an import of sglang (not sglang.multimodal_gen, the
# diffusion server's own ServerArgs), its test and doc helpers, also unbound (imported through another
# module's ``import *``), and the standard library's ways to run a command.
_PY_API_TERMS = frozenset(PY_API)
_PY_HELPER_TERMS = frozenset(PY_HELPERS)
_IPYTHON_CALLS = frozenset({"system", "getoutput", "run_cell_magic"})  # get_ipython().system("cmd")
_PY_OPTION_NAMES = frozenset({"kv_cache_dtype", "prefill_kv_cache_dequant_dtype"})
_PY_OPTION_PREFIXES = ("kv-c", "-kv-c", "prefill-k", "-prefill-k", "kv_cache_d", "prefill_kv_cache_d")
_PY_OPTION_PARTS = ("-kv-c", "-prefill-k", "--config")
_PY_DEQUOTE = str.maketrans("", "", "\"'\\")


def _py_option_string(s: str) -> bool:
    if s.startswith(_PY_OPTION_PREFIXES) or any(p in s for p in _PY_OPTION_PARTS):
        return True
    if "\"" in s or "'" in s or "\\" in s:  # a shell command with quotes inside a word
        t = s.translate(_PY_DEQUOTE)
        return t.startswith(_PY_OPTION_PREFIXES) or any(p in t for p in _PY_OPTION_PARTS)
    return False


def python_may_launch(text: str, tree=None) -> bool:
    """Whether Python ``text`` can hold a launch the Python frontend reports on, by its syntax tree.

    For the few files that pass :func:`might_launch`: the standard library's
    ``ast`` (about ten times cheaper than the libcst parse it saves; flake8
    hands its own ``tree`` to the plugin) tells calls from mentions in
    comments, docstrings and annotations.  A necessary condition:

    - a call of the Python API (``ServerArgs(...)``, ``sgl.Engine(...)``,
      ``popen_launch_server(...)`` ..., also through an import alias), or a
      call that runs a command (``subprocess``, ``os``, ``asyncio``,
      ``get_ipython()``) whose arguments an SGLang command
      (``sglang.launch_server``, ``sglang serve`` ...) can reach: in the
      call itself or through the file's bindings (:func:`_strings_reaching`);
    - and the option set somewhere: a keyword ``kv_cache_dtype=`` /
      ``prefill_kv_cache_dequant_dtype=`` in any call, an assignment to such
      an attribute, or a string that is a flag (``--kv-c...``,
      ``--prefill-k...``, ``--config``, also built as ``"--" + "kv-cache-dtype"``
      or with quotes inside a shell word) or the option's name (a dict key,
      ``setattr``) -- not in a docstring, a comparison, or an
      ``add_argument(...)`` definition or its ``help=``, which never reach a
      launch's arguments.

    Text that ``ast`` cannot parse (a newer syntax, an error) passes: the
    frontend decides and reports.

    The answer for the last text is remembered (by identity: the same string
    object), with the tree it was read from: the flake8 plugin asks with
    flake8's tree of the text, then the Python frontend asks again without a
    tree, and its statement offsets read the same tree (:func:`screened_tree`):
    the text is parsed by ``ast`` once.
    """
    global ast  # the screen's functions read this module's ``ast``, imported with the first screen (1.6 ms)
    import ast

    if _last_screen[0] is text and (tree is None or tree is _last_screen[1]):
        return _last_screen[2]
    if tree is None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            tree = None
    answer = True if tree is None else _python_may_launch(text, tree)
    _last_screen[:] = [text, tree, answer]
    return answer


_last_screen: list = [None, None, False]  # [text, its tree (None: ast cannot parse it), python_may_launch(text)]


def screened_tree(text: str):
    """The ``ast`` tree :func:`python_may_launch` last read ``text`` with (by identity), or None: a reader of the
    same text needs not parse it again."""
    return _last_screen[1] if _last_screen[0] is text else None


def let_go_of_tree() -> None:
    """Forget the tree of the last screen (its answer is kept): the reader that wanted it has it.  Freed with the
    file that made it, it is not walked by the cyclic collector after the file (a 180 kB file's tree is 100,000
    objects, walked twice if it lives on)."""
    _last_screen[1] = None


def _python_may_launch(text: str, tree) -> bool:
    imports: dict[str, set[str]] = {}  # local name -> the qualified names it may stand for
    sglang_star = False
    calls = []
    bases = []  # the base classes of the file's classes: SGLang's server-test bases are launches
    services = []  # the decorators of the file's classes: a BentoML service's command
    option = False
    skip: set[int] = set()  # strings that cannot reach a launch: docstrings, comparisons, argparse definitions
    binds: dict[str, list] = {}  # a name or attribute name -> expressions that may give it its value
    binders = _binders()
    for node in _preorder(tree):  # a node before its children
        t = type(node)
        if t in binders:
            target, value = binders[t](node)
            if value is not None:
                for name in _bound_names(target):
                    binds.setdefault(name, []).append(value)
        if t is ast.Call:
            calls.append(node)
            f = node.func
            if type(f) is ast.Attribute:  # cmd.append(...), env.update(...), os.putenv(...): may change a value
                for name in ("environ",) if f.attr == "putenv" else _bound_names(f.value):
                    binds.setdefault(name, []).append(node)
            if (f.attr if type(f) is ast.Attribute else f.id if type(f) is ast.Name else None) == "add_argument":
                skip.update(id(a) for a in node.args)
            for kw in node.keywords:
                if kw.arg in _PY_OPTION_NAMES:
                    option = True
                elif kw.arg == "help":
                    skip.add(id(kw.value))
        elif t is ast.Constant:
            if not option and id(node) not in skip:
                v = node.value
                if type(v) is str:
                    option = _py_option_string(v)
                elif type(v) is bytes:
                    option = _py_option_string(v.decode("latin-1"))
        elif t is ast.Expr:
            skip.add(id(node.value))
        elif t is ast.Compare:
            skip.add(id(node.left))
            skip.update(id(c) for c in node.comparators)
        elif t is ast.Import:
            for a in node.names:
                local, full = (a.asname, a.name) if a.asname else (a.name.split(".")[0],) * 2
                imports.setdefault(local, set()).add(full)
        elif t is ast.ImportFrom:
            mod = "." * node.level + (node.module or "")
            for a in node.names:
                if a.name == "*":
                    sglang_star = sglang_star or mod.startswith("sglang")
                else:
                    imports.setdefault(a.asname or a.name, set()).add(f"{mod}.{a.name}")
        elif t is ast.ClassDef:
            bases.extend(node.bases)
            # A BentoML service runs the command its ``__command__`` returns.
            services.extend(d.func if type(d) is ast.Call else d for d in node.decorator_list)
        elif t is ast.Attribute:
            if not option and node.attr in _PY_OPTION_NAMES and type(node.ctx) is ast.Store:
                option = True
    if not option:
        return False
    commands = []
    for base in bases:
        if _py_call_kind(base, imports, sglang_star, TEST_BASES) == "api":
            return True
    if any(_qualified(d, imports) == "bentoml.service" for d in services) and _STR.cli(text):
        return True
    for call in calls:
        kind = _py_call_kind(call.func, imports, sglang_star)
        if kind == "api":
            return True
        if kind == "command":
            commands.append(call)
    return bool(commands) and _STR.cli(text) and _STR.cli(_strings_reaching(commands, binds))


def _preorder(tree):
    """Every node of ``tree``, each before its children (``ast.walk`` without its generators: half the cost)."""
    AST = ast.AST
    stack = [tree]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        node = pop()
        yield node
        for name in node._fields:
            v = getattr(node, name, None)
            if type(v) is list:
                extend([x for x in v if isinstance(x, AST)])
            elif isinstance(v, AST):
                push(v)


@functools.cache
def _binders() -> dict:
    """How a statement or expression binds names: node type -> (target, value)."""
    return {
        ast.Assign: lambda n: (n.targets, n.value),
        ast.AugAssign: lambda n: (n.target, n.value),
        ast.AnnAssign: lambda n: (n.target, n.value),
        ast.NamedExpr: lambda n: (n.target, n.value),
        ast.For: lambda n: (n.target, n.iter),
        ast.AsyncFor: lambda n: (n.target, n.iter),
        ast.comprehension: lambda n: (n.target, n.iter),
        ast.withitem: lambda n: (n.optional_vars, n.context_expr),
    }


def _bound_names(target) -> list[str]:
    """The names an assignment to ``target`` may change: ``x``, ``self.x`` and ``obj.x`` as ``x``, the
    container of ``env["K"]``, every name of a tuple or starred target."""
    out = []
    stack = list(target) if type(target) is list else [target]
    while stack:
        t = stack.pop()
        tt = type(t)
        if tt is ast.Name:
            out.append(t.id)
        elif tt is ast.Attribute:
            out.append(t.attr)
        elif tt is ast.Subscript:
            stack.append(t.value)
        elif tt in (ast.Tuple, ast.List):
            stack.extend(t.elts)
        elif tt is ast.Starred:
            stack.append(t.value)
    return out


def _strings_reaching(calls: list, binds: dict[str, list]) -> str:
    """Every string constant that may flow into the arguments of ``calls``, each in quotes on its own line:
    the constants in the arguments, and, transitively, in every expression bound anywhere in the file to a
    name or attribute name used there (scopes and order ignored), in every call that may change it
    (``cmd.append(...)``), and in the process environment's changes (``os.environ[...] = ``, ``putenv``), which a
    shell command may expand.  An over-approximation of what the Python frontend evaluates for a command:
    it follows only bindings in the file (a parameter, an import, a call's result are unknown to it)."""
    seen: set[int] = set()
    names_seen: set[str] = set()
    out: list[str] = []
    todo = [a for c in calls for a in (*c.args, *(kw.value for kw in c.keywords))]
    todo.extend(binds.get("environ", ()))
    names_seen.add("environ")
    while todo:
        root = todo.pop()
        if id(root) in seen:
            continue
        seen.add(id(root))
        for node in _preorder(root):
            t = type(node)
            if t is ast.Constant:
                v = node.value
                if type(v) is str:
                    out.append(f'"{v}"')
                elif type(v) is bytes:
                    out.append(f'"{v.decode("latin-1")}"')
                continue
            name = node.id if t is ast.Name else node.attr if t is ast.Attribute else None
            if name is not None and name not in names_seen:
                names_seen.add(name)
                todo.extend(binds.get(name, ()))
    return "\n".join(out)


def _qualified(node, imports: dict[str, set[str]]) -> str | None:
    """``a.b.c`` through the file's imports (the first of a name imported twice), or None."""
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is not ast.Name or node.id not in imports:
        return None
    return ".".join([sorted(imports[node.id])[0], *reversed(parts)])


def _py_call_kind(func, imports: dict[str, set[str]], sglang_star: bool, terms=None) -> str | None:
    """``"api"``, ``"command"`` or None: how the Python frontend may classify a call of ``func`` (with ``terms``:
    whether ``func`` names one of these of SGLang's, as a class's base names a server-test base class).

    The frontend's ``qualify``/``classify`` over-approximated: a name imported
    more than once counts under each of its imports, and a local definition
    does not hide an import.
    """
    parts = []
    node = func
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is ast.Call and len(parts) == 1 and parts[0] in _IPYTHON_CALLS \
            and type(node.func) is ast.Name and node.func.id == "get_ipython":
        return "command"
    if type(node) is not ast.Name:
        return None
    tail = ".".join(reversed(parts))
    heads = imports.get(node.id)
    if heads is None:  # a local or unbound name: SGLang's helpers (and its API through ``from sglang... import *``)
        term = parts[0] if parts else node.id
        if terms is not None:
            return "api" if sglang_star and not parts and term in terms else None
        if term in _PY_HELPER_TERMS or (sglang_star and not parts and term in _PY_API_TERMS):
            return "api"
        return None
    kind = None
    for head in heads:
        q = f"{head}.{tail}" if tail else head
        term = q.rsplit(".", 1)[-1]
        sgl = (q.startswith("sglang.") or q == "sglang") and not q.startswith("sglang.multimodal_gen")
        if terms is not None:
            if sgl and term in terms:
                return "api"
            continue
        if sgl and (term in _PY_API_TERMS or term in _PY_HELPER_TERMS or q.endswith(".ServerArgs.from_cli_args")):
            return "api"
        if q in PY_COMMAND_CALLS:
            kind = "command"
    return kind


def might_launch(text: str, language: str | None = None) -> bool:
    """Whether decoded ``text`` may hold a launch kv4lint can report on.

    ``language`` (kv4lint's language name) enables the tighter tests for
    Python; ``None`` applies the tests that hold for every language.  In terms
    of ``SPEC``: ``sglang`` in the text and (``option``, or ``py_option`` and
    ``py_entry`` for Python, or ``--config``); without ``sglang``, a
    ``config_key`` (YAML or unknown language only).
    """
    return _STR.test(text, language)


def shell_may_launch(text: str, env: dict | None = None) -> bool:
    """:func:`might_launch` for shell text embedded in another file (a code block, a ``RUN``, a ``command:``, a
    Python string), with the values of the environment it is given: the test a shell file passes before it is
    parsed.  Text that fails it cannot hold a finding, and an embedded snippet is often not meant as valid shell
    (``export HF_TOKEN=<your-token>``): the frontends do not parse it, so it raises no syntax error."""
    return _STR.test("\n".join([text, *(str(v) for v in (env or {}).values())]), "embedded shell")


def might_launch_bytes(data: bytes, language: str | None = None) -> bool:
    """:func:`might_launch` on raw bytes (ASCII-compatible encodings; UTF-16 must be decoded first)."""
    return _BYTES.test(data, language)
