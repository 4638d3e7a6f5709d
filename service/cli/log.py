"""``maubinh log``: the transparency log of signed rulings (service/transparency/, docs/receipts.md).

``serve`` runs the log as its own process; ``vkey`` says its verifier key; ``check OLD NEW`` proves a newer
checkpoint extends an older one; ``monitor`` reads every entry and reports rounds ruled on two rooms and
rulings signed by unknown keys; ``proof`` adds to a receipt the tlog-proof of each of its rulings;
``witness`` runs a witness that cosigns the checkpoints of the logs it follows, and ``cosign`` asks one to.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from http.client import HTTPException
from pathlib import Path
from typing import Any

from service.cli.receipts import say_log_fault, verifier_of
from service.cli.shared import EXIT_REJECTED, EXIT_USAGE, Helped, language_option, on_terminal, say
from service.support.regular_files import open_regular
from service.texts import Language, Text, os_error

KEY_FILE_ENV = "MAUBINH_LOG_KEY_FILE"
ORIGIN_ENV = "MAUBINH_LOG_ORIGIN"
DIR_ENV = "MAUBINH_LOG_DIR"
DATABASE_ENV = "MAUBINH_LOG_DATABASE_URL"
DEFAULT_ORIGIN = "maubinh.example/log"
WITNESS_KEY_FILE_ENV = "MAUBINH_WITNESS_KEY_FILE"
DEFAULT_WITNESS = "maubinh.example/witness"


def signer_of(path: str, origin: str) -> Any:
    """The log's note signer: the Ed25519 key of a PEM file (as the service's signing key), named ``origin``."""
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

    from service.transparency.note import Signer
    from service.trust.signing import load_private_key

    key = load_private_key(path)
    return Signer(origin, key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption()))


def _most_per_client_refused(command: str, args: argparse.Namespace, language: Language) -> bool:
    """Whether ``--most-per-client`` is below 1, which would refuse every connection: said, a usage error."""
    if args.most_per_client is not None and args.most_per_client < 1:
        say(command, "cli.most_per_client_at_least_one", language, given=args.most_per_client)
        return True
    return False


def _serve(args: argparse.Namespace, language: Language) -> int:
    from service.transparency.add_key import ADD_KEY_FILE_ENV, AddKeyError, read_add_key
    from service.transparency.server import LogServer
    from service.trust.signing import SigningKeyError

    if _most_per_client_refused("log serve", args, language):
        return EXIT_USAGE
    origin = args.origin or os.environ.get(ORIGIN_ENV) or DEFAULT_ORIGIN
    key_file = os.environ.get(KEY_FILE_ENV)
    try:
        if not key_file:
            raise SigningKeyError(Text("tlog.key_not_set", env=KEY_FILE_ENV))
        signer = signer_of(key_file, origin)
    except (SigningKeyError, ValueError) as error:
        say("log serve", "tlog.no_key", language, why=error.args[0])
        return EXIT_USAGE
    add_key_file = os.environ.get(ADD_KEY_FILE_ENV)
    try:
        add_key = read_add_key(add_key_file) if add_key_file is not None else None
    except AddKeyError as error:
        say("log serve", "tlog.no_add_key", language, env=ADD_KEY_FILE_ENV, why=error.args[0])
        return EXIT_USAGE
    database = args.database or os.environ.get(DATABASE_ENV)
    folder = args.dir or os.environ.get(DIR_ENV)
    if database:
        from service.transparency.postgres import PostgresStore

        store: Any = PostgresStore(database)
        where = "PostgreSQL"
    elif folder:
        from service.transparency.stores import FolderStore

        store, where = FolderStore(folder), folder
    else:
        say("log serve", "tlog.no_store", language, dir=DIR_ENV, database=DATABASE_ENV)
        return EXIT_USAGE
    adds = (args.add_host or args.host, args.add_port) if args.add_port is not None else None
    try:
        server = LogServer(
            (args.host, args.port), store, signer, origin, args.interval, add_key,
            add_address=adds, most_per_client=args.most_per_client,
        )  # fmt: skip
    except OSError as error:
        ports = ", ".join(str(port) for port in (args.port, args.add_port) if port is not None)
        hosts = ", ".join(dict.fromkeys(host for host in (args.host, args.add_host) if host))
        say("log serve", "tlog.cannot_listen", language, host=hosts, ports=ports, error=os_error(error))
        return EXIT_USAGE
    said = {"origin": origin, "vkey": signer.verifier.vkey, "where": where, "size": server.integrator.published}
    say("log serve", "tlog.serving", language, host=args.host, port=str(server.server_address[1]), **said)
    say("log serve", "tlog.adds_keyed" if add_key else "tlog.adds_open", language, env=ADD_KEY_FILE_ENV)
    if server.adding is not None:
        added = server.adding.server_address
        say("log serve", "tlog.adds_port", language, host=str(added[0]), port=str(added[1]))
    stopped = threading.Event()

    def stop(signum: int, frame: Any) -> None:
        if not stopped.is_set():
            stopped.set()
            threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.serve_forever(poll_interval=0.2)
    server.stop()
    return 0


def _check(args: argparse.Namespace, language: Language) -> int:
    from service.transparency.merkle import ProofError
    from service.transparency.note import NoteError, open_checkpoint
    from service.transparency.reading import check_consistent, reader
    from service.transparency.tiles import TreeFault

    try:
        verifier = verifier_of(args.vkey)
    except (NoteError, OSError) as error:
        say_log_fault("log check", "tlog.inconsistent", language, error)
        return EXIT_REJECTED
    try:
        with open_regular(args.old) as old_file, open_regular(args.new) as new_file:
            old_text, new_text = old_file.read(65536), new_file.read(65536)
    except OSError as error:  # a checkpoint that cannot be read: the auditor's file, not the log's fault
        say("log check", "cli.cannot_open", language, file=error.filename, error=os_error(error))
        return EXIT_USAGE
    try:
        old, new = open_checkpoint(old_text, verifier), open_checkpoint(new_text, verifier)
        if new.size < old.size:
            raise ProofError(f"the newer checkpoint holds {new.size} entries, fewer than the older's {old.size}")
        check_consistent(reader(args.log), old, new)
    except (NoteError, ProofError, TreeFault, OSError) as error:
        say_log_fault("log check", "tlog.inconsistent", language, error)
        return EXIT_REJECTED
    say("log check", "tlog.consistent", language, old=old.size, new=new.size)
    return 0


def _monitor(args: argparse.Namespace, language: Language) -> int:
    from service.cli.receipts import _read_keys
    from service.transparency.note import NoteError
    from service.transparency.reading import latest, proven_bundle, reader
    from service.transparency.tiles import WIDTH, TiledTree, TreeFault, check_tree
    from service.trust.ruling_log import Findings
    from service.trust.signing import KeySet

    try:
        keys = set(KeySet.read(_read_keys(args.keys)).keys) if args.keys else None
        read = reader(args.log)
        checkpoint = latest(read, verifier_of(args.vkey))
        findings = Findings()
        for at, entry in check_tree(TiledTree(read, checkpoint.size, keep_all=False), checkpoint.root):
            findings.see(at, entry, keys)
        again = TiledTree(read, checkpoint.size)  # for the few entries read twice, its tiles read anew
        proven: dict[int, list[bytes]] = {}

        def reread(at: int) -> bytes:  # asked in order: a bundle read and proven once, kept till the next
            if at // WIDTH not in proven:
                proven.clear()
                proven[at // WIDTH] = proven_bundle(again, checkpoint, at // WIDTH)
            return proven[at // WIDTH][at % WIDTH]

        report = findings.report(reread)
    except (NoteError, TreeFault, OSError, ValueError) as error:
        say_log_fault("log monitor", "tlog.unreadable", language, error)
        return EXIT_REJECTED
    report |= {"checkpoint": {"size": checkpoint.size, "root": checkpoint.root.hex()}}
    print(json.dumps(report, indent=1))
    twice, unknown = len(report["rounds_scored_twice"]), sum(map(len, report["unknown_keys"].values()))
    said = {"twice": twice, "unknown": unknown, "unreadable": len(report["unreadable_entries"])}
    say("log monitor", "tlog.monitor_summary", language, entries=findings.entries, **said)
    return EXIT_REJECTED if any(said.values()) else 0


def _proof(args: argparse.Namespace, language: Language) -> int:
    from service.support.strict_json import BadDocument
    from service.transparency.merkle import ProofError, leaf_hash
    from service.transparency.note import NoteError
    from service.transparency.reading import latest, prove_inclusion, reader
    from service.transparency.tiles import TiledTree, TreeFault
    from service.trust.receipt_reading import read_body, read_receipt
    from service.trust.receipts import ReceiptFault, read_shape
    from service.trust.ruling_log import LogIndex, receipt_statements

    try:  # the receipt read and shaped as receipts verify reads one: its faults are its own, not the log's
        with open_regular(args.receipt) as file:
            receipt = read_receipt(file.read(64 * 1024 * 1024))
        request = read_body(read_shape(receipt)[1])
        rulings, _ = receipt_statements(receipt, request)
        if not rulings:
            raise BadDocument(Text("tlog.no_rulings"))
    except OSError as error:
        say("log proof", "cli.cannot_open", language, file=error.filename or args.receipt, error=os_error(error))
        return EXIT_USAGE
    except BadDocument as error:
        say("log proof", "receipts.unreadable", language, error=error.args[0])
        return EXIT_REJECTED
    except ReceiptFault as fault:
        print(f"maubinh log proof: {on_terminal(fault.says().render(language))}", file=sys.stderr)
        return EXIT_REJECTED
    try:
        read = reader(args.log)
        checkpoint = latest(read, verifier_of(args.vkey))
        index = LogIndex.of(TiledTree(read, checkpoint.size, keep_all=False), checkpoint.root)
    except (BadDocument, NoteError, TreeFault, OSError, ValueError, KeyError, TypeError) as error:
        say_log_fault("log proof", "tlog.unreadable", language, error)
        return EXIT_REJECTED
    proofs = []
    for k, ruling in enumerate(rulings):
        at = index.at(leaf_hash(ruling))
        if at is None:
            say("log proof", "tlog.not_found", language, ruling=k, size=checkpoint.size)
            return EXIT_REJECTED
        try:  # made from the tiles as read again: proven before it is written, as a verifier will prove it
            proof = prove_inclusion(read, checkpoint, at)
            proof.verify(ruling, verifier_of(args.vkey))
        except (NoteError, ProofError, TreeFault, OSError, ValueError) as error:
            say_log_fault("log proof", "tlog.unreadable", language, error)
            return EXIT_REJECTED
        proofs.append(proof.text())
    receipt["log"] = {"proofs": proofs}
    print(json.dumps(receipt, ensure_ascii=False, indent=1))
    say("log proof", "tlog.proof_written", language, proofs=len(proofs), size=checkpoint.size)
    return 0


def _cosigner(name: str | None, key: str | None) -> Any:
    from service.transparency.witness import Cosigner

    given = key or os.environ.get(WITNESS_KEY_FILE_ENV)
    if not given:
        raise ValueError(Text("tlog.key_not_set", env=WITNESS_KEY_FILE_ENV))
    signer = signer_of(given, name or DEFAULT_WITNESS)
    return Cosigner(signer.name, signer.seed)


def _witness(args: argparse.Namespace, language: Language) -> int:
    from service.transparency.witness import Witness, WitnessServer

    if _most_per_client_refused("log witness", args, language):
        return EXIT_USAGE
    try:
        cosigner = _cosigner(args.name, None)
        logs = {verifier.name: verifier for verifier in (verifier_of(v, "--log-vkey") for v in args.log_vkey)}
        witness = Witness(Path(args.dir), logs, cosigner)
        server = WitnessServer((args.host, args.port), witness, most_per_client=args.most_per_client)
    except (OSError, ValueError) as error:
        say_log_fault("log witness", "tlog.witness_unready", language, error)
        return EXIT_USAGE
    said = {"name": cosigner.name, "vkey": cosigner.key.vkey, "logs": ", ".join(sorted(logs))}
    say("log witness", "tlog.witnessing", language, host=args.host, port=str(server.server_address[1]), **said)
    signal.signal(signal.SIGTERM, lambda signum, frame: threading.Thread(target=server.shutdown).start())
    server.serve_forever(poll_interval=0.2)
    server.server_close()
    return 0


def _cosign(args: argparse.Namespace, language: Language) -> int:
    from service.transparency.note import NoteError
    from service.transparency.reading import latest, reader
    from service.transparency.tiles import TreeFault
    from service.transparency.witness import CosignerKey, request_cosignature

    try:
        read = reader(args.log)
        checkpoint = latest(read, verifier_of(args.vkey))
        given = args.witness_key
        key = CosignerKey.parse(Path(given).read_text()[:4096] if os.path.isfile(given) else given)
        status, body = request_cosignature(read, checkpoint, args.witness)
        if status != 200:
            raise NoteError(f"the witness answered {status}: {body.decode('utf-8', 'replace').strip()[:300]}")
        cosigned = checkpoint.note + body.decode()
        key.timestamp(cosigned)
    except (NoteError, TreeFault, OSError, ValueError, HTTPException) as error:  # HTTPException: no HTTP
        say_log_fault("log cosign", "tlog.not_cosigned", language, error)
        return EXIT_REJECTED
    print(cosigned, end="")
    say("log cosign", "tlog.cosigned", language, name=key.name, size=checkpoint.size)
    return 0


def run(args: argparse.Namespace) -> int:
    language: Language = args.lang
    commands = {
        "serve": _serve, "check": _check, "monitor": _monitor, "proof": _proof, "witness": _witness, "cosign": _cosign
    }  # fmt: skip
    command = commands.get(args.log_command)
    if command is not None:
        return command(args, language)
    try:  # vkey
        if args.witness:
            print(_cosigner(args.origin, args.key).key.vkey)
            return 0
        origin = args.origin or os.environ.get(ORIGIN_ENV) or DEFAULT_ORIGIN
        key_file = args.key or os.environ.get(KEY_FILE_ENV)
        if not key_file:  # before: the empty path's FileNotFoundError, said as a PEM fault
            raise ValueError(Text("tlog.key_not_given", env=KEY_FILE_ENV))
        print(signer_of(key_file, origin).verifier.vkey)
    except (OSError, ValueError) as error:
        say("log vkey", "tlog.no_key", language, why=error.args[0])
        return EXIT_USAGE
    return 0


def arguments(log: argparse.ArgumentParser, helped: Helped, language: Language) -> None:
    language_option(log, language)
    commands = log.add_subparsers(dest="log_command", required=True)
    serve = commands.add_parser("serve", help=helped("cli.help_log_serve"))
    serve.add_argument("--dir", metavar=helped("cli.metavar_dir"), help=helped("cli.help_log_dir"))
    serve.add_argument("--database", metavar=helped("cli.metavar_url"), help=helped("cli.help_log_database"))
    serve.add_argument("--host", default="127.0.0.1", metavar=helped("cli.metavar_host"), help=helped("cli.help_host"))
    serve.add_argument(
        "--port", type=int, default=8100, metavar=helped("cli.metavar_port"), help=helped("cli.help_log_port")
    )
    serve.add_argument("--add-port", type=int, metavar=helped("cli.metavar_port"), help=helped("cli.help_log_add_port"))
    serve.add_argument("--add-host", metavar=helped("cli.metavar_host"), help=helped("cli.help_log_add_host"))
    serve.add_argument(
        "--most-per-client", type=int, metavar=helped("cli.metavar_count"), help=helped("cli.help_most_per_client")
    )
    serve.add_argument("--origin", metavar=helped("cli.metavar_origin"), help=helped("cli.help_log_origin"))
    serve.add_argument(
        "--interval",
        type=float,
        default=0.5,
        metavar=helped("cli.metavar_seconds"),
        help=helped("cli.help_log_interval"),
    )
    vkey = commands.add_parser("vkey", help=helped("cli.help_log_vkey"))
    vkey.add_argument("--key", metavar=helped("cli.metavar_pem"), help=helped("cli.help_log_key"))
    vkey.add_argument("--origin", metavar=helped("cli.metavar_origin"), help=helped("cli.help_log_origin"))
    vkey.add_argument("--witness", action="store_true", help=helped("cli.help_log_vkey_witness"))
    witness = commands.add_parser("witness", help=helped("cli.help_log_witness"))
    witness.add_argument("--dir", required=True, metavar=helped("cli.metavar_dir"), help=helped("cli.help_witness_dir"))
    witness.add_argument(
        "--log-vkey",
        action="append",
        required=True,
        metavar=helped("cli.metavar_vkey"),
        help=helped("cli.help_witness_log_vkey"),
    )
    witness.add_argument("--name", metavar=helped("cli.metavar_origin"), help=helped("cli.help_witness_name"))
    witness.add_argument(
        "--most-per-client", type=int, metavar=helped("cli.metavar_count"), help=helped("cli.help_most_per_client")
    )
    witness.add_argument(
        "--host", default="127.0.0.1", metavar=helped("cli.metavar_host"), help=helped("cli.help_host")
    )
    witness.add_argument(
        "--port", type=int, default=8200, metavar=helped("cli.metavar_port"), help=helped("cli.help_port")
    )
    cosign = commands.add_parser("cosign", help=helped("cli.help_log_cosign"))
    cosign.add_argument(
        "--witness", required=True, metavar=helped("cli.metavar_url"), help=helped("cli.help_cosign_witness")
    )
    cosign.add_argument(
        "--witness-key", required=True, metavar=helped("cli.metavar_vkey"), help=helped("cli.help_cosign_witness_key")
    )
    check = commands.add_parser("check", help=helped("cli.help_log_check"))
    check.add_argument("old", metavar=helped("cli.metavar_old"), help=helped("cli.help_log_checkpoint"))
    check.add_argument("new", metavar=helped("cli.metavar_new"), help=helped("cli.help_log_checkpoint"))
    monitor = commands.add_parser("monitor", help=helped("cli.help_log_monitor"))
    monitor.add_argument("--keys", metavar=helped("cli.metavar_jwks"), help=helped("cli.help_receipts_keys"))
    proof = commands.add_parser("proof", help=helped("cli.help_log_proof"))
    proof.add_argument("receipt", metavar=helped("cli.metavar_file"), help=helped("cli.help_receipts_file"))
    for parser in (check, monitor, proof, cosign):
        parser.add_argument(
            "--log", required=True, metavar=helped("cli.metavar_url_or_dir"), help=helped("cli.help_log_where")
        )
        parser.add_argument(
            "--vkey", required=True, metavar=helped("cli.metavar_vkey"), help=helped("cli.help_log_vkey_given")
        )
    for parser in (serve, vkey, check, monitor, proof, witness, cosign):
        language_option(parser, language)
