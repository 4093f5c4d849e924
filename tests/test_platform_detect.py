"""--platform auto: the real torch CPU build, and stand-in torch modules for the GPU builds."""

from __future__ import annotations

import argparse
import sys
import types

import pytest

from kv4lint.target import platform_detect
from kv4lint.target.platform_detect import Detected, detect, detect_from


@pytest.fixture(autouse=True)
def _fresh_cache():
    detect.cache_clear()
    yield
    detect.cache_clear()


@pytest.mark.slow  # imports the real torch
def test_real_torch_cpu_build_reports_cpu():
    det = detect()  # imports the real CPU build, from the test extra (torch==2.13.0); not optional here
    import torch

    assert torch.version.cuda is None and torch.version.hip is None  # the CPU build
    assert det.platform == "cpu"
    assert det.arch is None
    assert torch.__version__ in det.reason and "CPU" in det.reason


def _fake_torch(*, version="2.13.0", cuda=None, hip=None, cuda_available=False, capability=None, name=None,
                xpu=False, mps=False, npu=False, raising_capability=False):
    t = types.ModuleType("torch")
    t.__version__ = version
    t.version = types.SimpleNamespace(cuda=cuda, hip=hip)

    def cap(i=0):
        if raising_capability:
            raise RuntimeError("CUDA driver initialization failed")
        return capability

    t.cuda = types.SimpleNamespace(is_available=lambda: cuda_available, get_device_capability=cap,
                                   get_device_name=lambda i=0: name)
    t.xpu = types.SimpleNamespace(is_available=lambda: xpu)
    if npu:
        t.npu = types.SimpleNamespace(is_available=lambda: True)
    t.backends = types.SimpleNamespace(mps=types.SimpleNamespace(is_available=lambda: mps))
    return t


@pytest.mark.parametrize("cap,arch", [((9, 0), "sm90"), ((10, 0), "sm100"), ((12, 0), "sm120"), ((12, 1), "sm121"),
                                      ((8, 6), "sm86")])
def test_cuda_device_gives_arch(cap, arch):
    det = detect_from(_fake_torch(version="2.9.1+cu129", cuda="12.9", cuda_available=True, capability=cap,
                                  name="NVIDIA H100 80GB HBM3"))
    assert (det.platform, det.arch) == ("cuda", arch)
    assert f"{cap[0]}.{cap[1]}" in det.reason and "NVIDIA H100" in det.reason


def test_cuda_build_without_a_device_has_unknown_arch():
    det = detect_from(_fake_torch(cuda="12.9", cuda_available=False))
    assert det == Detected("cuda", None, det.reason)
    assert "no CUDA device" in det.reason


def test_cuda_capability_failure_is_unknown_arch_not_a_crash():
    det = detect_from(_fake_torch(cuda="12.9", cuda_available=True, raising_capability=True))
    assert (det.platform, det.arch) == ("cuda", None)


def test_rocm_build_is_rocm_even_though_cuda_api_answers():
    # ROCm torch answers torch.cuda.is_available() True, with torch.version.cuda None
    det = detect_from(_fake_torch(hip="6.4.4", cuda_available=True, capability=(9, 4)))
    assert (det.platform, det.arch) == ("rocm", None)
    assert "ROCm" in det.reason


def test_xpu():
    assert detect_from(_fake_torch(xpu=True)).platform == "xpu"


def test_npu():
    assert detect_from(_fake_torch(npu=True)).platform == "npu"


def test_mps():
    assert detect_from(_fake_torch(mps=True)).platform == "mps"


def test_cpu_stand_in():
    assert detect_from(_fake_torch()).platform == "cpu"


def test_torch_missing_is_a_clear_notice(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` raise ImportError
    det = detect()
    assert det.platform is None and det.arch is None
    assert "torch is not installed" in det.reason and "kv4lint[torch]" in det.reason


def test_detect_uses_the_torch_module(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", _fake_torch(cuda="12.8", cuda_available=True, capability=(10, 0)))
    assert detect() == Detected("cuda", "sm100", detect().reason, None)


def _ns(**kw):
    base = dict(sglang_version=None, platform=None, gpu=None, model_attention=None, fix_dtype=None, strict=None,
                select=None, extend_select=None, ignore=None, exclude=None, extend_exclude=None, config_file=None,
                isolated=True)
    base.update(kw)
    return argparse.Namespace(**base)


def test_platform_auto_in_settings_uses_detection(monkeypatch, tmp_path):
    from kv4lint.settings.config import build_settings

    (tmp_path / ".git").mkdir()
    monkeypatch.setitem(sys.modules, "torch", _fake_torch(cuda="12.9", cuda_available=True, capability=(9, 0),
                                                          name="NVIDIA H200"))
    s = build_settings(_ns(platform="auto"), [str(tmp_path)])
    assert (s.platform, s.gpu) == ("cuda", "sm90")
    assert "NVIDIA H200" in s.sources["platform"] and s.sources["platform"].startswith("--platform auto")
    # an explicit --gpu beats the detected one
    s = build_settings(_ns(platform="auto", gpu="b200"), [str(tmp_path)])
    assert (s.platform, s.gpu) == ("cuda", "b200")
    assert s.sources["gpu"] == "--gpu"


@pytest.mark.slow  # imports the real torch
def test_platform_auto_with_real_cpu_torch_makes_kv4_a_kv402(tmp_path):
    from kv4lint.base.model import Launch, Span, Value
    from kv4lint.pipeline.runner import resolve_target
    from kv4lint.rules.check import check
    from kv4lint.settings.config import build_settings

    (tmp_path / ".git").mkdir()
    s = build_settings(_ns(platform="auto", sglang_version="0.5.23"), [str(tmp_path)])
    assert s.platform == "cpu"
    text = "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp4_mx_block16"
    words = text.split()
    argv, pos = [], 0
    for w in words:
        i = text.index(w, pos)
        argv.append(Value(w, Span(i, i + len(w))))
        pos = i + len(w)
    launch = Launch("x.sh", "argv", "sglang.launch_server", Span(0, len(text)), Span(0, 30), argv=argv[3:])
    target, args = resolve_target(launch, s)
    assert target.platform == "cpu"
    assert "CPU-only build" in target.sources["platform"]
    assert [f.code for f in check(args, target)] == ["KV402"]


def test_platform_auto_without_torch_is_a_usage_error(monkeypatch, tmp_path):
    from kv4lint.settings.config import build_settings

    (tmp_path / ".git").mkdir()
    monkeypatch.setattr(platform_detect, "_import_torch", lambda: (_ for _ in ()).throw(ImportError("no torch")))
    with pytest.raises(ValueError, match="^--platform auto: torch is not installed"):
        build_settings(_ns(platform="auto"), [str(tmp_path)])
    (tmp_path / "kv4lint.toml").write_text('platform = "auto"\n')
    with pytest.raises(ValueError, match='kv4lint.toml: platform = "auto": torch is not installed'):
        build_settings(_ns(isolated=False), [str(tmp_path)])
