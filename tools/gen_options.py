"""Regenerate kv4lint/sglang/data/options.json.gz from the spec's option list.

    python tools/gen_options.py ../shared/spec/sglang-cli-options.json

The data are facts about SGLang's CLI (option string -> field, arity, choices),
one table per inspected release; releases whose table equals the previous one
are stored as a reference to it to keep the file small.
"""

import gzip
import json
import sys
from pathlib import Path

src = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/spec/sglang-cli-options.json")
data = json.loads(src.read_text())["versions"]
out: dict[str, object] = {}
prev_key, prev_table = None, None
for version, table in data.items():
    if table == prev_table:
        out[version] = {"same_as": prev_key}
    else:
        out[version] = table
        prev_key, prev_table = version, table
dest = Path(__file__).resolve().parents[1] / "kv4lint/sglang/data/options.json.gz"
dest.write_bytes(gzip.compress(json.dumps(out, sort_keys=True, separators=(",", ":")).encode(), mtime=0))
print(f"{dest}: {len(data)} releases, {dest.stat().st_size} bytes")
