"""SGLang's commands: the wrappers a launch hides behind and the entry points it runs.

One model for every reader (shell scripts, ``subprocess`` argv lists, shell
strings in Python, Dockerfile ``CMD``/``RUN``, compose and Kubernetes
``command:``, Makefile recipes, Markdown fences, notebook ``!`` lines):

* :func:`unwrap` strips what stands before the real program (``env``,
  ``VAR=x``, ``nohup``, ``exec``, ``timeout``, ``srun``, ``numactl``,
  ``taskset``, ``sudo``, ``uv run``, ``poetry run``, ``conda run``,
  ``docker``/``podman run IMAGE``, ``bash -c``, ``ssh``, ``tmux``, ...) and
  says what the command really runs: an SGLang entry point (:func:`match_entry`),
  a shell string, Python code, or code read from stdin.  On the way it
  records what the wrappers tell about the machine as :class:`Fact` records
  (images, devices, environment variables, ``--gpus``); the readers turn them
  into target hints.
* :func:`match_entry` recognises the entry points that take server arguments
  (docs/sglang-rules.md §6): ``python -m sglang.launch_server``, ``sglang serve``, ...
* the Python entry points: SGLang's API (:data:`PY_API`), its test and doc
  helpers (:data:`HELPERS`) and the standard library's ways to run a command
  (:data:`SUBPROCESS_ARGV`, :data:`SHELL_ONLY`, ...), shared by the Python
  frontend and the pre-filter.

This module is a leaf: it imports nothing of kv4lint's.  It works on any
word type that has the few members of :class:`Word` (the shell's expanded
fields, an argv list's values), so a new wrapper is added here once, for all.
"""

from __future__ import annotations

import copy
import itertools
import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Protocol

__all__ = ["ASYNC_EXEC", "CONFIG_ENTRIES", "CONFIG_HELPERS", "Command", "DOC_HELPERS", "EXEC_L", "EXEC_V",
           "EntryMatch", "Fact", "HELPERS", "HYDRA_ENTRIES", "HYDRA_MODULES", "Helper",
           "PREFIXED_ENTRIES", "PREFIXED_TRAINERS", "PY_API",
           "PY_COMMAND_CALLS", "RECORDERS", "SERVER_MODULES", "SERVER_MODULE_PREFIX",
           "SHELLS", "SHELL_ONLY", "SUBPROCESS_ARGV", "TEST_BASES", "TestBase", "WRAPPERS", "is_python",
           "is_recorder", "match_entry", "unwrap"]

# python -m MODULE ...   (modules that parse ServerArgs.add_cli_args; docs/sglang-rules.md §6)
SERVER_MODULES: dict[str, str] = {
    "sglang.launch_server": "sglang.launch_server",
    "sglang.bench_one_batch": "sglang.bench_one_batch",
    "sglang.bench_offline_throughput": "sglang.bench_offline_throughput",
    "sglang.bench_one_batch_server": "sglang.bench_one_batch_server",
    "sglang.benchmark.one_batch": "sglang.benchmark.one_batch",
    "sglang.benchmark.offline_throughput": "sglang.benchmark.offline_throughput",
    "sglang.benchmark.one_batch_server": "sglang.benchmark.one_batch_server",
    "sglang.compile_deep_gemm": "sglang.compile_deep_gemm",
}
# What the name of every module of SERVER_MODULES starts with ("sglang."): a command whose text holds it most likely
# launches (kv4lint.frontends.shell.inert reads such a command whole at once).
SERVER_MODULE_PREFIX = os.path.commonprefix(sorted(SERVER_MODULES))

# RL trainers that start SGLang engines from prefixed options (slime, miles: ``python3 train.py ...
# --sglang-kv-cache-dtype fp8_e4m3 --sglang-attention-backend fa3``): each ``--sglang-X`` is SGLang's ``--X``;
# their other options (Megatron's ``--attention-backend flash`` ...) are not SGLang's.
PREFIXED_TRAINERS: dict[str, str] = {"train.py": "slime train", "train_async.py": "slime train"}
PREFIXED_ENTRIES: dict[str, str] = {"slime train": "--sglang-"}
# verl's trainers take Hydra overrides; ``actor_rollout_ref.rollout.engine_kwargs.sglang.FIELD=VALUE`` (with an
# optional ``+``/``++``) is a keyword argument of the SGLang engine it starts (a ServerArgs field).
HYDRA_MODULES: dict[str, str] = {"verl.trainer.main_ppo": "verl", "verl.trainer.main_generation": "verl",
                                 "verl.trainer.main_generation_server": "verl"}
HYDRA_ENTRIES: dict[str, str] = {"verl": "actor_rollout_ref.rollout.engine_kwargs.sglang."}

# Entry points that honour --config (docs/sglang-rules.md §5.3): only prepare_server_args users.
CONFIG_ENTRIES = frozenset({"sglang.launch_server", "sglang serve"})

_PYTHON = re.compile(r"^(?:.*/)?(?:python(?:[23](?:\.\d+)?)?|pypy3?)(?:\.exe)?$")
_PYTHON_VAR = re.compile(r"^\$\{?(?:PYTHON|PY|PYTHON_BIN|PYTHON_EXE|PYTHON_EXECUTABLE|PYBIN|PY_BIN|INTERPRETER)\}?$",
                         re.I)
_SGLANG_CLI = re.compile(r"^(?:.*/)?sglang$")

# Interpreter options that take a value (python -X opt, -W arg, ...).
_PY_OPTS_WITH_VALUE = {"-X", "-W", "-Q"}


def is_python(word: str | None) -> bool:
    """``python``, ``python3``, ``python3.11``, ``/usr/bin/python3``, ``$PYTHON``, ``sys.executable``."""
    if word is None:
        return False
    return bool(_PYTHON.match(word) or _PYTHON_VAR.match(word) or word == "sys.executable")


# The records below are plain classes, not dataclasses: the pre-filter imports this module in every run, and
# ``dataclasses`` (with ``inspect``, ``ast`` ...) plus their generated code cost more than a run over a tree
# without launches needs (issue 21).  Their fields are read, never changed.


class EntryMatch:
    """An SGLang entry point at the start of a command: its ``entry`` (``"sglang.launch_server"``,
    ``"sglang serve"`` ...) and ``start``, the index of the first server argument in the word list."""

    __slots__ = ("entry", "start")

    def __init__(self, entry: str, start: int):
        self.entry = entry
        self.start = start


def match_entry(words: list[str | None]) -> EntryMatch | None:
    """Match the start of a command's words (wrappers already removed).

    ``words[i]`` is ``None`` where the word is unknown.  Recognises
    ``python[3[.x]] [interpreter options] -m MODULE ...``, ``-mMODULE``,
    ``sglang serve ...`` (also ``/path/to/sglang serve``), and
    ``python -m sglang.cli.main serve`` / ``python -m sglang serve``.
    """
    if not words:
        return None
    w0 = words[0]
    if w0 is not None and _SGLANG_CLI.match(w0):
        if len(words) > 1 and words[1] == "serve":
            return EntryMatch("sglang serve", 2)
        return None
    if not is_python(w0):
        return None
    i = 1
    while i < len(words):
        w = words[i]
        if w is None:
            return None
        if w == "-m" and i + 1 < len(words):
            mod = words[i + 1]
            return _module(mod, words, i + 2)
        if w.startswith("-m") and len(w) > 2:
            return _module(w[2:], words, i + 1)
        if w in _PY_OPTS_WITH_VALUE:
            i += 2
            continue
        if w.startswith("-") and w != "-":
            i += 1
            continue
        entry = PREFIXED_TRAINERS.get(w.rsplit("/", 1)[-1])
        if entry is not None and any(x is not None and x.startswith(PREFIXED_ENTRIES[entry]) for x in words[i:]):
            return EntryMatch(entry, i + 1)
        return None  # a script path: not an SGLang module
    return None


def _module(mod: str | None, words: list[str | None], nxt: int) -> EntryMatch | None:
    if mod is None:
        return None
    if mod in SERVER_MODULES:
        return EntryMatch(SERVER_MODULES[mod], nxt)
    hydra = HYDRA_MODULES.get(mod)
    if hydra is not None and any(w is not None and HYDRA_ENTRIES[hydra] in w for w in words[nxt:]):
        return EntryMatch(hydra, nxt)
    if mod in ("sglang", "sglang.cli.main", "sglang.cli") and nxt < len(words) and words[nxt] == "serve":
        return EntryMatch("sglang serve", nxt + 1)
    return None


# ---------------------------------------------------------------------------
# Entry points in Python: SGLang's API, its test and doc helpers, and the standard library's ways to run a command

# SGLang's classes and functions that take server arguments.
PY_API = ("ServerArgs", "Engine", "Runtime", "prepare_server_args")


class Helper:
    """How one of SGLang's test helpers passes server arguments: ``model``, the positional index of the model
    argument; ``param`` and ``index``, the keyword and positional index of the server-argument list;
    ``prefix``, tokens the helper puts before the list; ``device``: it goes through
    ``popen_launch_server(device="auto")``; ``model_last``: ``--model-path MODEL`` after the list
    (``run_bench_one_batch``)."""

    __slots__ = ("model", "param", "index", "prefix", "device", "model_last")

    def __init__(self, model: int, param: str, index: int, prefix: tuple[str, ...] = (), device: bool = True,
                 model_last: bool = False):
        self.model = model
        self.param = param
        self.index = index
        self.prefix = prefix
        self.device = device
        self.model_last = model_last


# SGLang's test helpers (sglang/test/test_utils.py; signatures stable 0.5.6.post2-0.5.23).
HELPERS: dict[str, Helper] = {
    "popen_launch_server": Helper(0, "other_args", 4),
    "popen_launch_pd_server": Helper(0, "other_args", 4, device=False),
    "run_bench_serving": Helper(0, "other_server_args", 3),
    "run_bench_serving_multi": Helper(0, "other_server_args", 2),
    "run_bench_one_batch_server": Helper(0, "other_server_args", 4),
    "run_score_benchmark": Helper(0, "other_server_args", 3),
    "run_score_benchmark_multi": Helper(0, "other_server_args", 3),
    "run_embeddings_benchmark": Helper(0, "other_server_args", 4, ("--is-embedding",)),
    "run_embeddings_benchmark_multi": Helper(0, "other_server_args", 4, ("--is-embedding",)),
    "run_bench_one_batch": Helper(0, "other_args", 1, model_last=True),
    "run_bench_offline_throughput": Helper(0, "other_args", 1, device=False),
}


class TestBase:
    """How one of SGLang's server-test base classes launches the server in its ``setUpClass``
    (``popen_launch_server(cls.MODEL, ..., other_args=WORDS)``): ``model``, the class attribute holding the model
    path; ``words``, the server arguments, each a literal word, a word with ``{attr}`` replaced by a class
    attribute's value, or ``*attr``: a class attribute's list spliced in; ``defaults``: the values the base class
    itself gives those attributes (a subclass overrides them); ``attrs``: every attribute the launch reads."""

    __slots__ = ("model", "words", "defaults", "attrs")

    def __init__(self, model: str, words: tuple[str, ...], defaults: dict | None = None):
        self.model = model
        self.words = words
        self.defaults = defaults or {}
        names = [w[1:] if w.startswith("*") else w.split("{", 1)[1].split("}", 1)[0] for w in words
                 if w.startswith("*") or "{" in w]
        self.attrs = (model, *names)


# SGLang's server-test base classes (sglang/test/server_fixtures/*.py), by class name: a test class deriving from one
# and setting its attributes (``class TestX(DefaultServerBase): model = ...; other_args = [...]``) is a launch.
TEST_BASES: dict[str, TestBase] = {
    "DefaultServerBase": TestBase("model", ("*other_args",)),
    "MMMUServerBase": TestBase("model", ("--trust-remote-code", "--cuda-graph-max-bs", "64", "--enable-multimodal",
                                         "--mem-fraction-static", "{mem_fraction_static}", "*other_args"),
                               {"mem_fraction_static": 0.8}),
    "EagleServerBase": TestBase("target_model", (
        "--speculative-algorithm={spec_algo}", "--speculative-draft-model-path={draft_model}",
        "--speculative-num-steps={spec_steps}", "--speculative-eagle-topk={spec_topk}",
        "--speculative-num-draft-tokens={spec_tokens}", "--mem-fraction-static={mem_fraction_static}",
        "*extra_args"), {"spec_algo": "EAGLE", "spec_steps": 5, "spec_topk": 8, "spec_tokens": 64,
                         "mem_fraction_static": 0.7}),
}

# The docs' helper: launch_server_cmd("python -m sglang.launch_server ...").
DOC_HELPERS = ("launch_server_cmd",)
# Helper launches whose server honours --config (they run launch_server / sglang serve).
CONFIG_HELPERS = frozenset({"popen_launch_server", "popen_launch_pd_server", "run_bench_serving",
                            "run_bench_serving_multi", "run_bench_one_batch_server", "run_score_benchmark",
                            "run_score_benchmark_multi", "run_embeddings_benchmark",
                            "run_embeddings_benchmark_multi", "prepare_server_args"})

# The standard library's ways to run a command, by how their arguments are read.
SUBPROCESS_ARGV = frozenset({"subprocess.run", "subprocess.Popen", "subprocess.call", "subprocess.check_call",
                             "subprocess.check_output"})
SHELL_ONLY = frozenset({"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput",
                        "asyncio.create_subprocess_shell", "asyncio.subprocess.create_subprocess_shell"})
ASYNC_EXEC = frozenset({"asyncio.create_subprocess_exec", "asyncio.subprocess.create_subprocess_exec"})
# os.exec*/os.spawn*: index of the argv list (the *v* forms), or of the first argument and whether env is last
EXEC_V = {"os.execv": 1, "os.execve": 1, "os.execvp": 1, "os.execvpe": 1, "os.spawnv": 2, "os.spawnve": 2,
          "os.spawnvp": 2, "os.spawnvpe": 2, "os.posix_spawn": 1, "os.posix_spawnp": 1}
EXEC_L = {"os.execl": (1, False), "os.execlp": (1, False), "os.execle": (1, True), "os.execlpe": (1, True),
          "os.spawnl": (2, False), "os.spawnlp": (2, False), "os.spawnle": (2, True), "os.spawnlpe": (2, True)}
PY_COMMAND_CALLS = frozenset(SUBPROCESS_ARGV | SHELL_ONLY | ASYNC_EXEC | EXEC_V.keys() | EXEC_L.keys())


# ===========================================================================
# Wrappers


if TYPE_CHECKING:  # for type checkers only: the readers' word types have these members
    class Word(Protocol):
        """What :func:`unwrap` needs of one word of a command."""

        @property
        def text(self) -> str | None:
            """The word as the program sees it; ``None`` when (partly) unknown."""

        @property
        def prefix(self) -> str:
            """The known text before the first unknown part (all of it when known)."""

        @property
        def raw(self) -> str:
            """The word as written (``$PYTHON``), to recognise a program by its variable's name."""

        @property
        def suffix(self) -> str:
            """The known text after the last unknown part (all of it when known): ``/health`` of
            ``"http://$HOST/health"``, whose program name it tells whatever the unknown parts hold."""

        @property
        def unknown(self) -> bool:
            """Some of the word is not known statically."""

        @property
        def splat(self) -> bool:
            """An unknown word that may stand for any number of words (``$OPTS``)."""

        def tail(self, k: int) -> "Word":
            """The word from character ``k`` on (the value of ``--opt=value``)."""

        def synth(self, text: str) -> "Word":
            """A made-up word reported where this one is (``python`` for ``torchrun -m``)."""

        def concat(self, words: "Sequence[Word]") -> "Word":
            """The words joined by spaces, as one shell string (what ``eval`` runs)."""


class Fact:
    """What a wrapper says about the machine the program runs on.

    ``kind``: ``"env"`` (``name`` set to ``text``; ``text`` None when the value is
    unknown or passed through), ``"image"`` (a container image), ``"devices"``
    (``--device`` values, in ``words``), ``"platform"`` (``text`` is the platform), ``"gpu"`` (a Slurm GPU
    request: ``name`` is the option, ``text`` its value).
    ``word`` is where it was written; ``how`` says which wrapper option said it.
    A ``weak`` fact gives way to a stronger platform fact of its ``group``
    (``docker run --gpus all rocm/sglang``).
    """

    __slots__ = ("kind", "text", "word", "how", "name", "group", "weak", "words")

    def __init__(self, kind: str, text: str | None, word: object, how: str | None = None, name: str | None = None,
                 group: int = 0, weak: bool = False, words: tuple = ()):
        self.kind = kind
        self.text = text
        self.word = word
        self.how = how
        self.name = name
        self.group = group
        self.weak = weak
        self.words = words

    def in_group(self, group: int) -> Fact:
        """This fact, as one of the platform facts of ``group`` (a copy: the fields listed once, in __slots__)."""
        fact = copy.copy(self)
        fact.group = group
        return fact


_GROUPS = itertools.count(1)

# Slurm's options that request GPUs (their values are read by kv4lint.frontends.hints.slurm_hints).
SLURM_GPU_OPTIONS = frozenset({"--gres", "--gpus", "-G", "--gpus-per-node", "--gpus-per-task", "--gpus-per-socket",
                               "--tres-per-task", "--constraint", "-C", "--cluster-constraint"})


def _slurm_gpu(ex: "Command", prog: str, opt: str, v) -> None:
    """A Slurm GPU request on the launch's own ``srun``/``sbatch``/``salloc``: a ``gpu`` fact (``name``: the
    option)."""
    if opt in SLURM_GPU_OPTIONS and v is not None and v.text:
        ex.facts.append(Fact("gpu", v.text, v, how=prog, name=opt))


class Command:
    """What a command really runs, once its wrappers are stripped.

    ``words``: the program and its arguments; ``match``: the SGLang entry
    point they start with, or ``shell_code`` (``bash -c STRING``, ``ssh host
    STRING``), ``python_code`` (``python -c CODE``) or ``stdin`` (``"python"``
    or ``"shell"``: the program reads its code from stdin).  ``env``: the
    variables the wrappers set, as ``(name, value word or None, where)``;
    ``clean_env``: the program does not inherit the caller's environment.
    """

    __slots__ = ("words", "facts", "env", "clean_env", "match", "shell_code", "python_code", "stdin")

    def __init__(self, words: list):
        self.words = words
        self.facts: list[Fact] = []
        self.env: list[tuple[str, Word | None, Word]] = []
        self.clean_env = False
        self.match: EntryMatch | None = None
        self.shell_code: Word | None = None
        self.python_code: Word | None = None
        self.stdin: str | None = None

    @property
    def runs(self) -> bool:
        """Does it run something a reader follows (an entry point, shell or Python code)?"""
        return bool(self.match or self.shell_code or self.python_code or self.stdin)


def unwrap(words: Sequence[Word]) -> Command | None:
    """The command ``words`` run, through its wrappers; ``None`` when it is not one kv4lint follows."""
    return _UNWRAPPER.unwrap(list(words))


_HOLE = "\ue000"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_INIT_OPTS = "-e -p --rewrite"  # tini -e CODE -p SIGNAL, dumb-init --rewrite s:r


class _Spec:
    """How a wrapper's options are written: which take values (and how many)."""

    __slots__ = ("values", "flags", "long_value", "short_value", "unknown_operand")

    def __init__(self, values: dict[str, int] | str = "", flags: str = "", *, long_value: bool = True,
                 short_value: bool = False, unknown_operand: bool = False):
        if isinstance(values, str):
            values = {v: 1 for v in values.split()}
        self.values = values
        self.flags = set(flags.split())
        self.long_value = long_value  # an unlisted --long option takes a value
        self.short_value = short_value  # an unlisted -x option takes a value
        self.unknown_operand = unknown_operand  # an unknown word is the operand, never options


SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash", "mksh"})
_ASSIGN_WORD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")

# Options per wrapper.  Values: options followed by a value word; flags: without.
_SPEC_ENV = _Spec("-u --unset -C --chdir -S --split-string", "-i --ignore-environment -0 --null -v --debug",
                  long_value=False)
_SPEC_SUDO = _Spec("-u --user -g --group -C --close-from -D --chdir -p --prompt -r --role -t --type -T "
                   "--command-timeout -U --other-user -h --host",
                   "-E -H -n -b -k -K -l -P -S -s -i -A -B -e -v -V --login --shell --non-interactive "
                   "--background --set-home --stdin --askpass --bell --preserve-groups --preserve-env",
                   long_value=False)
_SPEC_EXEC = _Spec("-a", "-c -l")
_SPEC_NONE = _Spec("", "", long_value=False)
_SPEC_SETSID = _Spec("", "-c -f -w --ctty --fork --wait", long_value=False)
_SPEC_NICE = _Spec("-n --adjustment", "", long_value=False)
_SPEC_STDBUF = _Spec("-i -o -e --input --output --error", "")
_SPEC_TIME = _Spec("-f -o --format --output", "-p -v -a -q --portability --verbose --append --quiet",
                   long_value=False)
_SPEC_TIMEOUT = _Spec("-s -k --signal --kill-after", "--preserve-status --foreground -v --verbose -f")
_SPEC_NUMACTL = _Spec("-N -m -C -i -p -P -w -b --cpunodebind --membind --physcpubind --interleave --preferred "
                      "--preferred-many --weighted-interleave --cpubind --balancing",
                      "-a -l -s -H -S --all --localalloc --show --hardware --strict --touch", long_value=False)
_SPEC_TASKSET = _Spec("", "-a -p -c --all-tasks --pid --cpu-list -h -V", long_value=False)
_SPEC_IONICE = _Spec("-c -n -p -P -u --class --classdata --pid --pgid --uid", "-t --ignore", long_value=False)
_SPEC_SRUN = _Spec("-A -c -d -D -e -i -J -m -n -N -o -p -q -t -w -x -W -T -r -G -B -C -L -M -S",
                   "-l -u -v -X -Q -E -k -O -Z -H -s -h -V --exclusive --overcommit --label --unbuffered --verbose "
                   "--quiet --pty --overlap --no-kill --kill-on-bad-exit --oversubscribe --hold --exact --whole "
                   "--no-allocate --disable-status --multi-prog --preserve-env --spread-job --use-min-nodes "
                   "--test-only --contiguous --help --usage --version --container-remap-root "
                   "--no-container-remap-root --container-mount-home --no-container-mount-home "
                   "--container-writable --container-readonly --no-container-entrypoint --container-entrypoint "
                   "--no-container-env")
_SPEC_SBATCH = _SPEC_SRUN
_SPEC_MPI = _Spec({**{v: 1 for v in (
    "-np -n -c -N -npernode --npernode -npersocket --npersocket -H -host --host -hostfile --hostfile -machinefile "
    "--machinefile -x --map-by -map-by --bind-to -bind-to --rank-by -rank-by -wdir --wdir -wd -prefix --prefix "
    "-ppn -genvlist -hosts -f -iface -bootstrap -launcher -rf --rankfile -output-filename --output-filename "
    "--mca-params -am --am -tune --tune --app --personality --rank-file -rankfile").split()},
    **{v: 2 for v in "-mca --mca -gmca --gmca -genv -env --env".split()}},
    "--report-bindings -report-bindings --tag-output -tag-output --timestamp-output --allow-run-as-root "
    "--oversubscribe -oversubscribe --display-map -v --verbose -q --quiet --merge-stderr-to-stdout -bynode "
    "-byslot -nolocal -l -prepend-rank -genvall -genvnone -print-rank-map --noprefix -display-allocation "
    "--display-allocation --bind-to-core --bind-to-socket -bind-to-core -bind-to-socket")
_SPEC_TORCHRUN = _Spec("", "--standalone --no-python --no_python --run-path --run_path -m --module --use-env "
                           "--use_env --virtual-local-rank --virtual_local_rank", short_value=True)
_SPEC_UV = _Spec("--with --with-editable --with-requirements --python -p --project --directory --env-file --extra "
                 "--group --only-group --no-group --index --index-url --extra-index-url --default-index "
                 "--find-links -f --package --cache-dir --config-file --color --exclude-newer --index-strategy "
                 "--keyring-provider --resolution --prerelease --link-mode --refresh-package --reinstall-package "
                 "--upgrade-package -P --no-binary-package --no-build-package --config-setting -C "
                 "--python-platform --allow-insecure-host --no-extra",
                 "-m --module -s --script --gui-script -q -v --quiet --verbose", long_value=False)
_SPEC_CONDA = _Spec("-n --name -p --prefix --cwd",
                    "--no-capture-output --live-stream -v --verbose --debug-wrapper-scripts --dev -q --quiet -s",
                    long_value=False)
_SPEC_PIXI = _Spec("-e --environment --manifest-path", "", long_value=False)
_SPEC_DOCKER_RUN = _Spec(
    "-a --attach --add-host --annotation --blkio-weight --blkio-weight-device --cap-add --cap-drop --cgroup-parent "
    "--cgroupns --cidfile --cpu-count --cpu-percent --cpu-period --cpu-quota --cpu-rt-period --cpu-rt-runtime -c "
    "--cpu-shares --cpus --cpuset-cpus --cpuset-mems --device --device-cgroup-rule --device-read-bps "
    "--device-read-iops --device-write-bps --device-write-iops --dns --dns-option --dns-search --domainname "
    "--entrypoint -e --env --env-file --expose --gpus --group-add --health-cmd --health-interval --health-retries "
    "--health-start-period --health-start-interval --health-timeout -h --hostname --ip --ip6 --ipc --isolation "
    "--kernel-memory -l --label --label-file --link --link-local-ip --log-driver --log-opt --mac-address -m "
    "--memory --memory-reservation --memory-swap --memory-swappiness --mount --name --network --net "
    "--network-alias --net-alias --oom-score-adj --pid --pids-limit --platform -p --publish --pull --restart "
    "--runtime --security-opt --shm-size --stop-signal --stop-timeout --storage-opt --sysctl --tmpfs --ulimit -u "
    "--user --userns --uts -v --volume --volume-driver --volumes-from -w --workdir --hooks-dir --pod "
    "--cgroup-conf --chrootdirs --decryption-key --env-merge --gidmap --uidmap --subuidname --subgidname "
    "--init-path --label-file --passwd-entry --personality --preserve-fds --rdt-class --requires --seccomp-policy "
    "--secret --sdnotify --timeout --tz --umask --unsetenv --variant --arch --os --log-level --systemd",
    "-d --detach -i --interactive -t --tty --rm --privileged -P --publish-all --init --read-only --sig-proxy "
    "--disable-content-trust --no-healthcheck --oom-kill-disable -q --quiet --use-api-socket --replace --rmi "
    "--no-hosts --env-host --http-proxy --read-only-tmpfs --help")
_SPEC_DOCKER_EXEC = _Spec("-e --env --env-file -u --user -w --workdir --detach-keys",
                          "-d --detach -i --interactive -t --tty --privileged")
_SPEC_COMPOSE_RUN = _Spec("-e --env -p --publish -v --volume -w --workdir --name --entrypoint -u --user -l --label "
                          "--pull --cap-add --cap-drop --index",
                          "-d --detach --rm -T --no-TTY -i --interactive -P --service-ports --use-aliases "
                          "--no-deps --build --remove-orphans -q --quiet-pull --quiet --privileged")
_SPEC_APPTAINER = _Spec("-B --bind --mount --env --env-file -H --home --overlay -o -W --workdir --pwd --app "
                        "--security --network --network-args --hostname --dns --scratch -S --drop-caps --add-caps "
                        "--fusemount --apply-cgroups --cpus --memory --memory-reservation --memory-swap --cpu-shares "
                        "--cpuset-cpus --cpuset-mems --blkio-weight --oci --sif-fuse --tmp-sandbox --passphrase "
                        "--pem-path --docker-login --config",
                        "--nv --rocm --nvccli -c --contain -C --containall -e --cleanenv --writable -w "
                        "--writable-tmpfs --fakeroot -f --no-home --no-init --no-privs --userns -u --compat "
                        "--ipc -i --pid -p --net -n --uts --no-eval --no-mount --allow-setuid --keep-privs "
                        "--boot --no-https --disable-cache --no-umask --unsquash --cleanenv", long_value=False)
_SPEC_SSH = _Spec("-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w -B", "", long_value=False,
                  unknown_operand=True)
_SPEC_TMUX_NEW = _Spec("-c -e -F -n -s -t -x -y -f -l -p", "", long_value=False)
_SPEC_TMUX_KEYS = _Spec("-t -N -c", "-l -R -M -H -K -X", long_value=False)
_SPEC_SCREEN = _Spec("-S -c -t -p -T -e -h -s -Logfile -X", "-d -m -D -R -r -x -a -A -q -U -l -L -O -i",
                     long_value=False)

_TMUX_KEYS = {"Enter", "C-m", "KPEnter", "C-j", "c-m", "enter"}


# Programs that print, log, record or ignore their arguments instead of running them: ``echo python -m
# sglang.launch_server ...`` is no launch, nor is ``: python -m ...``, ``git commit -m ...`` or a ``record_run``
# helper.
RECORDERS = frozenset({"echo", "printf", "print", "logger", "git", "hg", "svn", "say", "wall", "notify-send",
                       "tee", "cat", "grep", "egrep", "fgrep", "rg", "sed", "awk", "pgrep", "pkill", "killall",
                       "which", "type", "whereis", "man", "alias", "complete", "history", "read", "test", "[",
                       ":", "true", "false", "set", "export", "local", "declare", "typeset", "readonly", "unset",
                       "return", "exit", "help", "hash", "shift", "trap"})
_RECORDER_PREFIX = re.compile(r"^(?:record|log|echo|print|report|save|write|dump)(?:[_-]|$)", re.I)


def is_recorder(name: str) -> bool:
    """Does the program ``name`` (a path or a name) print or record its arguments rather than run them?"""
    base = _base(name)
    stem = base.rsplit(".", 1)[0] if base.endswith((".sh", ".py", ".bash")) else base
    return base in RECORDERS or bool(_RECORDER_PREFIX.match(stem))


def _base(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def plausible_command(text: str | None) -> bool:
    """Does this word start the program a wrapper runs (rather than an option's value)?"""
    if not text:
        return False
    b = _base(text)
    return is_python(text) or b in WRAPPERS or b in SHELLS or b == "sglang"


def could_start_command(prefix: str) -> bool:
    """Whether a word whose known text starts with ``prefix`` (the rest unknown) may be a program a command runs
    or an option that changes what a wrapper runs: what makes a command worth reading once per value of its
    unknown words."""
    if not prefix or prefix.startswith("-"):
        return True
    b = _base(prefix)
    return not b or b.startswith(("python", "pypy", "sglang")) or any(
        n.startswith(b) for n in (*WRAPPERS, *SHELLS, "python", "python3", "pypy3", "sglang"))


class _Texts:
    """The texts of a command's words, each read when :func:`match_entry` looks at it (it stops at the script or
    module a Python command runs: the words after it are not read)."""

    __slots__ = ("first", "words")

    def __init__(self, first: str, words: list):
        self.first = first
        self.words = words

    def __len__(self) -> int:
        return len(self.words)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self.words)))]
        if i < 0:
            i += len(self.words)
        return self.first if i == 0 else self.words[i].text


class _Unwrapper:
    """Strips wrappers off a command, collecting facts and environment on the way.

    Each wrapper handler takes the command's words (``ex.words[0]`` is the
    wrapper) and leaves in ``ex.words`` the command it runs, returning True
    to keep unwrapping; or it sets ``shell_code``/``python_code``/``stdin``
    and returns False.
    """

    def unwrap(self, words: list[Word]) -> Command | None:
        ex = Command(list(words))
        for _ in range(32):
            if not ex.words:
                return None
            head = ex.words[0]
            first = head.text
            if first is None:
                first = head.raw.strip("\"'")
            if is_python(first) or _SGLANG_CLI.match(first):  # match_entry reads the other words only then
                m = match_entry(_Texts(first, ex.words))
                if m is not None:
                    ex.match = m
                    return ex
            name = head.text
            if name is None:
                if head.splat and len(ex.words) > 1:  # "$LAUNCHER python -m ...": $LAUNCHER may be a wrapper
                    ex.words = ex.words[1:]
                    continue
                return None
            base = _base(name)
            handler = WRAPPERS.get(base)
            if handler is not None:
                if not handler(self, ex):
                    return ex if (ex.shell_code or ex.python_code or ex.stdin) else None
                continue
            if base in SHELLS:
                self._shell(ex)
                return ex if (ex.shell_code or ex.stdin) else None
            if is_python(name):
                if self._python(ex):
                    continue
                return ex if (ex.python_code or ex.stdin) else None
            return self._passed_on(ex)
        return None

    def _passed_on(self, ex: Command) -> Command | None:
        """An unknown program whose arguments are themselves a command it runs (``/entrypoint.sh python3 -m
        sglang.launch_server ...``, ``nsys profile -o out bash -lc "..."``, an image's entrypoint script that
        ends in ``exec "$@"``): the command from the first argument that starts an SGLang launch, a ``-c``
        shell string or Python code.  A program that only prints or records its arguments
        (:func:`is_recorder`) runs nothing."""
        w = ex.words
        head = w[0].text
        if head is None or is_recorder(head):
            return None
        for k in range(1, len(w)):
            tail = w[k].suffix
            if "/" in tail and not plausible_command(tail):
                continue  # ends in the name of no program kv4lint follows (curl "http://$HOST/health"), read or not
            t = w[k].text
            if t is None:
                t = w[k].raw.strip("\"'")
            if not plausible_command(t):
                continue
            inner = self.unwrap(w[k:])
            if inner is not None and (inner.match or inner.shell_code or inner.python_code):
                inner.facts[:0] = ex.facts
                inner.env[:0] = ex.env
                inner.clean_env = inner.clean_env or ex.clean_env
                return inner
        return None

    # -- option scanning --------------------------------------------------------
    def opts(self, ex: Command, i: int, spec: _Spec, on: Callable | None = None) -> int:
        """Skip the options from ``ex.words[i]``; return the index of the first operand.

        ``on(option, value_field)`` is called for options with values
        (``value_field`` is None for a flag).
        """
        w = ex.words
        n = len(w)
        while i < n:
            f = w[i]
            t = f.text
            if t is None and len(f.prefix) > 1 and f.prefix[0] == "-" and f.prefix != "--":
                t = f.prefix + _HOLE  # --cpunodebind=$node, -N$n: an option whose value is unknown
            if t is None:
                if plausible_command(f.raw.strip("\"'")):
                    return i  # "$PYTHON": the program the wrapper runs, not options
                nxt = w[i + 1].text if i + 1 < n else None
                if f.splat and not spec.unknown_operand and not plausible_command(nxt) and i + 1 < n:
                    i += 1  # $OPTS: options we cannot see
                    continue
                return i
            if t == "--":
                return i + 1
            if not t.startswith("-") or t == "-":
                return i
            if t.startswith("--"):
                name, eq, _ = t.partition("=")
                if eq:
                    if on:
                        on(name, f.tail(len(name) + 1))
                    i += 1
                    continue
                k = spec.values.get(name)
                if k is None and name not in spec.flags:
                    nxt = w[i + 1].text if i + 1 < n else None
                    k = 1 if (spec.long_value and nxt is not None and not nxt.startswith("-")
                              and not plausible_command(nxt)) else 0
                elif k is None:
                    k = 0
                if on:
                    on(name, w[i + 1] if k and i + 1 < n else None)
                    if k == 2 and i + 2 < n:
                        on(name + "#2", w[i + 2])
                i += 1 + k
                continue
            # -abc short cluster (or single-dash long option like mpirun's -np)
            if t in spec.values:
                k = spec.values[t]
                if on:
                    on(t, w[i + 1] if i + 1 < n else None)
                    if k == 2 and i + 2 < n:
                        on(t + "#2", w[i + 2])
                i += 1 + k
                continue
            if t in spec.flags:
                if on:
                    on(t, None)
                i += 1
                continue
            j = 1
            step = 1
            while j < len(t):
                c = "-" + t[j]
                if c in spec.values or (spec.short_value and c not in spec.flags and j == len(t) - 1
                                        and not t[1:].isdigit()):
                    if j + 1 < len(t):
                        if on:
                            on(c, f.tail(j + 1))
                    else:
                        if on:
                            on(c, w[i + 1] if i + 1 < n else None)
                        step = 1 + spec.values.get(c, 1)
                    break
                if on:
                    on(c, None)
                j += 1
            i += step
        return i

    def _env_word(self, ex: Command, f: Word, how: str) -> bool:
        """``NAME=VALUE`` (as after ``env`` or in ``docker -e``): record it; False if not one."""
        m = _ASSIGN_WORD.match(f.prefix)
        if not m:
            return False
        name = m.group(1)
        value = None if f.unknown else f.tail(len(name) + 1)
        ex.env.append((name, value, f))
        ex.facts.append(Fact("env", value.text if value is not None else None, f, how=how, name=name))
        return True

    # -- individual wrappers --------------------------------------------------------

    def env(self, ex: Command) -> bool:
        w = ex.words
        i = 1
        while True:
            i = self.opts(ex, i, _SPEC_ENV, lambda o, v: self._env_flag(ex, o))
            if i < len(w) and w[i].text == "-":
                ex.clean_env = True
                i += 1
                continue
            break
        while i < len(w) and self._env_word(ex, w[i], "env"):
            i += 1
        ex.words = w[i:]
        return bool(ex.words)

    def _env_flag(self, ex: Command, opt: str) -> None:
        if opt in ("-i", "--ignore-environment"):
            ex.clean_env = True

    def sudo(self, ex: Command) -> bool:
        w = ex.words
        keep = []
        i = self.opts(ex, 1, _SPEC_SUDO, lambda o, v: keep.append(o))
        if not any(o in ("-E", "--preserve-env") for o in keep):
            ex.clean_env = True
        while i < len(w) and self._env_word(ex, w[i], "sudo"):
            i += 1
        ex.words = w[i:]
        return bool(ex.words)

    def command(self, ex: Command) -> bool:
        w = ex.words
        if len(w) > 1 and w[1].text in ("-v", "-V"):
            return False
        ex.words = w[self.opts(ex, 1, _Spec("", "-p", long_value=False)):]
        return bool(ex.words)

    def taskset(self, ex: Command) -> bool:
        seen = []
        i = self.opts(ex, 1, _SPEC_TASKSET, lambda o, v: seen.append(o))
        if "-p" in seen or "--pid" in seen:
            return False
        ex.words = ex.words[i + 1:]
        return bool(ex.words)

    def chrt(self, ex: Command) -> bool:
        seen = []
        i = self.opts(ex, 1, _Spec("-T -P -D", "-a -b -d -f -i -o -r -m -p -R -v --all-tasks --batch --deadline "
                                               "--fifo --idle --other --rr --max --pid --reset-on-fork --verbose",
                                   long_value=False), lambda o, v: seen.append(o))
        if "-p" in seen or "--pid" in seen or "-m" in seen:
            return False
        ex.words = ex.words[i + 1:]
        return bool(ex.words)

    def srun(self, ex: Command) -> bool:
        prog = _base(ex.words[0].text or "srun")

        def on(opt, v):
            if opt == "--container-image" and v is not None and v.text:
                ex.facts.append(Fact("image", v.text, v))
            elif opt == "--export" and v is not None and v.text:
                for item in v.text.split(","):
                    name, eq, val = item.partition("=")
                    if eq:
                        ex.facts.append(Fact("env", val, v, how="srun --export", name=name))
            else:
                _slurm_gpu(ex, prog, opt, v)
        ex.words = ex.words[self.opts(ex, 1, _SPEC_SRUN, on):]
        return bool(ex.words)

    def sbatch(self, ex: Command) -> bool:
        wrap = []

        def on(opt, v):
            if opt == "--wrap" and v is not None:
                wrap.append(v)
            else:
                _slurm_gpu(ex, "sbatch", opt, v)
        self.opts(ex, 1, _SPEC_SBATCH, on)
        if wrap:
            ex.shell_code = wrap[-1]
        return False

    def mpirun(self, ex: Command) -> bool:
        pending: dict[str, Word] = {}

        def on(opt, v):
            if v is None:
                return
            if opt == "-x":
                if not self._env_word(ex, v, "mpirun -x") and v.text and _NAME.match(v.text):
                    ex.facts.append(Fact("env", None, v, how="mpirun -x", name=v.text))
            elif opt in ("-genv", "-env", "--env"):
                pending[opt] = v
            elif opt in ("-genv#2", "-env#2", "--env#2"):
                nf = pending.pop(opt[:-2], None)
                if nf is not None and nf.text:
                    ex.env.append((nf.text, None if v.unknown else v, nf))
                    ex.facts.append(Fact("env", v.text, nf, how=opt[:-2], name=nf.text))
        ex.words = ex.words[self.opts(ex, 1, _SPEC_MPI, on):]
        return bool(ex.words)

    def torchrun(self, ex: Command, start: int = 1) -> bool:
        """``torchrun [opts] -m MODULE args`` runs ``python -m MODULE args``."""
        w = ex.words
        flags: dict[str, Word] = {}

        def on(opt, v):
            if v is None:
                flags[opt] = True
        i = self.opts(ex, start, _SPEC_TORCHRUN, on)
        # remember where "-m" was written, for the anchor
        mfield = next((f for f in w[start:i] if f.text in ("-m", "--module")), None)
        rest = w[i:]
        if not rest:
            return False
        if mfield is not None:
            ex.words = [w[0].synth("python"), mfield.synth("-m")] + rest
        elif "--no-python" in flags or "--no_python" in flags:
            ex.words = rest
        else:
            ex.words = [w[0].synth("python")] + rest
        return True

    def uv(self, ex: Command) -> bool:
        w = ex.words
        if len(w) < 2 or w[1].text != "run":
            return False
        mods = []
        i = self.opts(ex, 2, _SPEC_UV, lambda o, v: mods.append(o) if o in ("-m", "--module") else None)
        rest = w[i:]
        if mods and rest:
            mf = next((f for f in w[2:i] if f.text in ("-m", "--module")), w[0])
            ex.words = [w[0].synth("python"), mf.synth("-m")] + rest
        else:
            ex.words = rest
        return bool(ex.words)

    def docker(self, ex: Command) -> bool:
        w = ex.words
        i = 1
        # global options before the subcommand (docker --context x run ...)
        i = self.opts(ex, i, _Spec("-c --context -H --host --config -l --log-level --tlscacert --tlscert --tlskey",
                                   "-D --debug --tls --tlsverify", long_value=False))
        sub = w[i].text if i < len(w) else None
        if sub == "container" and i + 1 < len(w):
            i += 1
            sub = w[i].text
        if sub in ("compose",) and i + 1 < len(w):
            return self._compose(ex, i + 1)
        if sub == "run":
            return self._container_run(ex, i + 1, _SPEC_DOCKER_RUN, image=True)
        if sub == "exec":
            return self._container_run(ex, i + 1, _SPEC_DOCKER_EXEC, image=False)
        return False

    def compose(self, ex: Command) -> bool:
        return self._compose(ex, 1)

    def _compose(self, ex: Command, i: int) -> bool:
        w = ex.words
        i = self.opts(ex, i, _Spec("-f --file -p --project-name --profile --env-file --project-directory "
                                   "--ansi --parallel --progress", "--compatibility --dry-run --all-resources",
                                   long_value=False))
        sub = w[i].text if i < len(w) else None
        if sub == "run":
            return self._container_run(ex, i + 1, _SPEC_COMPOSE_RUN, image=False)
        if sub == "exec":
            return self._container_run(ex, i + 1, _SPEC_COMPOSE_RUN, image=False)
        return False

    def _container_run(self, ex: Command, i: int, spec: _Spec, *, image: bool) -> bool:
        """``docker run [options] IMAGE [COMMAND...]`` (also exec/compose: a container or service, no image).

        Its facts come as one group, strongest first: the image, the devices,
        the environment, then ``--gpus``/``--runtime nvidia`` as a weak
        ``cuda`` that the image or a device may contradict.
        """
        w = ex.words
        devices: list[Word] = []
        entry: list[Word] = []
        envs = Command([])
        cuda: list[Fact] = []
        ex.clean_env = True
        group = next(_GROUPS)

        def on(opt, v):
            if v is None:
                return
            if opt in ("-e", "--env"):
                if not self._env_word(envs, v, "docker run -e") and v.text and _NAME.match(v.text):
                    envs.facts.append(Fact("env", None, v, how="docker run -e", name=v.text))
            elif opt == "--device" and v.text:
                devices.append(v)
            elif opt == "--entrypoint":
                entry.append(v)
            elif opt == "--gpus" and v.text:
                cuda.append(Fact("platform", "cuda", v, how=f"docker run --gpus {v.text}", group=group, weak=True))
            elif opt == "--runtime" and v.text == "nvidia":
                cuda.append(Fact("platform", "cuda", v, how="docker run --runtime nvidia", group=group, weak=True))
        i = self.opts(ex, i, spec, on)
        if i < len(w) and image and w[i].text:
            ex.facts.append(Fact("image", w[i].text, w[i], group=group))
        if devices:
            ex.facts.append(Fact("devices", None, devices[0], how="docker run --device", group=group,
                                 words=tuple(devices)))
        ex.env.extend(envs.env)
        ex.facts.extend(f.in_group(group) for f in envs.facts)
        ex.facts.extend(cuda)
        if i >= len(w):
            return False
        rest = w[i + 1:]
        if entry and entry[-1].text != "":
            rest = [entry[-1]] + rest
        ex.words = rest
        return bool(rest)

    def apptainer(self, ex: Command) -> bool:
        w = ex.words
        if len(w) < 2 or w[1].text not in ("exec", "run"):
            return False
        is_exec = w[1].text == "exec"

        def on(opt, v):
            if opt == "--rocm" and v is None:
                ex.facts.append(Fact("platform", "rocm", w[0], how=f"{_base(w[0].text or '')} --rocm"))
            elif opt == "--env" and v is not None:
                for item in (v.text or "").split(","):
                    name, eq, val = item.partition("=")
                    if eq:
                        ex.facts.append(Fact("env", val, v, how="--env", name=name))
        i = self.opts(ex, 2, _SPEC_APPTAINER, on)
        if i >= len(w):
            return False
        img = w[i]
        if img.text:
            ex.facts.append(Fact("image", img.text, img))
        if not is_exec:
            return False
        ex.words = w[i + 1:]
        return bool(ex.words)

    def ssh(self, ex: Command) -> bool:
        w = ex.words
        i = self.opts(ex, 1, _SPEC_SSH)
        ex.clean_env = True
        rest = w[i + 1:]
        if not rest:
            ex.stdin = "shell"
            return False
        if len(rest) == 1:
            ex.shell_code = rest[0]
            return False
        ex.words = rest
        return True

    def kubectl(self, ex: Command) -> bool:
        w = ex.words
        if len(w) < 2 or w[1].text not in ("exec", "run"):
            return False
        for k, f in enumerate(w):
            if f.text == "--":
                ex.words = w[k + 1:]
                ex.clean_env = True
                return bool(ex.words)
        return False

    def tmux(self, ex: Command) -> bool:
        w = ex.words
        i = self.opts(ex, 1, _Spec("-L -S -f -c -T", "-2 -C -l -N -u -v -D", long_value=False))
        sub = w[i].text if i < len(w) else None
        if sub in ("new-session", "new", "new-window", "neww", "split-window", "splitw", "respawn-pane",
                   "respawnp", "respawn-window", "respawnw"):
            rest = w[self.opts(ex, i + 1, _SPEC_TMUX_NEW):]
        elif sub in ("send-keys", "send"):
            rest = w[self.opts(ex, i + 1, _SPEC_TMUX_KEYS):]
            while rest and rest[-1].text in _TMUX_KEYS:
                rest = rest[:-1]
        else:
            return False
        if len(rest) == 1:
            ex.shell_code = rest[0]
            return False
        ex.words = rest
        return bool(rest)

    def screen(self, ex: Command) -> bool:
        ex.words = ex.words[self.opts(ex, 1, _SPEC_SCREEN):]
        return bool(ex.words)

    def eval(self, ex: Command) -> bool:
        args = ex.words[1:]
        if not args:
            return False
        ex.shell_code = args[0].concat(args)
        return False

    def ray(self, ex: Command) -> bool:
        for k, f in enumerate(ex.words):
            if f.text == "--":
                ex.words = ex.words[k + 1:]
                return bool(ex.words)
        return False

    # -- programs that run code -------------------------------------------------------
    def _shell(self, ex: Command) -> None:
        w = ex.words
        i = 1
        cflag = sflag = False
        while i < len(w):
            t = w[i].text
            if t is None:
                break
            if t == "--":
                i += 1
                break
            if t in ("--rcfile", "--init-file") or (len(t) > 1 and t[0] in "-+" and t[1] != "-" and t[-1] in "oO"):
                i += 2  # -o OPTION, -euxo pipefail
                if "c" in t[1:-1] and t[0] == "-":
                    cflag = True
                continue
            if t.startswith("--"):
                i += 1
                continue
            if len(t) > 1 and t[0] in "-+":
                if t[0] == "-" and "c" in t[1:]:
                    cflag = True
                if "s" in t[1:]:
                    sflag = True
                i += 1
                continue
            break
        if cflag:
            if i < len(w):
                ex.shell_code = w[i]
        elif i >= len(w) or sflag:
            ex.stdin = "shell"

    def _python(self, ex: Command) -> bool:
        """``python -c CODE``, ``python -`` (stdin), ``python -m torch.distributed.run``; True: keep unwrapping."""
        w = ex.words
        i = 1
        while i < len(w):
            t = w[i].text
            if t is None:
                return False
            if t == "-c":
                if i + 1 < len(w):
                    ex.python_code = w[i + 1]
                return False
            if t.startswith("-c") and len(t) > 2:
                ex.python_code = w[i].tail(2)
                return False
            if t == "-m" or (t.startswith("-m") and len(t) > 2):
                mod = w[i + 1].text if t == "-m" and i + 1 < len(w) else t[2:]
                if mod in ("torch.distributed.run", "torch.distributed.launch"):
                    ex.words = [w[0].synth("torchrun")] + w[i + (2 if t == "-m" else 1):]
                    return self.torchrun(ex)
                return False
            if t == "-":
                ex.stdin = "python"
                return False
            if t in ("-X", "-W", "-Q"):
                i += 2
                continue
            if t.startswith("-"):
                i += 1
                continue
            return False  # a script
        ex.stdin = "python"
        return False


def _simple(spec: _Spec, operands: int = 0) -> Callable[[_Unwrapper, Command], bool]:
    """A wrapper written ``NAME [options] [operands...] COMMAND...``."""
    def handler(self: _Unwrapper, ex: Command) -> bool:
        i = self.opts(ex, 1, spec)
        ex.words = ex.words[i + operands:]
        return bool(ex.words)
    return handler


def _run_sub(spec: _Spec) -> Callable[[_Unwrapper, Command], bool]:
    """A tool written ``NAME run [options] COMMAND...`` (conda, poetry, ...)."""
    def handler(self: _Unwrapper, ex: Command) -> bool:
        w = ex.words
        if len(w) < 2 or w[1].text != "run":
            return False
        ex.words = w[self.opts(ex, 2, spec):]
        return bool(ex.words)
    return handler


WRAPPERS: dict[str, Callable[[_Unwrapper, Command], bool]] = {
    "env": _Unwrapper.env,
    "sudo": _Unwrapper.sudo,
    "doas": _Unwrapper.sudo,
    "exec": _simple(_SPEC_EXEC),
    "nohup": _simple(_SPEC_NONE),
    "unbuffer": _simple(_Spec("", "-p", long_value=False)),
    "setsid": _simple(_SPEC_SETSID),
    "command": _Unwrapper.command,
    "builtin": _simple(_SPEC_NONE),
    "nice": _simple(_SPEC_NICE),
    "ionice": _simple(_SPEC_IONICE),
    "chrt": _Unwrapper.chrt,
    "stdbuf": _simple(_SPEC_STDBUF),
    "time": _simple(_SPEC_TIME),
    "timeout": _simple(_SPEC_TIMEOUT, operands=1),
    "numactl": _simple(_SPEC_NUMACTL),
    "taskset": _Unwrapper.taskset,
    "srun": _Unwrapper.srun,
    "salloc": _Unwrapper.srun,
    "sbatch": _Unwrapper.sbatch,
    "mpirun": _Unwrapper.mpirun,
    "mpiexec": _Unwrapper.mpirun,
    "mpiexec.hydra": _Unwrapper.mpirun,
    "orterun": _Unwrapper.mpirun,
    "prterun": _Unwrapper.mpirun,
    "torchrun": _Unwrapper.torchrun,
    "uv": _Unwrapper.uv,
    "conda": _run_sub(_SPEC_CONDA),
    "mamba": _run_sub(_SPEC_CONDA),
    "micromamba": _run_sub(_SPEC_CONDA),
    "poetry": _run_sub(_SPEC_NONE),
    "pipenv": _run_sub(_SPEC_NONE),
    "pdm": _run_sub(_SPEC_NONE),
    "rye": _run_sub(_SPEC_NONE),
    "pixi": _run_sub(_SPEC_PIXI),
    "docker": _Unwrapper.docker,
    "podman": _Unwrapper.docker,
    "nvidia-docker": _Unwrapper.docker,
    "docker-compose": _Unwrapper.compose,
    "apptainer": _Unwrapper.apptainer,
    "singularity": _Unwrapper.apptainer,
    "ssh": _Unwrapper.ssh,
    "kubectl": _Unwrapper.kubectl,
    "oc": _Unwrapper.kubectl,
    "tmux": _Unwrapper.tmux,
    "screen": _Unwrapper.screen,
    "eval": _Unwrapper.eval,
    "ray": _Unwrapper.ray,
    "tini": _simple(_Spec(_INIT_OPTS, "-s -v -vv -vvv -w -g -l -h", long_value=False)),
    "tini-static": _simple(_Spec(_INIT_OPTS, "-s -v -vv -vvv -w -g -l -h", long_value=False)),
    "dumb-init": _simple(_Spec(_INIT_OPTS, "-c --single-child -v --verbose -V --version", long_value=False)),
    "catatonit": _simple(_Spec("", "-g -p -P -L", long_value=False)),
}

_UNWRAPPER = _Unwrapper()
