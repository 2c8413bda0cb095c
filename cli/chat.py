"""`shardwise chat` (terminal conversation) and `shardwise ask "QUESTION"` (one answer, for scripts).

Both use the agent's ChatService: the offline planner unless an LLM is configured
(SHARDWISE_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY or the config file); sessions persist in
SQLite, so `ask --session NAME` continues a conversation across invocations.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..engine.errors import ShardwiseInputError
from .profile_file import add_profile_arg, profile_from_args

CHAT_HELP = """commands:
  /new            start a new session (forget the scenario)
  /session        show the session id and mode
  /configs        list the configs attached to the last answer
  /config NAME    print one of them (e.g. /config deepspeed)
  /save DIR       write them all into DIR
  /help           this text
  /quit           leave (Ctrl-D works too)"""


def register(subparsers) -> None:
    chat = subparsers.add_parser("chat", help="talk to the advisor in the terminal",
                                 description="A conversation with the advisor. Offline planner by default; "
                                             "an LLM when SHARDWISE_MODEL (and OPENAI_BASE_URL/OPENAI_API_KEY) are set.")
    _common(chat)
    chat.set_defaults(handler=run_chat)

    ask = subparsers.add_parser("ask", help="ask one question and print the answer",
                                description="One question, one answer. --session NAME continues a conversation "
                                            "(the scenario carries over); --json prints {answer, session, tool_calls, "
                                            "plan, configs}.")
    ask.add_argument("question", help="the question, in quotes")
    ask.add_argument("--json", action="store_true", help="print the answer as JSON")
    _common(ask)
    ask.set_defaults(handler=run_ask)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--session", help="session name to create or continue (letters, digits, . _ -)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--offline", action="store_true", help="use the offline planner even if an LLM is configured")
    mode.add_argument("--llm-model", metavar="NAME", help="use this LLM (overrides SHARDWISE_MODEL)")
    p.add_argument("--session-db", metavar="PATH", help="SQLite file for sessions (default: ~/.local/state/shardwise)")
    add_profile_arg(p)


def build_service(args: argparse.Namespace, setting_spelling: str = "words"):
    """`setting_spelling`: how answers name settings: `ask` is a terminal command ("flags": --moe-dispatcher),
    `chat` a conversation ("words": the MoE dispatcher) — agent/setting_spelling.py."""
    from ..agent.config import load_config
    from ..agent.service import ChatService

    config = load_config(session_db=args.session_db, model=args.llm_model)
    if args.offline:
        config = config.model_copy(update={"model": None})
    return ChatService(config, profile=profile_from_args(args), setting_spelling=setting_spelling)


def run_ask(args: argparse.Namespace) -> int:
    from ..agent.events import DeltaEvent, DoneEvent, ErrorEvent, SessionEvent

    service = build_service(args, setting_spelling="flags")
    if args.json:
        answer = service.ask(args.question, args.session)
        json.dump(answer.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        if answer.error and answer.mode == "offline" and answer.answer:  # the LLM failed; the planner answered
            print(f"shardwise: warning: {answer.error}", file=sys.stderr)
        elif answer.error:
            print(f"shardwise: error: {answer.error}", file=sys.stderr)
            return 2 if answer.error_kind == "input" else 1
        return 0
    status, session = 0, None
    for event in service.stream(args.question, args.session):
        if isinstance(event, SessionEvent):
            session = event.session_id
        elif isinstance(event, DeltaEvent):
            sys.stdout.write(event.text)
            sys.stdout.flush()
        elif isinstance(event, ErrorEvent) and event.offline:
            # the LLM failed; the offline planner answered the same question
            print(f"shardwise: warning: {event.message}", file=sys.stderr)
            sys.stdout.write(event.offline["answer"].rstrip("\n") + "\n")
        elif isinstance(event, ErrorEvent):
            print(f"shardwise: error: {event.message}", file=sys.stderr)
            status = 2 if event.kind == "input" else 1
        elif isinstance(event, DoneEvent):
            if not event.answer.endswith("\n"):
                sys.stdout.write("\n")
            if event.configs:
                print(f"\n(configs attached: {', '.join(event.configs)}; `--json` prints them)")
    if session and status == 0 and not args.session:
        print(f"(session {session}: continue with --session {session})", file=sys.stderr)
    return status


def run_chat(args: argparse.Namespace) -> int:
    service = build_service(args)
    session = args.session
    configs: dict[str, str] = {}
    filenames: dict[str, str] = {}
    mode = f"LLM {service.config.model}" if service.mode == "llm" else "offline planner"
    print(f"shardwise chat ({mode}). Ask about a model and a cluster; /help for commands, /quit to leave.")
    while True:
        try:
            line = input("\nyou> ")
        except EOFError:
            print()
            return 0
        text = line.strip()
        if not text:
            continue
        if text.startswith("/"):
            command, _, rest = text.partition(" ")
            if command in ("/quit", "/exit", "/q"):
                return 0
            if command == "/new":
                session, configs = None, {}
                print("new session")
            elif command == "/session":
                print(f"session {session or '(not started)'}, {mode}")
            elif command == "/configs":
                print(", ".join(configs) if configs else "no configs attached yet")
            elif command == "/config":
                print(configs.get(rest.strip(), f"no config {rest.strip()!r}; attached: {', '.join(configs) or 'none'}"))
            elif command == "/save":
                try:
                    print(save_configs(configs, rest.strip(), filenames))
                except ShardwiseInputError as exc:
                    print(f"error: {exc}")
            else:
                print(CHAT_HELP)
            continue
        session, new_configs, new_names = _chat_turn(service, text, session)
        if new_configs:
            configs, filenames = new_configs, new_names


def _chat_turn(service, text: str, session: str | None) -> tuple[str | None, dict, dict]:
    from ..agent.events import ConfigsEvent, DeltaEvent, DoneEvent, ErrorEvent, SessionEvent, ToolEvent

    configs: dict = {}
    filenames: dict = {}
    print()
    for event in service.stream(text, session):
        if isinstance(event, SessionEvent):
            session = event.session_id
        elif isinstance(event, ToolEvent):
            mark = "·" if event.ok else "!"
            print(f"  {mark} {event.summary}" if event.ok else f"  {mark} {event.name}: {'; '.join(event.errors)}")
        elif isinstance(event, DeltaEvent):
            sys.stdout.write(event.text)
            sys.stdout.flush()
        elif isinstance(event, ErrorEvent):
            print(f"error: {event.message}")
            if event.offline:  # the LLM failed; the offline planner's answer to the same question
                print(event.offline["answer"])
                configs = event.offline.get("configs") or {}
        elif isinstance(event, ConfigsEvent):
            filenames = event.filenames
        elif isinstance(event, DoneEvent):
            configs = event.configs
            if configs:
                print(f"\n[configs attached: {', '.join(configs)} — /config NAME to print, /save DIR to write]")
    return session, configs, filenames


def save_configs(configs: dict[str, str], directory: str, filenames: dict[str, str] | None = None) -> str:
    if not configs:
        return "no configs attached yet"
    if not directory:
        return "usage: /save DIR"
    target = Path(directory).expanduser()
    try:
        target.mkdir(parents=True, exist_ok=True)
        written = []
        for fmt, text in configs.items():
            name = (filenames or {}).get(fmt) or f"{fmt}.txt"
            (target / Path(name).name).write_text(text)
            written.append(Path(name).name)
    except OSError as exc:
        raise ShardwiseInputError(f"cannot write configs into {target}: {exc}") from None
    return f"wrote {', '.join(written)} into {target}"
