"""The --config stage (kv4lint.pipeline.launch_configs): frontends read their text only; files launches name are read
after."""

from __future__ import annotations

import pytest

from kv4lint import frontends
from kv4lint.base.settings import Settings
from kv4lint.pipeline import launch_configs
from kv4lint.pipeline.runner import lint_text

S23 = Settings(sglang_version="0.5.23")
CFG = "model-path: Qwen/Qwen3-8B\nkv-cache-dtype: fp4_mx_block16\n"

READ = [
    ("serve.sh", "shell", "python -m sglang.launch_server --config cfg.yaml --attention-backend flashinfer\n"),
    ("run.py", "python", "import subprocess\nsubprocess.run(['sglang', 'serve', '--config', 'cfg.yaml',"
                         " '--attention-backend', 'flashinfer'])\n"),
    # SGLang's test helpers run sglang.launch_server: it reads the file (Launch.config_via).
    ("test_x.py", "python", "from sglang.test.test_utils import popen_launch_server\n"
                            "popen_launch_server('Qwen/Qwen3-8B', URL, 600, other_args=['--config', 'cfg.yaml',"
                            " '--attention-backend', 'flashinfer'])\n"),
    ("run.py", "python", "from sglang.srt.server_args import prepare_server_args\n"
                         "prepare_server_args(['--config', 'cfg.yaml', '--attention-backend', 'flashinfer'])\n"),
    ("Dockerfile", "dockerfile", "FROM x\nCOPY cfg.yaml /app/c.yaml\n"
                                 'CMD ["python3", "-m", "sglang.launch_server", "--config", "/app/c.yaml",'
                                 ' "--attention-backend", "flashinfer"]\n'),
]
NOT_READ = [
    ("bench.sh", "shell", "python -m sglang.bench_one_batch --config cfg.yaml --attention-backend flashinfer\n"),
    ("run.py", "python", "from sglang.utils import launch_server_cmd\n"
                         "launch_server_cmd('python -m sglang.bench_one_batch --config cfg.yaml"
                         " --attention-backend flashinfer')\n"),
]


@pytest.mark.parametrize("name, language, text", READ)
def test_the_config_file_a_launch_names_is_read_after_the_frontend(tmp_path, name, language, text):
    (tmp_path / "cfg.yaml").write_text(CFG)
    path = str(tmp_path / name)
    scan = frontends.scan(path, text, language)
    assert [launch.config_argv for launch in scan.launches] == [[]]  # the frontend read only its text
    launch_configs.attach_configs(scan, path)
    assert [v.text for v in scan.launches[0].config_argv] == ["--model-path", "Qwen/Qwen3-8B",
                                                              "--kv-cache-dtype", "fp4_mx_block16"]
    rep = lint_text(path, text, S23, language=language)
    assert [f.code for f in rep.findings] == ["KV401"]
    assert rep.findings[0].fix is None or rep.findings[0].fix.edits[0].path.endswith("cfg.yaml")


@pytest.mark.parametrize("name, language, text", NOT_READ)
def test_entry_points_that_do_not_read_config_files_get_none(tmp_path, name, language, text):
    (tmp_path / "cfg.yaml").write_text(CFG)
    path = str(tmp_path / name)
    scan = frontends.scan(path, text, language)
    assert len(scan.launches) == 1
    launch_configs.attach_configs(scan, path)
    assert scan.launches[0].config_argv == []
