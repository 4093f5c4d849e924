"""Markdown/reST code blocks and Jupyter notebooks: what is scanned, and where its characters are."""

from __future__ import annotations

import json

import nbformat
import pytest
from hypothesis import given, strategies as st
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from kv4lint.base.model import Span
from kv4lint.base.settings import Settings
from kv4lint.base.source import LineIndex, OffsetMap
from kv4lint.fixes.edits import apply_edits
from kv4lint.frontends.markdown import markdown_blocks, rst_blocks, scan_markdown
from kv4lint.frontends.notebook import cell_position, read_cells, scan_notebook, split_ipython
from kv4lint.pipeline.runner import lint_text

S23 = Settings(sglang_version="0.5.23")
ROCM = "lmsysorg/sglang:v0.5.23-rocm700-mi30x"


def at(text: str, span: Span | None) -> str | None:
    return None if span is None else text[span.start:span.end]


def dtype(launch):
    k = [v.text for v in launch.argv].index("--kv-cache-dtype")
    return launch.argv[k + 1]


def lint(text: str, path: str, language: str):
    rep = lint_text(path, text, S23, language=language)
    assert rep.errors == []
    idx = LineIndex(text)
    return [(f.code, text[idx.offset(f.start.line, f.start.column):][:10]) for f in rep.findings], rep


# ---------------------------------------------------------------------------
# Markdown


DOC_LAUNCH = ("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype fp4_mx_block16 "
              "--attention-backend flashinfer")


def test_a_block_that_cannot_launch_is_not_parsed_nor_its_syntax_reported():
    # Documents hold placeholders that are not shell; a block without a launch's option is skipped as
    # such a file would be, and a block with one still reports what kept it from being checked.
    quiet = "```bash\nexport HF_TOKEN=<your_hf_token>\npython3 -c \"import sglang\"\n```\n"
    loud = f"```bash\nexport HF_TOKEN=<your_hf_token>\n)\n{DOC_LAUNCH}\n```\n"
    good = f"```bash\n{DOC_LAUNCH}\n```\n"
    res = scan_markdown(quiet + "\n" + good, "README.md")
    assert res.errors == [] and len(res.launches) == 1
    res = scan_markdown(quiet + "\n" + loud, "README.md")
    assert [e.line for e in res.errors] == [8] and "syntax error" in res.errors[0].message


def test_a_placeholder_is_an_unknown_value_not_a_redirection():
    # As bash reads it, `<model_path>` takes input from model_path and sends output to the next word: the
    # `--kv-cache-dtype` a line below would vanish into a file name. A document's reader fills it in.
    text = ("```bash\npython3 -m sglang.launch_server \\\n    --model-path <model_path> \\\n"
            "    --tp-size <num_gpus> \\\n    --kv-cache-dtype fp4_mx_block16 \\\n"
            "    --attention-backend fa3\n```\n")
    found, rep = lint(text, "README.md", "markdown")
    assert found == [("KV401", "fp4_mx_blo")]
    assert rep.findings[0].message.startswith("--kv-cache-dtype fp4_mx_block16 is refused with --attention-backend "
                                              "fa3")
    (launch,) = scan_markdown(text, "README.md").launches
    model = [v for v in launch.argv][[v.text for v in launch.argv].index("--model-path") + 1]
    assert not model.known and at(text, model.use) == "<model_path>"
    # Real redirections and here-documents are left as bash reads them.
    real = ("```bash\ncat <<EOF > notes.txt\nx\nEOF\n"
            f"{DOC_LAUNCH} 2>&1 < /dev/null | tee log\n```\n")
    assert lint(real, "README.md", "markdown")[0] == [("KV401", "fp4_mx_blo")]


def test_fence_in_a_list_item_maps_each_line():
    md = ("1. Start:\n\n"
          "   ```bash\n"
          "   export HIP_VISIBLE_DEVICES=0\n"
          "   python -m sglang.launch_server --model-path m \\\n"
          "     --kv-cache-dtype nvfp4\n"
          "   ```\n")
    (block,) = markdown_blocks(md)
    assert block.lang == "bash" and block.line == 4
    assert [ln.text for ln in block.lines][2] == "  --kv-cache-dtype nvfp4"
    (launch,) = scan_markdown(md, "README.md").launches
    v = dtype(launch)
    assert at(md, v.span) == "nvfp4" and v.span.start == md.index("nvfp4")
    assert ("platform", "rocm") in [(h.kind, h.value) for h in launch.hints]


def test_console_prompts_output_and_continuations():
    md = ("```console\n"
          "(venv) user@box:~/x$ python -m sglang.launch_server --device rocm \\\n"
          "> --kv-cache-dtype nvfp4\n"
          "python -m sglang.launch_server --kv-cache-dtype nvfp4 --device rocm\n"
          "# python -m sglang.launch_server --model-path m --kv-cache-dtype fp4_mx_block16 --device rocm\n"
          "```\n")
    launches = scan_markdown(md, "README.md").launches
    assert [dtype(x).text for x in launches] == ["nvfp4", "fp4_mx_block16"]  # the output line is skipped
    assert at(md, dtype(launches[0]).span) == "nvfp4" and dtype(launches[0]).span.start == md.index("nvfp4")


def test_bash_block_with_dollar_prompts_reads_as_a_session():
    md = "```bash\n$ python -m sglang.launch_server --kv-cache-dtype nvfp4 --device rocm\nINFO started\n```\n"
    (launch,) = scan_markdown(md, "README.md").launches
    assert at(md, dtype(launch).span) == "nvfp4"


def test_blockquote_fence_and_fix():
    md = ("> Note:\n>\n> ```sh\n"
          f"> docker run --device /dev/kfd {ROCM} python3 -m sglang.launch_server --kv-cache-dtype nvfp4\n"
          "> ```\n")
    got, rep = lint(md, "doc.md", "markdown")
    assert got == [("KV402", "nvfp4\n> ``")]
    fixed, skipped = apply_edits(md, list(rep.findings[0].fix.edits))
    assert skipped == [] and fixed == md.replace("nvfp4", "fp8_e4m3")


def _nested(prefix: str, n: int, lines: list[str]) -> str:
    return "".join(prefix * n + ln + "\n" for ln in lines)


@pytest.mark.parametrize("md,line", [
    # A fence in 20 nested block quotes: markdown-it reads no further (its maxNesting), so the file is
    # "not fully checked", never clean.
    (_nested("> ", 20, ["```bash", DOC_LAUNCH, "```"]), 1),
    # Lists count twice (list and item): a fence in the 10th nested item is past the limit too.
    ("".join("  " * i + "- step\n" for i in range(10)) + _nested("  " * 10, 1, ["```bash", DOC_LAUNCH, "```"]), 10),
])
def test_markdown_past_the_nesting_limit_is_a_file_error(md, line):
    rep = lint_text("doc.md", md, S23, language="markdown")
    assert rep.findings == []
    assert [(e.line, e.message) for e in rep.errors] == [
        (line, f"Markdown nested 20 levels deep (block quotes, lists) near line {line}: not scanned further")]


def test_markdown_under_the_nesting_limit_is_read():
    got, _ = lint(_nested("> ", 19, ["```bash", DOC_LAUNCH, "```"]), "doc.md", "markdown")
    assert got == [("KV401", "fp4_mx_blo")]  # as the same fence at the top level


@pytest.mark.parametrize("fence", ["```", "```text", "```output", "```log", "~~~plaintext"])
def test_untagged_and_output_blocks_are_silent(fence):
    close = fence[:3]
    md = f"{fence}\npython -m sglang.launch_server --kv-cache-dtype nvfp4 --device rocm\n{close}\n"
    assert scan_markdown(md, "README.md").launches == []


def test_tables_inline_and_indented_code_are_silent():
    md = ("| `--kv-cache-dtype nvfp4` | FP4 |\n|---|---|\n\n"
          "Run `python -m sglang.launch_server --kv-cache-dtype nvfp4 --device rocm`.\n\n"
          "    python -m sglang.launch_server --kv-cache-dtype nvfp4 --device rocm\n")
    assert scan_markdown(md, "README.md").launches == []


def test_myst_code_block_with_options():
    md = "```{code-block} bash\n:caption: serve\npython -m sglang.launch_server --kv-cache-dtype nvfp4\n```\n"
    (launch,) = scan_markdown(md, "doc.md").launches
    assert at(md, dtype(launch).span) == "nvfp4"


def test_crlf_markdown():
    md = "```bash\r\npython -m sglang.launch_server \\\r\n  --kv-cache-dtype nvfp4\r\n```\r\n"
    (launch,) = scan_markdown(md, "README.md").launches
    assert at(md, dtype(launch).span) == "nvfp4"


def test_rst_code_block_and_literal_block():
    rst = ("Title\n=====\n\n"
           ".. code-block:: bash\n   :linenos:\n\n"
           "   python -m sglang.launch_server \\\n       --kv-cache-dtype nvfp4\n\n"
           "Literal::\n\n   python -m sglang.launch_server --kv-cache-dtype fp4_mx_block16\n\n"
           ".. code:: console\n\n   $ python -m sglang.launch_server --kv-cache-dtype fp8_e4m3\n   output\n")
    blocks = rst_blocks(rst)
    assert [b.lang for b in blocks] == ["bash", "console"]
    launches = scan_markdown(rst, "guide.rst").launches
    assert [dtype(x).text for x in launches] == ["nvfp4", "fp8_e4m3"]
    assert at(rst, dtype(launches[0]).span) == "nvfp4"


@given(st.text(max_size=300))
def test_markdown_never_raises(text):
    for path in ("a.md", "a.rst"):
        res = scan_markdown("```bash\nsglang\n" + text, path)
        assert isinstance(res.errors, list)


# ---------------------------------------------------------------------------
# Notebooks


def notebook(*cells, kernel="python3", language="python") -> str:
    nb = new_notebook()
    nb.metadata = {"kernelspec": {"name": kernel, "language": language, "display_name": kernel}}
    nb.cells = list(cells)
    return nbformat.writes(nb)


def test_read_cells_maps_json_sources():
    text = notebook(new_markdown_cell("# nvfp4"), new_code_cell('x = "nvfp4"\nprint(x)\t# é'))
    cells, meta = read_cells(text)
    assert [c.cell_type for c in cells] == ["markdown", "code"]
    code = cells[1]
    assert code.number == 2 and code.source == 'x = "nvfp4"\nprint(x)\t# é'
    k = code.source.index("nvfp4")
    assert at(text, code.omap.span(Span(k, k + 5))) == "nvfp4"
    assert code.omap.span(Span(0, len(code.source))) is None  # quotes and line break are escaped in JSON
    assert meta["kernelspec"]["name"] == "python3"


def test_bang_lines_percent_env_and_bash_cells():
    text = notebook(
        new_code_cell("%env HIP_VISIBLE_DEVICES=0\n%env KV=fp4_mx_block16"),
        new_code_cell("!python3 -m sglang.launch_server --model-path m \\\n  --kv-cache-dtype $KV"),
        new_code_cell("%%bash\npython3 -m sglang.launch_server --model-path m --kv-cache-dtype nvfp4"),
        new_code_cell("%%javascript\nsglang.launch_server('--kv-cache-dtype nvfp4')"),
    )
    launches = scan_notebook(text, "nb.ipynb").launches
    assert len(launches) == 2
    first, second = launches
    assert at(text, dtype(first).span) == "fp4_mx_block16" and at(text, dtype(first).use) == "$KV"
    assert at(text, dtype(second).span) == "nvfp4"
    assert all(("platform", "rocm") in [(h.kind, h.value) for h in x.hints] for x in launches)
    got, rep = lint(text, "nb.ipynb", "notebook")
    assert [c for c, _ in got] == ["KV402", "KV402"]
    edits = [e for f in rep.findings for e in f.fix.edits]
    fixed, skipped = apply_edits(text, edits)
    assert skipped == []
    nb = nbformat.reads(fixed, as_version=4)
    nbformat.validate(nb)
    assert nb.cells[0].source == "%env HIP_VISIBLE_DEVICES=0\n%env KV=fp8_e4m3"
    assert nb.cells[2].source.endswith("--kv-cache-dtype fp8_e4m3")


def test_outputs_and_markdown_cells_are_never_scanned_or_edited():
    cell = new_code_cell("print('hi')")
    cell.outputs = [new_output("stream", name="stdout",
                               text="!python3 -m sglang.launch_server --kv-cache-dtype nvfp4 --device rocm\n")]
    text = notebook(new_markdown_cell("```bash\npython -m sglang.launch_server --kv-cache-dtype nvfp4"
                                      " --device rocm\n```"), cell)
    assert scan_notebook(text, "nb.ipynb").launches == []


def test_bash_kernel_cells_are_shell():
    text = notebook(new_code_cell("python3 -m sglang.launch_server --kv-cache-dtype nvfp4 --device rocm"),
                    kernel="bash", language="bash")
    (launch,) = scan_notebook(text, "nb.ipynb").launches
    assert at(text, dtype(launch).span) == "nvfp4"


def test_writefile_cell_scanned_as_its_language():
    text = notebook(new_code_cell("%%writefile serve.sh\npython3 -m sglang.launch_server --kv-cache-dtype nvfp4"),
                    new_code_cell("%%writefile notes.txt\npython3 -m sglang.launch_server --kv-cache-dtype nvfp4"))
    (launch,) = scan_notebook(text, "nb.ipynb").launches
    assert at(text, dtype(launch).span) == "nvfp4"


def test_cell_position():
    text = notebook(new_markdown_cell("intro"),
                    new_code_cell("import os\n!python3 -m sglang.launch_server --kv-cache-dtype nvfp4"))
    off = text.index("nvfp4")
    assert cell_position(text, off) == (2, 2)
    assert cell_position(text, text.index("import")) == (2, 1)
    assert cell_position(text, 0) is None
    one_string = '{"cells": [{"cell_type": "code", "source": "a\\nb nvfp4", "metadata": {}, "outputs": []}]}'
    assert cell_position(one_string, one_string.index("nvfp4")) == (1, 2)


def test_a_finding_in_a_notebook_names_its_cell():
    """The runner asks the frontend registry where a finding lies in a notebook: the text report says the cell."""
    text = notebook(new_markdown_cell("intro"),
                    new_code_cell("import os\n!python3 -m sglang.launch_server --kv-cache-dtype nvfp4 --device cpu"))
    (f,) = lint_text("nb.ipynb", text, S23, language="notebook").findings
    assert f.cell == (2, 2)
    assert lint_text("serve.sh", "python3 -m sglang.launch_server --kv-cache-dtype nvfp4 --device cpu\n", S23,
                     language="shell").findings[0].cell is None


def test_split_ipython():
    src = "x = 1\nif x:\n    !echo $x\n    y = !ls\n%time f()\nz = %pwd\n"
    split = split_ipython(src, OffsetMap.contiguous(100, len(src)))
    assert split.python == "x = 1\nif x:\n    pass\n    y = None\npass\nz = None\n"
    assert [c for c, _, _ in split.shell] == ["echo $x", "ls"]
    cmd, cmap, line = split.shell[0]
    assert line == 3 and cmap.span(Span(0, 4)) == Span(100 + src.index("echo"), 100 + src.index("echo") + 4)


@pytest.mark.parametrize("text,line", [
    ("{", 1),
    ('{"cells": [\n  {"cell_type": "code", "source": "x"\n  ,,]}', 3),
    ("[1, 2]", None),
    ('{"cells": 3}', None),
])
def test_bad_notebooks_are_file_errors_with_lines(text, line):
    res = scan_notebook(text, "nb.ipynb")
    assert res.launches == []
    if line is not None:
        (err,) = res.errors
        assert err.line == line


@given(st.recursive(st.none() | st.booleans() | st.text(max_size=20),
                    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.sampled_from(
                        ["cells", "source", "cell_type", "metadata", "x"]), kids, max_size=4), max_leaves=20))
def test_notebook_never_raises(doc):
    res = scan_notebook(json.dumps({"cells": [doc, {"cell_type": "code", "source": ["!sglang serve\n", doc]
                                                    if isinstance(doc, str) else doc}]}), "nb.ipynb")
    assert isinstance(res.errors, list)


def test_suppression_comment_above_a_fence():
    md = ("<!-- kv4lint: disable=KV402 -->\n```bash\n"
          f"docker run {ROCM} python3 -m sglang.launch_server --kv-cache-dtype nvfp4\n```\n\n"
          f"```bash\ndocker run {ROCM} python3 -m sglang.launch_server --kv-cache-dtype nvfp4\n```\n")
    got, _ = lint(md, "README.md", "markdown")
    assert got == [("KV402", "nvfp4\n```\n")]


# ---------------------------------------------------------------------------
# Python in documents and cells (through the Python frontend)


def kwarg(launch, name):
    return launch.kwargs[name]


def test_python_fence_engine_kwargs_map_to_the_file():
    md = ('Intro\n\n```python\nimport sglang as sgl\n'
          'llm = sgl.Engine(model_path="Qwen/Qwen3-8B", kv_cache_dtype="nvfp4", attention_backend="triton")\n```\n')
    (launch,) = scan_markdown(md, "README.md").launches
    v = kwarg(launch, "kv_cache_dtype")
    assert at(md, v.span) == "nvfp4" and v.span.start == md.index("nvfp4")


def test_notebook_code_cell_with_ipython_lines_around_python():
    text = notebook(new_code_cell(
        "import sglang as sgl\n%load_ext autoreload\nif True:\n    !nvidia-smi\n"
        "    llm = sgl.Engine(model_path=\"m\", kv_cache_dtype=\"nvfp4\", attention_backend=\"triton\")"))
    (launch,) = scan_notebook(text, "nb.ipynb").launches
    v = kwarg(launch, "kv_cache_dtype")
    assert at(text, v.span) == "nvfp4"
    assert cell_position(text, v.span.start) == (1, 5)


def test_python_syntax_error_in_a_fence_is_reported_at_the_block():
    md = "x\n\n```python\nimport sglang\nsglang.Engine(kv_cache_dtype='nvfp4'\n```\n"
    res = scan_markdown(md, "README.md")
    assert res.launches == []
    assert [e.line for e in res.errors] == [4]
