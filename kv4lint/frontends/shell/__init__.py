"""Shell frontend: find SGLang launches in shell scripts and shell strings.

The script is parsed (:mod:`.parse`), its words expanded as bash would
(:mod:`.expand`), its commands stripped of their wrappers by
:func:`kv4lint.sglang.commands.unwrap`, and its statements walked in order
(:mod:`.walk`), which turns each SGLang command into a Launch; a settings file
the script sources is walked the same way (:mod:`.settings_file`).
"""

from kv4lint.frontends.shell.settings_file import shell_variables
from kv4lint.frontends.shell.walk import scan_shell, split_words

__all__ = ["scan_shell", "shell_variables", "split_words"]
