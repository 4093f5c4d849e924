"""The launches a shell walk found become records (kv4lint.frontends.shell.launches.build_launches): one command
on several paths of the script is one launch where its words are the same on them, one per path where they differ.
Issue 37: a command on one path, as most are, is not compared with any other."""

from __future__ import annotations

from kv4lint.frontends import scan
from kv4lint.frontends.shell import launches

SCRIPT = """\
if [ "$FAST" = 1 ]; then TP=1; else TP=2; fi
python -m sglang.launch_server --model-path m --kv-cache-dtype fp8_e4m3 --port 1
python -m sglang.launch_server --model-path m --kv-cache-dtype fp8_e4m3 --tp $TP
python -m sglang.launch_server --model-path m --kv-cache-dtype fp8_e4m3 --port 2
"""


def test_only_a_command_on_several_paths_has_its_words_compared(monkeypatch):
    compared = []
    real = launches._same
    monkeypatch.setattr(launches, "_same", lambda argv: compared.append([v.text for v in argv]) or real(argv))
    found = scan("run.sh", SCRIPT, "shell").launches
    assert [(launch.argv[-1].text, launch.condition) for launch in found] == [
        ("1", None), ("1", "FAST=1"), ("2", "FAST!=1"), ("2", None)]
    assert all(words[-2] == "--tp" for words in compared) and compared  # the --tp command's paths only
