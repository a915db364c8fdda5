"""`counterfactual`: per-group variants of the user's own prompts, with the shipped or the user's word lists.

    python -m fairness_core counterfactual --prompts FILE|regard|bold:<domain> [--attribute gender]
        [--word-lists FILE] [--json] [--out FILE]

Prints the pairs (each prompt with its variants), the counts of prompts left out and the swap rule; `--out` writes
the prompt set as JSON that `decoding --prompts` reads back. `decoding --counterfactual gender` builds the same set
from its --prompts and sweeps it directly (docs/decoding.md, "Counterfactual prompts").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fairness_core.cli import UserFacingError, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "counterfactual", help="build per-group variants of your prompts by swapping identity words (a preview)")
    parser.add_argument("--prompts", required=True,
                        help="a file of prompts (one per line, a CSV with a prompt column, or JSON), or regard / "
                             "bold:<domain> for the shipped sets' texts")
    parser.add_argument("--attribute", action="append",
                        help="an attribute of the word lists to swap (repeatable; default: every attribute)")
    parser.add_argument("--cross", action="store_true",
                        help="with two or more --attribute: a variant per combination of their groups (each prompt "
                             "must name one group of each, e.g. 'The Black woman said that'), an intersectional set")
    parser.add_argument("--word-lists", metavar="FILE",
                        help="your word lists: JSON {attribute: {group: [words]}} or [attribute] sections of "
                             "'group: word, word' lines (default: the shipped lists)")
    parser.add_argument("--limit", type=int, default=20, help="pairs printed (default 20; --json prints all)")
    parser.add_argument("--out", metavar="FILE", help="write the prompt set as JSON (a decoding --prompts file)")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(handler=run)


def build(prompts: str, attributes: list[str] | None, word_lists: str | None, crossed: bool = False
          ):  # -> decoding.CounterfactualSet
    from fairness_core.decoding import PromptError, counterfactual_source

    try:
        return counterfactual_source(prompts, attributes, word_lists, crossed)
    except PromptError as error:
        raise UserFacingError(str(error)) from None


def run(args: argparse.Namespace) -> int:
    if args.limit < 0:
        raise UserFacingError(f"--limit must be 0 or more (got {args.limit})")
    out = Path(args.out).expanduser() if args.out else None
    if out is not None and (out.is_dir() or not out.parent.is_dir()):
        raise UserFacingError(f"--out {args.out}: give a file in an existing folder; nothing was written")
    built = build(args.prompts, args.attribute, args.word_lists, args.cross)
    if out is not None:
        from fairness_core.decoding import prompt_set_json

        out.write_text(prompt_set_json(built.prompt_set), encoding="utf-8")
        print(f"wrote {len(built.prompt_set.items)} prompts to {out}", file=sys.stderr)
    if args.json:
        print_json({"rule": built.rule, "counts": built.counts, "notes": built.notes,
                    "pairs": built.pairs.to_dict(orient="records")})
        return 0
    print(f"rule: {built.rule}")
    for note in built.notes:
        print(f"note: {note}")
    for row in built.pairs.head(args.limit).itertuples(index=False):
        print(f"  [{row.attribute}] {row.prompt!r} -> {row.group}: {row.variant!r}")
    if len(built.pairs) > args.limit:
        print(f"  … {len(built.pairs) - args.limit} more (--limit, or --json for all)")
    return 0
