"""The stored option tables (kv4lint/sglang/data/options.json.gz): each distinct spec once, each release as what
changed from the release before it (issue 37: whole, the 26 releases were 680 kB of JSON read on every run that
judges a launch).  tools/gen_options.py writes them with ``pack_tables`` and compares the wheels' with
``stored_tables``; the conformance test of that tool reads the real wheels."""

from __future__ import annotations

from kv4lint.sglang import options

TABLES = {
    "0.5.10": {"--b": ["b", "value", None], "--a": ["a", "flag", None], "--gone": ["gone", "value", None]},
    "0.5.9": {"--a": ["a", "flag", None], "--gone": ["gone", "value", None]},
    "0.5.11": {"--a": ["a", "flag", None], "--b": ["b", "value", ["x", "y"]], "--c": ["a", "flag", None]},
    "0.5.11.post1": {"--a": ["a", "flag", None], "--b": ["b", "value", ["x", "y"]], "--c": ["a", "flag", None]},
    "0.5.12": {"--b": ["b", "value", "<dynamic>"]},
}


def test_packed_tables_read_back_as_they_were_in_sorted_order():
    packed = options.pack_tables(TABLES)
    back = options.stored_tables(packed)
    assert list(back) == ["0.5.9", "0.5.10", "0.5.11", "0.5.11.post1", "0.5.12"]
    assert back == TABLES
    assert all(list(t) == sorted(t) for t in back.values())


def test_each_spec_is_stored_once_and_each_release_as_its_changes():
    packed = options.pack_tables(TABLES)
    assert packed["specs"] == [["a", "flag", None], ["gone", "value", None], ["b", "value", None],
                               ["b", "value", ["x", "y"]], ["b", "value", "<dynamic>"]]
    assert packed["releases"] == [
        ["0.5.9", {"--a": 0, "--gone": 1}],
        ["0.5.10", {"--b": 2}],
        ["0.5.11", {"--b": 3, "--c": 0, "--gone": None}],
        ["0.5.11.post1", {}],
        ["0.5.12", {"--a": None, "--b": 4, "--c": None}],
    ]


def test_a_release_that_keeps_the_table_before_it_shares_its_dict():
    """The stored data: a ``.post`` release with the table of the one before it gets the same table object (a run
    that judges a launch by every release keeps one of each), and every release's table is sorted."""
    releases = options.known_releases()
    stored = options.stored_tables()
    assert list(stored) == releases
    for before, release in zip(releases, releases[1:]):
        same = stored[release] == stored[before]
        assert (options._table_by_key(release) is options._table_by_key(before)) is same, release
    assert all(list(options._table_by_key(r)) == sorted(stored[r]) for r in releases)
    assert options.table("0.5.23")["--kv-cache-dtype"].choices == tuple(stored["0.5.23"]["--kv-cache-dtype"][2])


def test_the_config_files_words_come_first_each_marked_as_the_config_files():
    """normalise_argv reads the config file's words and then the command line's as one sequence (an option's value
    may be the first word after the config file's), each occurrence marked with where its option is written."""
    from kv4lint.sglang.options import literal_tokens, normalise_argv

    args = normalise_argv(literal_tokens(["2", "--port", "1"]), None,
                          config=literal_tokens(["--kv-cache-dtype", "fp8_e4m3", "--tp"]))
    read = {dest: [(o.spelled, [v.text for v in o.values], o.from_config) for o in occs]
            for dest, occs in args.occurrences.items()}
    assert read == {"kv_cache_dtype": [("--kv-cache-dtype", ["fp8_e4m3"], True)], "tp_size": [("--tp", ["2"], True)],
                    "port": [("--port", ["1"], False)]}
    assert normalise_argv(literal_tokens(["--tp", "2"]), None, config=[]).occurrences["tp_size"][0].from_config is False
