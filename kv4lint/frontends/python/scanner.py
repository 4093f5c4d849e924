"""Which Python calls are SGLang launches, and the launches they make.

:class:`Scanner` classifies the calls :class:`~.index.ModuleIndex` found
(SGLang's API, its test and doc helpers, the standard library's ways to run a
command -- all from :mod:`kv4lint.sglang.commands`), evaluates their
arguments with :class:`~.evaluate.Evaluator`, and makes the launches:
keyword launches, argv lists (through :func:`~kv4lint.sglang.commands.unwrap`),
shell strings (through the shell frontend).  Nothing here executes or
imports the scanned code.
"""

from __future__ import annotations


import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from kv4lint.base import internal_error
from kv4lint.frontends import nested
from kv4lint.frontends.argv_lists import Word as ArgWord
from kv4lint.frontends.hints import dedupe_hints, env_hints, fact_hints
from kv4lint.frontends.python.evaluate import EvalEnv, Evaluator, NotALaunch, literal_value
from kv4lint.frontends.python.index import Event, ModuleIndex, Positions, ProvidedPositions, Scope, child_nodes, \
    dotted_name
from kv4lint.frontends.python.machine import Machine
from kv4lint.frontends.python.negative import Refusals
from kv4lint.frontends.python.paths import MAX_CANDIDATES, condition, selections
from kv4lint.frontends.python.values import LITERAL, ConstValue, DictValue, ListItem, ListValue, StrValue, \
    UnknownValue, \
    call_argument, chars_of, contiguous_span, ipython_expand, origin_of, split_on_whitespace, truth_of, where_of
from kv4lint.base.file_error import FileError
from kv4lint.base.model import Hint, Launch, ScanResult, Span, Value
from kv4lint.files.prefilter import shell_may_launch
from kv4lint.sglang.commands import ASYNC_EXEC, CONFIG_ENTRIES, CONFIG_HELPERS, EXEC_L, EXEC_V, HELPERS, SHELL_ONLY, \
    SUBPROCESS_ARGV, TEST_BASES, unwrap
from kv4lint.base.source import LineIndex
from kv4lint.base.suppression import codes_above, file_codes, trailing_codes
from kv4lint.frontends.comments import python_comments


def _walk(node):
    """Every node under ``node`` (with the field it is in), ``node`` itself excluded."""
    stack = list(child_nodes(node))
    while stack:
        item = stack.pop()
        yield item
        stack.extend(child_nodes(item[1]))


def _values_key(values) -> tuple:
    return tuple((v.text, v.span, v.use, v.provenance, v.shared) for v in values)


class Scanner(Evaluator):
    _machine: Machine | None = None  # the GPU evidence of the module, read for its first launch

    # -- driver ------------------------------------------------------------
    def scan(self) -> ScanResult:
        self.result.disabled = file_codes(self.text, lambda: python_comments(self.text))
        idx = ModuleIndex(self.module)
        self.idx = idx
        cands = []
        for call, scope in idx.calls:
            kind = self.classify(call.func, scope)
            if kind is not None:
                cands.append((call, scope, kind))
        named = any((dotted_name(b.value) or "").rsplit(".", 1)[-1] in TEST_BASES
                    for c in idx.classes for b in c.node.bases)  # cheap: a class names one of SGLang's test bases
        services = self.services()
        cands += services
        if not cands and not named:
            return self.result
        self.pos = self._positions()
        tests = self.test_classes() if named else []
        # Calls nested in an Engine(server_args=...) are launches of their own.
        cands.sort(key=lambda c: self.start(c[0]))
        lines = LineIndex(self.text)
        refusals = Refusals(self.qualify, self.start, lines.line)
        for call, scope, kind in cands:
            before = len(self.result.launches)
            if not self.read(call, scope, kind, before):
                continue
            self._mark_disabled(self.result.launches[before:], lines, self.start(call))
            if len(self.result.launches) > before:
                why = refusals.reason(call, scope)
                for launch in self.result.launches[before:]:
                    launch.not_judged = why
            if kind[0] != "service":
                self.subclass_launches(call, scope, kind, lines)
        for cls, base in tests:
            self.test_class_launch(cls, base, lines)
        return self.result

    def release(self) -> None:
        """Break the cycles of the scan's working state once its result is made: the GPU evidence refers to the
        scanner, each scope to its children and parent and, through its table's events, to itself. The module's
        tree is then freed as the scan returns, not left to the cyclic collector after the whole file (paused
        while a file is read: kv4lint.base.process.gc_paused; a script's Python heredocs were a third of the objects
        it walked there)."""
        self._machine = None
        idx = getattr(self, "idx", None)
        stack = [idx.module_scope] if idx is not None else []
        while stack:
            scope = stack.pop()
            stack.extend(scope.children)
            scope.children, scope._table = [], None

    def read(self, call, scope: Scope, kind: tuple[str, str], before: int) -> bool:
        """Read one launch call (:meth:`read_paths`), a problem a file error; False: it is no launch."""
        self.unresolved, self.steps = None, 0
        try:
            self.read_paths(call, scope, kind, before)
        except NotALaunch:
            return False
        except RecursionError:
            self._launch_error(call, "a launch's arguments are nested too deeply to read")
        except Exception as e:  # noqa: BLE001 - one launch must not hide the others
            # scan_error prints the traceback with --verbose
            err = internal_error.scan_error(self.path, "reading this launch", e)
            self._launch_error(call, err.message, internal=True)
        if self.unresolved:  # never "clean" for a value that was not read
            self._launch_error(call, f"a value of this launch {self.unresolved} (the limit kv4lint reads): "
                                     "not resolved")
        return True

    def read_paths(self, call, scope: Scope, kind: tuple[str, str], before: int) -> None:
        """Read a launch; when its values depend on choices the code makes (paths.py), once per path."""
        paths = self.paths
        paths.seen, paths.used, paths.selection = [], [], {}
        self.launch(call, scope, kind)
        sels = selections(paths, paths.seen) if paths.seen else []
        if sels is None:  # a bound is never a pass
            self.unresolved = self.unresolved or f"depends on more than {MAX_CANDIDATES} paths of the code"
            return
        if not sels:
            self._machine_hints(self.result.launches[before:], call, scope)
            return
        launches = self.result.launches
        del launches[before:]
        errors = len(self.result.errors)
        for sel in sels:
            paths.seen, paths.used, paths.selection = [], [], sel
            start = len(launches)
            try:
                self.launch(call, scope, kind)
            except NotALaunch:
                continue
            finally:
                paths.selection = {}
            cond = condition(paths, paths.used, sel)
            guards = self.machine.path_guards(sel, paths.used)
            for launch in launches[start:]:
                launch.condition = " and ".join(c for c in (cond, launch.condition) if c) or None
                launch.hints = list(launch.hints) + guards
        # Readings that gave the same launch: it runs on any of their paths (and only the guards all share hold).
        kept: dict = {}
        for launch in launches[before:]:
            key = (launch.form, launch.entry, launch.span, _values_key(launch.argv), _values_key(launch.positional),
                   tuple((k, *_values_key([v])) for k, v in launch.kwargs.items()))
            first = kept.get(key)
            if first is None:
                kept[key] = launch
                continue
            first.hints = [h for h in first.hints if h.scope != "guard" or h in launch.hints]
            if first.condition is not None:
                conds = [first.condition, launch.condition]
                first.condition = None if None in conds else " or ".join(dict.fromkeys(conds))
        launches[before:] = list(kept.values())
        self._machine_hints(launches[before:], call, scope)
        unique = list(dict.fromkeys((e.path, e.message, e.line) for e in self.result.errors[errors:]))
        self.result.errors[errors:] = [FileError(*e) for e in unique]

    @property
    def machine(self) -> Machine:
        if self._machine is None:
            self._machine = Machine(self)
        return self._machine

    def _machine_hints(self, launches: list[Launch], call, scope: Scope) -> None:
        """The GPU the code around a launch names: the scheduler its function asks, the branches it is in."""
        if not launches:
            return
        m = self.machine
        extra = m.scheduler(scope) + m.frame_guards(self.table(scope).call_frames.get(id(call), ())) + m.skips(scope)
        if extra:
            for launch in launches:
                launch.hints = dedupe_hints(list(launch.hints) + extra)

    @staticmethod
    def _mark_disabled(launches: list[Launch], lines: LineIndex, offset: int) -> None:
        """``# kv4lint: disable=...`` right above the call's line or at its end (in this text: a notebook
        cell, a Markdown block)."""
        line = lines.line(offset)
        codes = codes_above(lines.line_text, line) | trailing_codes(lines.line_text(line))
        if codes:
            for launch in launches:
                launch.disabled = frozenset(launch.disabled) | codes

    def _launch_error(self, call, message: str, *, internal: bool = False) -> None:
        line = None
        try:
            line = LineIndex(self.text).line(self.start(call))
        except Exception:  # noqa: BLE001
            pass
        if self.origin is not None:
            message = f"embedded Python: {message}" + (f" (line {line} of the block)" if line else "")
            line = None
        self.result.errors.append(FileError(self.path, message, line, internal=internal))

    def _positions(self):
        try:
            return Positions(self.text, self.module, self.idx.top, self.top_lines)
        except ImportError:  # pragma: no cover - libcst internals moved: use its public provider
            lines = LineIndex(self.text)
            ranges = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
            return ProvidedPositions({id(n): (lines.offset(r.start.line, r.start.column + 1),
                                      lines.offset(r.end.line, r.end.column + 1)) for n, r in ranges.items()})

    def classify(self, func, scope) -> tuple[str, str] | None:
        # nbconvert's spelling of `!cmd` and `%%bash` cells: get_ipython().system("cmd")
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call) \
                and isinstance(func.value.func, cst.Name) and func.value.func.value == "get_ipython":
            if func.attr.value in ("system", "getoutput"):
                return ("ipython", "system")
            if func.attr.value == "run_cell_magic":
                return ("ipython", "cell")
            return None
        if isinstance(func, cst.Name):
            term = func.value
        elif isinstance(func, cst.Attribute):
            term = func.attr.value
        else:
            return None
        q = self.qualify(func, scope)
        if q is None:
            return None
        term = q.rsplit(".", 1)[-1]  # through import aliases
        # sglang.multimodal_gen (diffusion) has its own ServerArgs and helpers: not the LLM server's.
        sgl = (q.startswith("sglang.") or q == "sglang") and not q.startswith("sglang.multimodal_gen")
        if term == "from_cli_args" and sgl and q.endswith(".ServerArgs.from_cli_args"):
            return ("from_cli_args", q)
        if sgl and term in ("ServerArgs", "Engine", "Runtime"):
            return ("kwargs", term)
        if sgl and term == "prepare_server_args":
            return ("prepare", q)
        if term in HELPERS and (sgl or q.startswith("<unbound>.")):
            return ("helper", term)
        if term == "launch_server_cmd" and (sgl or q.startswith("<unbound>.")):
            return ("cmd", q)
        if q in SUBPROCESS_ARGV:
            return ("subprocess", q)
        if q in SHELL_ONLY:
            return ("shell", q)
        if q in ASYNC_EXEC:
            return ("async_exec", q)
        if q in EXEC_V:
            return ("exec_v", q)
        if q in EXEC_L:
            return ("exec_l", q)
        return None

    # -- launches ----------------------------------------------------------
    def env_at(self, call, scope: Scope) -> EvalEnv:
        frames = self.table(scope).call_frames.get(id(call), ())
        return EvalEnv(scope, self.start(call), frames)

    def launch(self, call, scope: Scope, kind: tuple[str, str]) -> None:
        what, name = kind
        env = self.env_at(call, scope)
        if what == "kwargs":
            self.kwargs_launch(call, env, name)
        elif what == "from_cli_args":
            self.from_cli_args(call, env)
        elif what == "prepare":
            arg = call_argument(call, 0, "argv")
            if arg is None:
                raise NotALaunch
            self.argv_launch(call, env, "prepare_server_args", self.ev(arg, env), config="prepare_server_args")
        elif what == "helper":
            self.helper_launch(call, env, name)
        elif what == "cmd":
            self.cmd_launch(call, env)
        elif what == "subprocess":
            self.subprocess_launch(call, env)
        elif what == "shell":
            arg = call_argument(call, 0, "command") or call_argument(call, 0, "cmd")
            if arg is None:
                raise NotALaunch
            self.shell_launch(call, env, self.ev(arg, env), call_argument(call, None, "env"))
        elif what == "ipython":
            if name == "system":
                arg = call_argument(call, 0, "cmd")
            else:
                magic = call_argument(call, 0, "magic_name")
                m = self.ev(magic, env) if magic is not None else None
                if not (isinstance(m, StrValue) and m.text in ("bash", "sh", "script")):
                    raise NotALaunch
                arg = call_argument(call, 2, "cell")
            if arg is None:
                raise NotALaunch
            v = self.ev(arg, env)
            if isinstance(v, StrValue) and name == "system":
                v = ipython_expand(v)  # IPython substitutes {expr} in ! commands before the shell runs
            self.shell_launch(call, env, v)
        elif what == "service":
            self.service_launch(call, scope, env)
        elif what == "async_exec":
            self.words_launch(call, env, self.argv_of([a for a in call.args if a.keyword is None], env))
        elif what == "exec_v":
            arg = call_argument(call, EXEC_V[name], "argv")
            if arg is None:
                raise NotALaunch
            self.words_launch(call, env, self.ev(arg, env), envarg=call_argument(call, EXEC_V[name] + 1, "env"))
        elif what == "exec_l":
            first, has_env = EXEC_L[name]
            pos = [a for a in call.args if a.keyword is None]
            if has_env and pos:
                envarg, pos = pos[-1].value, pos[:-1]
            else:
                envarg = None
            self.words_launch(call, env, self.argv_of(pos[first:], env), envarg=envarg)

    def argv_of(self, args, env: EvalEnv) -> ListValue:
        """The argv that positional ``args`` spell (``os.execl(path, *argv)``): ``*x`` spliced when ``x`` is a
        known list, else an unknown splat."""
        items = []
        for a in args:
            v = self.ev(a.value, env)
            if a.star == "*":
                items.extend(v.items if isinstance(v, ListValue) else [
                             ListItem(UnknownValue(self.span(a.value), splat=True))])
            else:
                items.append(ListItem(v))
        return ListValue(items)

    def _new_launch(self, call, form: str, entry: str, **kw) -> Launch:
        return Launch(path=self.path, form=form, entry=entry, span=self.fanchor(self.span(call)),
                      anchor=self.fanchor(self.span(call.func)), language="python", **kw)

    def kwargs_launch(self, call, env: EvalEnv, entry: str) -> None:
        if entry in ("Engine", "Runtime") and any(
                a.keyword is not None and a.keyword.value == "server_args" for a in call.args):
            raise NotALaunch  # the ServerArgs(...) it is given is the launch
        kwargs: dict[str, Value] = {}
        positional: list[Value] = []
        unknown = False
        for i, a in enumerate(call.args):
            rm = self.remove_arg(call, i)
            if a.star == "**":
                d = self.ev(a.value, env)
                if isinstance(d, DictValue):
                    for k, item in d.entries.items():
                        self._set_kwarg(kwargs, k, item.val, item.remove)
                    unknown = unknown or d.open
                else:
                    unknown = True
            elif a.star == "*":
                v = self.ev(a.value, env)
                if isinstance(v, ListValue):
                    positional.extend(self.value(i2.val, i2.remove) for i2 in v.items)
                else:
                    positional.append(Value.unknown(self.fanchor(self.span(a.value)), splat=True))
                    unknown = True
            elif a.keyword is not None:
                self._set_kwarg(kwargs, a.keyword.value, self.ev(a.value, env), rm)
            else:
                positional.append(self.value(self.ev(a.value, env), rm))
        launch = self._new_launch(call, "kwargs", entry, kwargs=kwargs, positional=positional,
                                  unknown_kwargs=unknown)
        launch.hints.extend(self.env_hints(env))
        self.result.launches.append(launch)

    def _set_kwarg(self, kwargs: dict, key: str, val, rm: Span | None) -> None:
        if isinstance(val, ConstValue) and val.kind == "none":
            kwargs.pop(key, None)  # None is every optional field's default
            return
        kwargs.pop(key, None)
        kwargs[key] = self.value(val, rm)

    def from_cli_args(self, call, env: EvalEnv) -> None:
        arg = call_argument(call, 0, "args")
        if arg is None:
            raise NotALaunch
        target, tenv = arg, env
        if isinstance(arg, cst.Name):
            found = self.assigned_expr(arg, env)
            if found is None:
                raise NotALaunch
            target, tenv = found
        if not (isinstance(target, cst.Call) and isinstance(target.func, cst.Attribute)
                and target.func.attr.value == "parse_args"):
            raise NotALaunch
        lst = call_argument(target, 0, "args")
        if lst is None:
            raise NotALaunch  # parses sys.argv: nothing to see here
        self.argv_launch(call, env, "ServerArgs.from_cli_args", self.ev(lst, tenv))

    def helper_launch(self, call, env: EvalEnv, name: str) -> None:
        h = HELPERS[name]
        model = call_argument(call, h.model, "model")
        lst = call_argument(call, h.index, h.param)
        synth = Value("--model-path")
        head: list[Value] = []
        tail: list[Value] = []
        mv = self.words(ListValue([ListItem(self.ev(model, env))]), None)[0] if model is not None else \
            Value.unknown(self.fanchor(self.span(call)))
        if h.model_last:
            tail = [synth, mv]
        else:
            head = [synth, mv]
        head.extend(Value(t) for t in h.prefix)
        items = self.ev(lst, env) if lst is not None else ListValue([])
        other = self.words(items, lst)
        if h.device and self._device_auto(call, env) and any(
                (w.text is None and w.splat) or (w.text or "").split("=", 1)[0] == "--device" for w in other):
            # device="auto": popen_launch_server appends --device <detected> after other_args,
            # overriding theirs (docs/sglang-rules.md §6); without one in other_args the server detects the same.
            other = [*other, Value("--device"), Value.unknown()]
        argv = [*head, *other, *tail]
        launch = self._new_launch(call, "argv", name, argv=argv)
        envarg = call_argument(call, None, "env")
        launch.hints.extend(self.env_hints(env, envarg))
        if name in CONFIG_HELPERS:
            launch.config_via = "sglang.launch_server"
        self.result.launches.append(launch)

    def _device_auto(self, call, env: EvalEnv) -> bool:
        d = call_argument(call, None, "device")
        if d is None:
            return True
        v = self.ev(d, env)
        return not (isinstance(v, StrValue) and v.known and v.text != "auto")

    def cmd_launch(self, call, env: EvalEnv) -> None:
        arg = call_argument(call, 0, "command")
        if arg is None:
            raise NotALaunch
        v = self.ev(arg, env)
        if not isinstance(v, StrValue):
            raise NotALaunch
        # sglang.utils.execute_shell_command: backslash-newlines and backslashes become
        # spaces, then str.split() (no shell quoting); leading KEY=VALUE words are env vars.
        chars = chars_of(v)
        norm = []
        k = 0
        while k < len(chars):
            c = chars[k]
            if c[0] == "\\" and k + 1 < len(chars) and chars[k + 1][0] == "\n":
                norm.append((" ", None, c[2]))
                k += 2
                continue
            norm.append((" ", None, c[2]) if c[0] == "\\" else c)
            k += 1
        words = split_on_whitespace(norm)
        hints: list[Hint] = []
        i = 0
        while i < len(words):
            w = words[i]
            t = w.text if isinstance(w, StrValue) else None
            if t is not None and "=" in t and not t.startswith("-") and not t.startswith("/"):
                key, _, val = t.partition("=")
                if key and key.replace("_", "").isalnum():
                    hints.extend(env_hints(key, val, self.fanchor(
                        contiguous_span([o for p in w.parts for o in p.offs]))))
                    i += 1
                    continue
            break
        words = words[i:]
        vals = []
        for k, w in enumerate(words):
            vals.append(self.value(w, self._word_remove(w, words[k + 1] if k + 1 < len(words) else None)))
        cmd = unwrap([ArgWord(v_) for v_ in vals])
        m = cmd.match if cmd is not None else None
        if m is None:
            raise NotALaunch
        launch = self._new_launch(call, "argv", "launch_server_cmd", argv=[w.value for w in cmd.words[m.start:]])
        launch.hints.extend(hints)
        launch.hints.extend(fact_hints(cmd.facts, ArgWord.anchor))
        launch.hints.extend(self.env_hints(env))
        if m.entry in CONFIG_ENTRIES:
            launch.config_via = m.entry
        self.result.launches.append(launch)

    def subprocess_launch(self, call, env: EvalEnv) -> None:
        arg = call_argument(call, 0, "args")
        if arg is None:
            raise NotALaunch
        shell = call_argument(call, None, "shell")
        shell_v = self.ev(shell, env) if shell is not None else None
        truth = truth_of(shell_v) if shell is not None else False
        is_shell = truth is True
        not_shell = truth is False
        v = self.ev(arg, env)
        envarg = call_argument(call, None, "env")
        if isinstance(v, StrValue):
            if not_shell:
                raise NotALaunch  # a program name, not a command line
            self.shell_launch(call, env, v, envarg)
        elif isinstance(v, ListValue):
            if is_shell:
                if v.items and isinstance(v.items[0].val, StrValue):
                    self.shell_launch(call, env, v.items[0].val, envarg)
                    return
                raise NotALaunch
            self.words_launch(call, env, v, envarg=envarg)
        else:
            raise NotALaunch

    def words_launch(self, call, env: EvalEnv, lst, *, envarg=None) -> None:
        if not isinstance(lst, ListValue):
            raise NotALaunch
        words = [ArgWord(self.value(it.val, it.remove), item=it.val,
                         key="sys.executable" if isinstance(it.val, UnknownValue) and it.val.tag == "python" else None)
                 for it in lst.items]
        cmd = unwrap(words)
        if cmd is None:
            raise NotALaunch
        hints = fact_hints(cmd.facts, ArgWord.anchor)
        inner = cmd.shell_code
        if inner is not None:
            if not isinstance(inner.item, StrValue):
                raise NotALaunch
            self.shell_launch(call, env, inner.item, envarg, extra_hints=hints)
            return
        m = cmd.match
        if m is None:
            raise NotALaunch
        launch = self._new_launch(call, "argv", m.entry, argv=[w.value for w in cmd.words[m.start:]])
        launch.hints.extend(hints)
        launch.hints.extend(self.env_hints(env, envarg))
        self.result.launches.append(launch)

    def argv_launch(self, call, env: EvalEnv, entry: str, lst, *, config: str | None = None) -> None:
        if not isinstance(lst, ListValue):
            raise NotALaunch
        argv = self.words(lst, None)
        launch = self._new_launch(call, "argv", entry, argv=argv)
        launch.hints.extend(self.env_hints(env))
        if config:
            launch.config_via = "sglang.launch_server"
        self.result.launches.append(launch)

    def shell_launch(self, call, env: EvalEnv, v, envarg=None, *, extra_hints: list[Hint] | None = None) -> None:
        if not isinstance(v, StrValue):
            raise NotALaunch
        text, omap, holes = self.embed(v)
        if "sglang" not in text:
            raise NotALaunch
        scan_shell = nested("shell")

        hints = list(extra_hints or []) + self.env_hints(env, envarg)
        seed = {}
        if envarg is not None:
            d = self.ev(envarg, env)
            if isinstance(d, DictValue):
                for k, item in d.entries.items():
                    if isinstance(item.val, StrValue) and item.val.known:
                        seed[k] = item.val.text
        if not shell_may_launch(text, seed):
            raise NotALaunch  # no KV cache option or --config: nothing to check, and maybe not meant as shell
        res = scan_shell(text, self.path, origin=omap, env=seed or None, hints=hints or None,
                         file_text=self.text if self.origin is None else None)
        for launch in res.launches:
            self._unhole(launch, holes)
            self.result.launches.append(launch)
        self.result.errors.extend(res.errors)

    # -- services that return their command: BentoML ---------------------------------------------------------

    def services(self) -> list[tuple]:
        """The ``return`` statements of each ``__command__`` of a class decorated ``@bentoml.service(...)``: BentoML
        runs the list it returns as the service's server; read as candidates of kind ``service``."""
        out = []
        for cls in self.idx.classes:
            if not any(self.qualify(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator,
                                    cls.parent) == "bentoml.service" for d in cls.node.decorators
                       if isinstance(d.decorator, (cst.Call, cst.Name, cst.Attribute))):
                continue
            for m in cls.children:
                if m.kind == "function" and m.node.name.value == "__command__":
                    out += [(ret, m, ("service", cls)) for _f, ret in _walk(m.node.body)
                            if isinstance(ret, cst.Return) and ret.value is not None]
        return out

    def service_launch(self, ret, method: Scope, env: EvalEnv) -> None:
        """``return ["python", "-m", "sglang.launch_server", ...]`` in a BentoML service's ``__command__``; the
        environment its decorator declares (``envs=[{"name": ..., "value": ...}]``) gives ``os.environ.get``'s
        values there."""
        cls = method.parent
        declared: dict[str, object] = {}
        for d in cls.node.decorators:
            envs = call_argument(d.decorator, None, "envs") if isinstance(d.decorator, cst.Call) else None
            v = self.ev(envs, EvalEnv(cls.parent, self.start(cls.node), ())) if envs is not None else None
            for item in v.items if isinstance(v, ListValue) else []:
                entry = item.val
                name = entry.entries.get("name") if isinstance(entry, DictValue) else None
                value = entry.entries.get("value") if isinstance(entry, DictValue) else None
                if name is not None and value is not None and isinstance(name.val, StrValue) and name.val.known:
                    declared[name.val.text] = value.val
        self.declared_env = declared
        try:
            lst = self.ev(ret.value, env)
        finally:
            self.declared_env = None
        if not isinstance(lst, ListValue):
            raise NotALaunch
        words = [ArgWord(self.value(it.val, it.remove), item=it.val) for it in lst.items]
        cmd = unwrap(words)
        m = cmd.match if cmd is not None else None
        if m is None:
            raise NotALaunch
        self.result.launches.append(Launch(
            path=self.path, form="argv", entry=m.entry, span=self.fanchor(self.span(ret)),
            anchor=self.fanchor(self.span(method.node.name)), argv=[w.value for w in cmd.words[m.start:]],
            language="python", hints=fact_hints(cmd.facts, ArgWord.anchor)))

    # -- server-test classes: the launch a base class makes, run as each subclass -------------------------

    def subclass_launches(self, call, scope: Scope, kind: tuple[str, str], lines: LineIndex) -> None:
        """A launch in a method of a class of this module that reads the class's attributes (``popen_launch_server(
        cls.model, ..., other_args=cls.other_args)`` in ``setUpClass``) runs once per subclass that sets them: one
        launch per such subclass, read as that class and reported there."""
        method = scope
        while method is not None and method.kind == "lambda":
            method = method.parent
        owner = method.parent if method is not None and method.kind == "function" else None
        if owner is None or owner.kind != "class":
            return
        attrs = {n.attr.value for _f, n in _walk(method.node) if isinstance(n, cst.Attribute)
                 and isinstance(n.value, cst.Name) and n.value.value in ("cls", "self")}
        for sub in self.subclasses(owner):
            if not any(self.sets_attr(sub, a) for a in attrs):
                continue
            before = len(self.result.launches)
            self.bound_class = sub
            try:
                read = self.read(call, scope, kind, before)
            finally:
                self.bound_class = None
            if read:
                self._as_class(sub, self.result.launches[before:], lines)

    def test_classes(self) -> list[tuple[Scope, str]]:
        """The classes of this module that derive from one of SGLang's server-test base classes
        (:data:`~kv4lint.sglang.commands.TEST_BASES`, imported from SGLang) and set an attribute its launch reads."""
        out = []
        for cls in sorted(self.idx.classes, key=lambda c: self.start(c.node)):
            base = self.test_base(cls)
            if base is not None and any(self.sets_attr(c, a) for c in self.mro(cls) for a in TEST_BASES[base].attrs):
                out.append((cls, base))
        return out

    def test_base(self, cls: Scope) -> str | None:
        for c in self.mro(cls):
            for b in c.node.bases:
                q = self.qualify(b.value, c.parent) if isinstance(b.value, (cst.Name, cst.Attribute)) else None
                term = q.rsplit(".", 1)[-1] if q else None
                if term in TEST_BASES and q.startswith("sglang.") and term not in self.idx.defined:
                    return term
        return None

    def test_class_launch(self, cls: Scope, name: str, lines: LineIndex) -> None:
        """``class TestX(DefaultServerBase): model = ...; other_args = [...]``: the launch the base's ``setUpClass``
        makes with this class's attributes (``popen_launch_server(cls.model, ..., other_args=...)``)."""
        base = TEST_BASES[name]
        self.unresolved, self.steps = None, 0
        env = EvalEnv(cls, self.start(cls.node), ())

        def attr(a: str):
            owner = next((c for c in self.mro(cls) if self.sets_attr(c, a)), None)
            if owner is None:
                default = base.defaults.get(a)
                return literal_value(default, LITERAL) if default is not None else UnknownValue(
                    self.span(cls.node.name), env.org)
            return self.attr_value(owner, a, self.span(cls.node.name), env, inherited=self.inherited(owner, a),
                                   at_value=True)

        items: list[ListItem] = []
        for word in base.words:
            if word.startswith("*"):
                v = attr(word[1:])
                items.extend(v.items if isinstance(v, ListValue) else [
                    ListItem(UnknownValue(self.span(cls.node.name), splat=True))])
            elif "{" in word:
                head, rest = word.split("{", 1)
                v = attr(rest.split("}", 1)[0])
                known = isinstance(v, (StrValue, ConstValue)) and v.text is not None
                items.append(ListItem(literal_value(head + str(v.text), LITERAL) if known
                                      else UnknownValue(self.span(cls.node.name))))
            else:
                items.append(ListItem(literal_value(word, LITERAL)))
        model = self.words(ListValue([ListItem(attr(base.model))]), None)[0]
        argv = [Value("--model-path"), model, *self.words(ListValue(items), None)]
        launch = Launch(path=self.path, form="argv", entry="popen_launch_server",
                        span=self.fanchor(self.span(cls.node)), anchor=self.fanchor(self.span(cls.node.name)),
                        argv=argv, language="python", config_via="sglang.launch_server")
        self.result.launches.append(launch)
        if self.unresolved:
            self._launch_error(cls.node, f"a value of this launch {self.unresolved} (the limit kv4lint reads): "
                                         "not resolved")
        self._mark_disabled([launch], lines, self.start(cls.node))

    def _as_class(self, cls: Scope, launches: list[Launch], lines: LineIndex) -> None:
        """Launches read as class ``cls``: reported at the class (its name), whose attributes they take."""
        span, anchor = self.fanchor(self.span(cls.node)), self.fanchor(self.span(cls.node.name))
        for launch in launches:
            launch.span, launch.anchor = span, anchor
        self._mark_disabled(launches, lines, self.start(cls.node))

    # -- argv helpers ------------------------------------------------------
    def words(self, lst, node) -> list[Value]:
        if isinstance(lst, ListValue):
            out = []
            for item in lst.items:
                v = item.val
                if isinstance(v, ConstValue) and v.kind == "none":
                    # None in an argv list: an error at run time, or a value set elsewhere (a subclass's).
                    out.append(Value.unknown(self.fanchor(v.org.use or v.where)))
                    continue
                out.append(self.value(v, item.remove))
            return out
        where = where_of(lst) or (self.span(node) if node is not None else None)
        return [Value.unknown(self.fanchor(origin_of(lst).use or where), splat=True)]

    # -- hints ---------------------------------------------------------------
    def env_hints(self, env: EvalEnv, envarg=None) -> list[Hint]:
        out: list[Hint] = []
        if envarg is not None:
            d = self.ev(envarg, env)
            if isinstance(d, DictValue):
                for k, item in d.entries.items():
                    t = item.val.text if isinstance(item.val, StrValue) else (
                        item.val.text if isinstance(item.val, ConstValue) else None)
                    out.extend(env_hints(k, t, self.fanchor(d.keyspans.get(k) or where_of(item.val))))
        # os.environ[...] = ... before the launch, in its scope and the module's.
        scopes = []
        s = env.scope
        while s is not None:
            scopes.append(s)
            s = s.parent
        for s in scopes:
            for ev in self.table(s).env_events:
                if s is env.scope and ev.pos > env.pos:
                    continue
                out.extend(self._env_event_hints(ev))
        return out

    def _env_event_hints(self, ev: Event) -> list[Hint]:
        eenv = EvalEnv(ev.scope, ev.pos, ev.frames)
        if ev.kind == "setitem":
            base, key, stmt = ev.extra
            if self.qualify(base, ev.scope) != "os.environ":
                return []
            k = self.ev(key, eenv)
            if not (isinstance(k, StrValue) and k.known):
                return []
            val = self.ev(ev.node, eenv)
            t = val.text if isinstance(val, (StrValue, ConstValue)) else None
            return env_hints(k.text, t, self.fanchor(self.span(key)))
        recv, meth = ev.extra
        call = ev.node
        if meth == "putenv":
            pairs = [(call_argument(call, 0, "key"), call_argument(call, 1, "value"))]
        elif self.qualify(recv, ev.scope) != "os.environ":
            return []
        elif meth in ("setdefault", "__setitem__"):
            pairs = [(call_argument(call, 0, "key"), call_argument(call, 1, "default"))]
        elif meth == "update":
            out = []
            for a in call.args:
                if a.keyword is not None:
                    val = self.ev(a.value, eenv)
                    out.extend(env_hints(a.keyword.value, val.text if isinstance(val, (StrValue, ConstValue)) else None,
                                         self.fanchor(self.span(a.keyword))))
                else:
                    d = self.ev(a.value, eenv)
                    if isinstance(d, DictValue):
                        for k, item in d.entries.items():
                            t = item.val.text if isinstance(item.val, (StrValue, ConstValue)) else None
                            out.extend(env_hints(k, t, self.fanchor(d.keyspans.get(k))))
            return out
        else:
            return []
        out = []
        for k_node, v_node in pairs:
            if k_node is None:
                continue
            k = self.ev(k_node, eenv)
            if isinstance(k, StrValue) and k.known:
                val = self.ev(v_node, eenv) if v_node is not None else None
                out.extend(env_hints(k.text, val.text if isinstance(val, (StrValue, ConstValue)) else None,
                                     self.fanchor(self.span(k_node))))
        return out
