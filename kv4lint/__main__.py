"""``python -m kv4lint``: the CLI, after the working directory left ``sys.path``.

Python puts the working directory -- the repository being checked -- first on
``sys.path``; kv4lint imports most modules lazily, so a ``pathspec.py`` there
would run.  The working directory and every entry inside it or inside a path
on the command line go before anything else is imported (kv4lint.files.isolation),
as pip's ``__main__`` does.  Nothing above this line may import a module.
"""

import sys

from kv4lint.files.isolation import drop_untrusted, path_arguments

drop_untrusted(path_arguments(sys.argv[1:]))

from kv4lint.cli import console  # noqa: E402 - after sys.path is clean

console()
