"""A rule's documentation as Markdown, from :data:`kv4lint.rules.codes.RULES`.

The same text and examples (each with its ``# target:`` line, run by tests/test_rule_examples.py) as
``kv4lint explain``: used for ``docs/rules/KV40x.md``
(``tools/gen_rule_docs.py``) and for the ``help`` of each rule in SARIF output.
"""

from __future__ import annotations

from kv4lint.rules.codes import RULES, Rule

# The sections every rule page has, in order: (heading, what fills it).
SECTIONS = (
    "What it does",
    "Why SGLang refuses it",
    "Example",
    "Fix",
    "Not reported",
    "Fix safety",
    "Since which SGLang release",
)


def _code_block(text: str) -> str:
    return "```shell\n" + text.rstrip("\n") + "\n```"


def sections(rule: Rule) -> dict[str, str]:
    """Section heading -> Markdown body. An empty body means the rule's data lacks that part."""
    return {
        "What it does": rule.what.strip(),
        "Why SGLang refuses it": rule.why.strip(),
        "Example": _code_block(rule.example) if rule.example.strip() else "",
        "Fix": rule.fix.strip(),
        "Not reported": _code_block(rule.fixed_example) if rule.fixed_example.strip() else "",
        "Fix safety": rule.fix_safety.strip(),
        "Since which SGLang release": _since(rule),
    }


def _since(rule: Rule) -> str:
    if not rule.since.strip():
        return ""
    return (f"SGLang {rule.since.strip()}: the first release with a check this rule reports. Later releases added "
            "cases; *What it does* names them.")


def rule_markdown(rule: Rule, *, title: bool = True) -> str:
    """The rule's page. ``title=False`` leaves out the heading and summary line (SARIF help)."""
    out = []
    if title:
        out += [f"# {rule.code}: {rule.name}", "",
                f"**{rule.summary}** (severity: {rule.severity.value})", ""]
    level = "##" if title else "###"
    for heading, body in sections(rule).items():
        out += [f"{level} {heading}", "", body, ""]
    if title:
        out += ["## Suppressing it", "",
                f"`# kv4lint: disable={rule.code}` on the line before a shell command (or at its end), "
                f"`# noqa: {rule.code}` in Python, `# kv4lint: disable-file={rule.code}` for a whole file, or "
                f"`ignore = [\"{rule.code}\"]` / `per-file-ignores` in the configuration "
                "([configuration](../configuration.md)).", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def rule_text(rule: Rule) -> str:
    """Plain-text help (SARIF ``help.text``)."""
    s = sections(rule)
    parts = [f"{rule.code} ({rule.name}): {rule.summary}"]
    parts += [f"{h}: {rule_plain(b)}" for h, b in s.items()]
    return "\n\n".join(parts)


def rule_plain(md: str) -> str:
    return md.replace("```shell\n", "").replace("\n```", "").replace("`", "")


def index_markdown() -> str:
    lines = ["# kv4lint rules", "",
             "One page per code, generated from kv4lint's rule data by `tools/gen_rule_docs.py` (the same text as "
             "`kv4lint explain CODE`). Do not edit these pages by hand.", "",
             "## The attribution rule", "",
             "A finding's code and first sentence name the cause SGLang would actually hit, in the user's terms; its "
             "fix addresses that cause or is not offered. kv4lint replays SGLang's argument resolution for the "
             "target release; when it refuses the launch, kv4lint replays it again with an fp8 KV cache (and the "
             "FP4-only options removed). A refusal that goes away is caused by the FP4 KV cache and gets a KV4 code "
             "(KV401-KV406) with the fp8 rewrite as its fix. A refusal that stays is a blocker the dtype does not "
             "cause: KV407 names what SGLang refuses, quotes its reason in the detail and offers no dtype rewrite; "
             "kv4lint then replays SGLang past "
             "that blocker, and when SGLang's KV4 check would refuse the launch too, reports that KV4 finding as "
             "well. Off CUDA, a refusal for the GPU arch is reported as the platform (KV402).", "",
             "## Target sets and severity", "",
             "A launch is judged against the set of targets it can be for, decided by one precedence: what the "
             "user states (`--sglang-version`, `--gpu`, the configuration), what the file itself says (a pin or a "
             "versioned image tag; a GPU named by an image tag, a scheduler request, a node selector, a heading or "
             "a comment; the model's attention from its name or `config.json`), what the repository pins, what "
             "kv4lint infers, and else every candidate. An unstated release is inferred from the launch's own "
             "options: the newest release that takes all of them (`--cuda-graph-max-bs` points to 0.5.19); where "
             "none does, KV409 says the launch is for a build kv4lint does not know, and no parser finding (KV408) "
             "claims to know that build. An unstated GPU is every GPU kv4lint knows, judged once per kind SGLang "
             "tells apart (Ampere/Ada, Hopper, Blackwell, Thor, Blackwell RTX/GB10), and an unknown model is MHA "
             "and MLA.", "",
             "The verdict says where it holds: an *error* when SGLang refuses the launch on every candidate "
             "(`(any GPU)`, `(MHA and MLA models)`), one *warning* per token and cause naming the candidates that "
             "refuse it when only some do (`refused on Ampere/Ada, Hopper and Thor: --kv-cache-dtype nvfp4 needs "
             "Blackwell; set --gpu to decide`), nothing when all accept it. Only an error's fix is safe (and only "
             "when every candidate accepts the fixed launch): a warning's fix is unsafe, for it would take away a "
             "choice that works on the other candidates. A verdict of an unpinned launch that older releases "
             "taking its options do not share names the releases (`from SGLang 0.5.21: ...`). The same cause on "
             "several paths of a script is one finding naming their conditions (`when MODE=a or MODE=b: ...`). "
             "`--strict` also reports a launch whose unresolved backend value fails for some of its values. An "
             "assumed GPU is never printed as the target's.", "",
             "Warnings and errors both make `kv4lint check` exit 1; `--severity error` (or `severity = \"error\"` "
             "in the configuration) reports errors only, for a gate that fails on certain refusals alone.",
             "", "## What a finding says", "",
             "Its *headline* (the line of `kv4lint check`, flake8 and editors; `message` in JSON and SARIF) is the "
             "flag and value as the launch writes them, the cause in the user's terms and the one fix, in about 100 "
             "characters: `--kv-cache-dtype nvfp4 needs Blackwell (SM100/SM120), not sm90 (Hopper); use fp8_e4m3`. "
             "Its *detail* (`--format full`, `detail` in JSON, `properties.detail` in SARIF, `--show-target`) has "
             "the rest: SGLang's function and its own words, where kv4lint took the target from, the alternatives "
             "to the fix, and the resolution steps that set the values SGLang read.",
             "", "## Codes", "",
             "| code | name | severity | summary |", "|---|---|---|---|"]
    for code in sorted(RULES):
        r = RULES[code]
        lines.append(f"| [{code}]({code}.md) | {r.name} | {r.severity.value} | {r.summary} |")
    return "\n".join(lines) + "\n"
