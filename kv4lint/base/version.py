"""kv4lint's version: a leaf that imports nothing, so that any module may name it.

``kv4lint.__version__`` is this value; the cache key, the SARIF driver, the
internal-error line and ``kv4lint --version`` read it from here.
"""

__version__ = "0.1.0"
VERSION_LINE = f"kv4lint {__version__}"  # what `kv4lint --version` prints
