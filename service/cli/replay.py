"""``maubinh replay``: recorded rounds re-scored under a candidate ruleset, and the money it would move."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from service.bulk import VIEWER
from service.cli.shared import (
    EXIT_USAGE,
    Helped,
    language_option,
    open_input,
    progress_bar,
    say,
    seconds_said,
)
from service.rulesets.catalogue import Catalogue
from service.support.cores import available_cores
from service.support.extras import AUDIT, missing
from service.texts import Language, Text, os_error


def run(args: argparse.Namespace, catalogue: Catalogue) -> int:
    """``replay``: the figures on stdout (or -o FILE), or as Parquet tables in -o DIR; the page beside."""
    from service.rulesets import RulesetError
    from service.support.strict_json import BadDocument

    language: Language = args.lang
    parquet = args.format == "parquet"
    if parquet and not args.output:
        say("replay", "cli.tables_need_output", language)
        return EXIT_USAGE
    needs = "cli.report_needs" if args.report else "cli.replay_needs"
    if absent := missing(Text(needs).render(language), AUDIT, language):
        print(f"maubinh replay: {absent}", file=sys.stderr)
        return EXIT_USAGE
    from service.bulk import replay
    from service.bulk.replay_report import ReplayReport
    from service.bulk.report_page import HashedLines
    from service.bulk.table_files import ParquetTables

    if args.only is not None and catalogue.get(args.only) is None:
        say("replay", "cli.bad_only", language, why=catalogue.unknown(args.only).render(language))
        return EXIT_USAGE
    try:
        candidate = replay.read_candidate(args.ruleset, catalogue, args.only)
    except OSError as error:
        say("replay", "cli.cannot_open", language, file=error.filename, error=os_error(error))
        return EXIT_USAGE
    except (BadDocument, RulesetError) as error:
        why = error.args[0] if isinstance(error, BadDocument) else "; ".join(
            ("/".join(map(str, fault.path)) + ": " if fault.path else "") + fault.message.render(language)
            for fault in error.faults
        )  # fmt: skip
        say("replay", "cli.bad_candidate", language, given=args.ruleset, why=why)
        return EXIT_USAGE
    if isinstance(candidate.reference, dict) and not candidate.ruleset.changes:  # a patch that patches nothing
        say("replay", "cli.candidate_unchanged", language, base=candidate.name)
    if parquet and Path(args.output).exists() and not Path(args.output).is_dir():
        say("replay", "cli.output_is_a_file", language, path=args.output)
        return EXIT_USAGE
    try:
        source = open_input(args.jsonl)
        files = ParquetTables(args.output, "replay") if parquet else None
    except OSError as error:
        say("replay", "cli.cannot_open", language, file=error.filename, error=os_error(error))
        return EXIT_USAGE
    report = ReplayReport(candidate, language, args.viewer)

    def take(chunk: replay.Chunk) -> None:
        if files is not None:
            files.add(chunk.tables)
        report.add(chunk)

    lines = HashedLines(source, args.jsonl)
    with source:
        try:
            progress = progress_bar(args.jsonl, language)
            done = replay.run(lines, catalogue, candidate, args.jobs, take, progress, language)
            if progress is not None:
                progress.close()
        finally:
            if files is not None:
                files.close()
    figures = report.figures(done, lines)
    written = json.dumps(figures, indent=2, ensure_ascii=False) + "\n"
    if args.report:
        beside = Path(args.report).with_suffix(".json")
        Path(args.report).write_text(report.html(figures), encoding="utf-8")
        beside.write_text(written, encoding="utf-8")
        say("replay", "cli.report_written", language, page=args.report, figures=str(beside))
    elif not parquet:
        with open(args.output, "w", encoding="utf-8") if args.output else sys.stdout as out:
            out.write(written)
    rounds = figures["rounds"]
    summary = Text(
        "cli.replay_summary", lines=rounds["lines"], replayed=rounds["replayed"], changed=rounds["changed"],
        disagrees=rounds["disagrees"], refused=rounds["refused"], not_replayable=rounds["not_replayable"],
        skipped=rounds["skipped"], moved=figures["moved"]["total"], seconds=seconds_said(done.seconds, language),
    )  # fmt: skip
    print(f"maubinh replay: {summary.render(language)}", file=sys.stderr)
    return 0


def arguments(replay: argparse.ArgumentParser, helped: Helped, language: Language) -> None:
    replay.add_argument(
        "--jsonl", required=True, metavar=helped("cli.metavar_rounds"), help=helped("cli.help_replay_jsonl")
    )
    replay.add_argument(
        "--ruleset", required=True, metavar=helped("cli.metavar_candidate"), help=helped("cli.help_replay_ruleset")
    )
    replay.add_argument("--only", metavar=helped("cli.metavar_id"), help=helped("cli.help_replay_only"))
    replay.add_argument("--format", choices=("json", "parquet"), default="json", help=helped("cli.help_replay_format"))
    replay.add_argument(
        "-o", "--output", metavar=helped("cli.metavar_file_or_dir"), help=helped("cli.help_replay_output")
    )
    replay.add_argument("--report", metavar=helped("cli.metavar_html"), help=helped("cli.help_replay_report"))
    replay.add_argument("--viewer", metavar=helped("cli.metavar_url"), default=VIEWER, help=helped("cli.help_viewer"))
    replay.add_argument(
        "--jobs", type=int, default=available_cores(), metavar=helped("cli.metavar_jobs"), help=helped("cli.help_jobs")
    )
    language_option(replay, language)
