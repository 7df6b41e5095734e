#!/usr/bin/env python3
"""A local SMTP server (aiosmtpd) that keeps every message it accepts as an .eml file, for
`scripts/run` (auth's mails land in .local/mail) and for the auth tests (a real SMTP server with
STARTTLS or implicit TLS, AUTH, refused recipients and temporary failures on demand).

  mail-catcher.py serve --port P --dir DIR [--host 127.0.0.1] [--starttls | --tls]
                  [--cert PEM --key PEM] [--user U --password P]
                  [--refuse ADDRESS]... [--tempfail N] [--plain-auth]
  mail-catcher.py parse FILE      prints the message as JSON, read by Python's own email parser

Each accepted message is written whole (temporary name, then rename) as `<unix ms>-<uuid>.eml`,
with `Return-Path` and `Delivered-To` on top as a mail server's delivery agent adds them.
`--tempfail N` answers the first N DATA commands with 451 (a server that asks to try again);
`--refuse` answers RCPT TO for that address with 550. With --user, AUTH (PLAIN or LOGIN) is
required, and only after TLS (`--plain-auth`: also without, as a man in the middle who strips
STARTTLS would offer it).
"""

from __future__ import annotations

import argparse
import email
import email.policy
import email.utils
import json
import os
import signal
import ssl
import sys
import threading
import time
import uuid
from pathlib import Path


def serve(args: argparse.Namespace) -> None:
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult, LoginPassword

    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    refused = {address.lower() for address in args.refuse}
    state = {"tempfail": args.tempfail}
    lock = threading.Lock()

    class Handler:
        async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
            if address.lower() in refused:
                return f"550 5.1.1 <{address}>: Recipient address rejected: User unknown in local recipient table"
            envelope.rcpt_tos.append(address)
            return "250 2.1.5 OK"

        async def handle_DATA(self, server, session, envelope):
            with lock:
                if state["tempfail"] > 0:
                    state["tempfail"] -= 1
                    return "451 4.3.0 Temporary local problem: please try again later"
            name = f"{int(time.time() * 1000)}-{uuid.uuid4()}.eml"
            head = f"Return-Path: <{envelope.mail_from}>\r\nDelivered-To: {', '.join(envelope.rcpt_tos)}\r\n".encode()
            temporary = folder / f".{name}.tmp"
            temporary.write_bytes(head + envelope.original_content)
            temporary.rename(folder / name)
            # The log shows each mail as a person reads it (the .eml keeps its base64 parts).
            message = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
            body = message.get_body(preferencelist=("plain",))
            print(f"mail-catcher: {name} from {envelope.mail_from} to {', '.join(envelope.rcpt_tos)}: {message.get('Subject', '')}", flush=True)
            if body is not None:
                print("    " + body.get_content().strip().replace("\r\n", "\n").replace("\n", "\n    "), flush=True)
            return "250 2.0.0 Ok: queued"

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and auth_data.login.decode() == args.user and auth_data.password.decode() == args.password
        # Counted beside the mails (never the password), so tests can tell how often a client tried.
        with lock, open(folder / "auth-attempts", "a") as attempts:
            attempts.write(f"{mechanism} {'ok' if ok else 'refused'}\n")
        return AuthResult(success=ok, handled=False)

    options: dict = {}
    context = None
    if args.starttls or args.tls:
        if not (args.cert and args.key):
            sys.exit("mail-catcher: --starttls and --tls need --cert and --key")
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.cert, args.key)
    if args.starttls:
        options.update(tls_context=context, require_starttls=True)
    if args.tls:
        options.update(ssl_context=context)
    if args.user:
        # aiosmtpd counts only STARTTLS as TLS; with --tls the whole connection is.
        options.update(authenticator=authenticator, auth_required=True, auth_require_tls=not (args.tls or args.plain_auth))
    controller = Controller(Handler(), hostname=args.host, port=args.port, server_hostname="localhost", **options)
    controller.start()
    print(f"mail-catcher: listening on {args.host}:{args.port}, saving to {folder}", flush=True)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    controller.stop()


def parse(args: argparse.Namespace) -> None:
    raw = Path(args.file).read_bytes()
    message = email.message_from_bytes(raw, policy=email.policy.default)
    parts = {}
    for part in message.walk():
        if part.is_multipart():
            continue
        parts.setdefault(part.get_content_type(), {"charset": part.get_content_charset(), "encoding": part.get("Content-Transfer-Encoding"), "content": part.get_content()})
    date = message.get("Date")
    print(json.dumps({
        "headers": {key: str(value) for key, value in message.items()},
        "raw_subject": email.message_from_bytes(raw, policy=email.policy.compat32).get("Subject"),
        "content_type": message.get_content_type(),
        "date_utc": email.utils.parsedate_to_datetime(date).isoformat() if date else None,
        "parts": parts,
        "defects": [repr(defect) for part in message.walk() for defect in part.defects],
        "raw": raw.decode("utf-8", "replace"),
    }))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    server = commands.add_parser("serve")
    server.add_argument("--host", default="127.0.0.1")
    server.add_argument("--port", type=int, required=True)
    server.add_argument("--dir", required=True)
    security = server.add_mutually_exclusive_group()
    security.add_argument("--starttls", action="store_true")
    security.add_argument("--tls", action="store_true")
    server.add_argument("--cert")
    server.add_argument("--key")
    server.add_argument("--user")
    server.add_argument("--password")
    # AUTH without TLS: what a man in the middle who strips STARTTLS offers (tests only).
    server.add_argument("--plain-auth", action="store_true")
    server.add_argument("--refuse", action="append", default=[])
    server.add_argument("--tempfail", type=int, default=0)
    reader = commands.add_parser("parse")
    reader.add_argument("file")
    args = parser.parse_args()
    serve(args) if args.command == "serve" else parse(args)


if __name__ == "__main__":
    main()
