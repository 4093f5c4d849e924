"""Shell frontend: find SGLang launches in shell scripts and shell strings.

The script is parsed (:mod:`.parse`), its words expanded as bash would
(:mod:`.expand`), its commands stripped of their wrappers by
:func:`kv4lint.sglang.commands.unwrap`, and its statements walked in order
(:mod:`.walk`), which turns each SGLang command into a Launch.
"""

from kv4lint.frontends.shell.walk import scan_shell, shell_variables, split_words

__all__ = ["scan_shell", "shell_variables", "split_words"]
