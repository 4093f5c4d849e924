"""The shape of cost: doubling an input at most about doubles its time and memory (issues 34 and 37).

Every frontend and route keeps its cost linear in the input. A test names a *shape* (a generator of an input
of size ``n``) and a *route* (how the input reaches kv4lint), and :func:`assert_linear` runs the route on the
shapes of size ``n`` and ``2 * n`` and compares. A linear cost gives a ratio near 2, a quadratic one near 4:
the bound :data:`RATIO` lies between. Nothing is timed against the clock's seconds (the machine is shared and
noisy): the CPU time of this process is taken as the least of :data:`REPS` runs, the two sizes run in turn
(both measured again, up to :data:`ROUNDS` rounds, where a pause of the machine made the ratio look too high:
a quadratic cost stays high in every round), and the memory is the peak that ``tracemalloc`` sees during one
more run.

Keep ``n`` small enough for the fast loop (a shape's 2n run well under a second) and large enough that the
work, not kv4lint's fixed cost per file, dominates (check that the n run takes some tens of milliseconds; on a
faster machine, an n run under :data:`FLOOR_S` is repeated with n doubled, up to :data:`GROW` times).
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from typing import Callable

RATIO = 3.0  # 2n over n: linear is about 2, quadratic about 4
REPS = 3
ROUNDS = 3  # a ratio over RATIO is measured again, up to this many rounds in all (the least time of each size)
FLOOR_S = 0.02  # below this the n run is noise: the shape's n is too small to say anything
GROW = 3  # below FLOOR_S, n is doubled up to this many times before the shape is said to be too small


def _cpu(run: Callable[[str], object], text: str) -> float:
    gc.collect()
    t = time.process_time()
    run(text)
    return time.process_time() - t


def _peak(run: Callable[[str], object], text: str) -> int:
    """The peak bytes that ``tracemalloc`` sees during one ``run(text)``."""
    gc.collect()
    tracemalloc.start()
    try:
        run(text)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _times(run: Callable[[str], object], small: str, large: str) -> tuple[float, float]:
    """The least CPU seconds of ``run`` on each text over REPS runs, the two taken in turn: a busy spell of the
    shared machine (a neighbour's memory traffic slows this process's every step) falls on both sizes, not on
    one of them, so it moves the ratio less than it moves the times."""
    t1 = t2 = float("inf")
    for _ in range(REPS):
        t1 = min(t1, _cpu(run, small))
        t2 = min(t2, _cpu(run, large))
    return t1, t2


def assert_linear(make: Callable[[int], str], run: Callable[[str], object], n: int, *, what: str = "") -> None:
    """Assert that ``run`` costs at most about twice as much on ``make(2 * n)`` as on ``make(n)``."""
    run(make(max(1, n // 8)))  # warm up: imports, parsers, caches of the route itself
    gc.collect()
    gc.freeze()  # what the session holds (parsers, other tests' objects) is not collected again at every rep
    try:
        small = make(n)
        measured = min(_cpu(run, small) for _ in range(REPS))
        for _ in range(GROW):  # a faster machine than the one n was chosen on: a larger n, until it measures
            if measured >= FLOOR_S:
                break
            n *= 2
            small = make(n)
            measured = min(_cpu(run, small) for _ in range(REPS))
        large = make(2 * n)
        t1, t2 = _times(run, small, large)
        for _ in range(ROUNDS - 1):  # a pause of the shared machine in one round: measure both sizes again
            if t2 <= RATIO * t1:
                break
            a, b = _times(run, small, large)
            t1, t2 = min(t1, a), min(t2, b)
        m1, m2 = _peak(run, small), _peak(run, large)
    finally:
        gc.unfreeze()
    label = what or getattr(make, "__name__", "shape")
    assert measured >= FLOOR_S, f"{label}: n={n} takes {measured * 1000:.1f} ms of CPU, too little to measure; raise n"
    assert t2 <= RATIO * t1, f"{label}: CPU time grows {t2 / t1:.1f}x when the input doubles ({t1:.3f}s -> {t2:.3f}s)"
    assert m2 <= RATIO * m1, f"{label}: memory grows {m2 / m1:.1f}x when the input doubles ({m1} -> {m2} bytes)"


def lint(language: str, path: str = "input") -> Callable[[str], object]:
    """The route every command shares: one file's text through the pipeline (frontend, target, rules), with
    the parse cache off and the release and GPU stated."""
    from kv4lint.base.settings import Settings
    from kv4lint.pipeline.runner import lint_text

    settings = Settings(sglang_version="0.5.23", gpu="b200", cache_dir=None)

    def run(text: str) -> object:
        return lint_text(path, text, settings, language)

    return run
