"""The exit status, named once (the same for ``check``, ``fix``, ``--diff`` and the flake8 plugin).

0 -- everything named was checked and nothing was found; 1 -- findings, or a
file that could not be read or parsed; 2 -- usage errors (an unknown option
or command, a bad configuration, a named path that does not exist) and
internal errors.  A leaf: the command line and :mod:`kv4lint.base.internal_error`
read it.
"""

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
