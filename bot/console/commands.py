"""The console's own commands: `/memory` of Discord, typed in the terminal, plus `/flush`, `/help` and `/quit`.

Every line that starts with `/` is a command and never reaches the model (an unknown one gets the list, so a typo
or `/forget fact_…` is never learned as chat); `//` sends a line that starts with `/` to the model. Options are
written as on Discord (`/forget fact:fact_1a2b3c4d`, `/remember text:... everywhere:true`) or plainly (`/forget
fact_1a2b3c4d`, `/remember I like tea`); `/memory show` works as well as `/show`. Forgetting everything asks for a
confirmation, as Discord's button does. Only the engine's doors are called: the user's own (`memory.user(id)`),
`recall` for what a reply used and `ops` for `/flush`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.console.importing import run_import
from bot.memory.doors import (
    PAUSE,
    FlushReport,
    ForgetEverything,
    ForgetFact,
    ForgetMinutes,
    ForgetSection,
    Fresh,
    Incognito,
    Resume,
)
from bot.memory.errors import InvalidRequest
from bot.memory.models import SECTION_NAMES, MemoryFile, Place
from bot.memory.pipeline.render import SECTION_LABELS, memory_as_text
from bot.memory.service import MemoryService

FLUSH_WAIT_SECONDS = 20.0
EXPORTS_FOLDER = "exports"  # under DATA_DIR: never the working directory, which may be a git checkout
CONFIRM_WORDS = frozenset({"yes", "y"})
_TRUE = frozenset({"true", "yes", "y", "1", "on"})
_FALSE = frozenset({"false", "no", "n", "0", "off"})

Ask = Callable[[str], Awaitable[str | None]]
"""Reads one line after showing a prompt; None at the end of input."""
Say = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Usage:
    form: str
    meaning: str
    options: tuple[str, ...] = ()  # the `name:` options it takes; elsewhere `name:` is plain text


COMMANDS: dict[str, Usage] = {
    "/show": Usage("/show [search:<text>]", "what I remember about you, each fact with its id", ("search",)),
    "/remember": Usage(
        "/remember <text> [everywhere:true]", "add a fact in your own words", ("text", "everywhere")
    ),
    "/edit": Usage("/edit fact:<id> text:<text>", "correct one fact (same id, your words)", ("fact", "text")),
    "/forget": Usage(
        "/forget fact:<id> | section:<name> | minutes:<n>",
        "forget one fact, clear one summary, or the last n minutes; /forget alone forgets everything (asks first)",
        ("fact", "section", "minutes"),
    ),
    "/share": Usage("/share fact:<id>", "let one fact be used everywhere", ("fact",)),
    "/unshare": Usage("/unshare fact:<id>", "use a fact again only where it was learned", ("fact",)),
    "/export": Usage(
        "/export [file]", "save your memory as JSON, readable by you only (in DATA_DIR/exports unless you name a file)",
        ("file",),
    ),
    "/import": Usage("/import FILE", "add memories from a file: your export, or one memory per line", ("file",)),
    "/incognito": Usage(
        "/incognito [minutes:<n>]", "learn nothing from you for n minutes (60; 0 = until /resume)", ("minutes",)
    ),
    "/fresh": Usage(
        "/fresh [minutes:<n>]", "replies use none of your memory for n minutes (60; 0 = until /resume)", ("minutes",)
    ),
    "/pause": Usage("/pause", "learn nothing until /resume"),
    "/resume": Usage("/resume", "end pause, incognito and fresh"),
    "/recalled": Usage("/recalled", "what my last reply used from your memory"),
    "/flush": Usage("/flush", "learn from the conversation now instead of after the quiet time, and say what changed"),
    "/help": Usage("/help", "this list"),
    "/quit": Usage("/quit", "save what is pending and leave (Ctrl-D does the same)"),
}
HELP = "Commands: " + "  ".join(COMMANDS) + "   (/help explains them)"


def help_text() -> str:
    width = max(len(usage.form) for usage in COMMANDS.values())
    lines = [f"  {usage.form:<{width}}  {usage.meaning}" for usage in COMMANDS.values()]
    lines.append("  Every line starting with / is a command; start a message with // to send it with one /.")
    lines.append(f"  Summaries: {', '.join(SECTION_NAMES)}.")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Command:
    """A parsed line: `name` with its leading slash, the text before any option, and the `name:value` options."""

    name: str
    rest: str = ""
    options: dict[str, str] = field(default_factory=dict)


def parse_command(line: str) -> Command | None:
    """The command a line holds, or None when the line is chat (no leading `/`, or `//`)."""
    text = line.strip()
    if not text.startswith("/") or text.startswith("//"):
        return None
    head, _, tail = text.partition(" ")
    name = head.lower()
    if name == "/memory" and tail.strip():  # as typed on Discord: /memory forget fact:...
        head, _, tail = tail.strip().partition(" ")
        name = "/" + head.lower().lstrip("/")
    known = COMMANDS[name].options if name in COMMANDS else ()
    if not known:
        return Command(name, tail.strip())
    pieces = re.split(rf"(?:^|\s)({'|'.join(known)}):", tail, flags=re.IGNORECASE)
    options = {pieces[i].lower(): pieces[i + 1].strip() for i in range(1, len(pieces) - 1, 2)}
    return Command(name, pieces[0].strip(), options)


class CommandError(Exception):
    """A command that cannot run as typed; the message is the one line to show."""


@dataclass(frozen=True, slots=True)
class MemoryState:
    """What a user's memory holds, as plain values: fact id to text, and (place, summary name) to text."""

    facts: dict[str, str]
    summaries: dict[tuple[str, str], str]

    @classmethod
    def of(cls, memory: MemoryFile) -> MemoryState:
        summaries = {
            (place, name): section.summary
            for place in memory.summary_places()
            for name, section in memory.sections_of(place)
            if section.summary
        }
        return cls({fact.id: fact.content for fact in memory.facts}, summaries)


def flush_summary(report: FlushReport, before: MemoryState, after: MemoryState, *, endpoint: str) -> str:
    """What a flush did, from the user's memory before and after it (what `/show` will show), not from the
    engine's counters: "(+1 fact, 1 summary updated)", "(nothing pending)", "(failed: ...)", then one line per new
    fact. Facts the memory guard held back are counted, so a proposal that was not kept is never silently missing."""
    if report.nothing_pending:
        return "(nothing pending)"
    added = [fact_id for fact_id in after.facts if fact_id not in before.facts]
    removed = [fact_id for fact_id in before.facts if fact_id not in after.facts]
    changed = [key for key, text in after.summaries.items() if before.summaries.get(key) != text]
    cleared = [key for key in before.summaries if key not in after.summaries]
    parts = []
    if report.batches_saved:
        parts.append(f"+{len(added)} fact{'' if len(added) == 1 else 's'}")
        if removed:
            parts.append(f"-{len(removed)} removed")
        if changed or cleared:
            count = len(changed) + len(cleared)
            parts.append(f"{count} summar{'y' if count == 1 else 'ies'} updated")
        if report.facts_held_back:
            parts.append(f"{report.facts_held_back} held back by the memory guard (the log says why)")
    if report.batches_failed:
        parts.append("failed: " + "; ".join(report.problems or ("unknown error",)) + f" (endpoint {endpoint})")
    if not report.finished:
        why = f" ({report.problems[-1]})" if report.problems else ""
        parts.append(
            f"still trying {endpoint} after {FLUSH_WAIT_SECONDS:.0f}s{why}; it goes on in the background and what "
            "is pending stays journaled"
        )
    elif report.batches_failed:
        parts.append("the turns stay journaled for the next start")
    lines = ["(" + "; ".join(parts or ["nothing learned"]) + ")"]
    lines += [f"  + {fact_id}  {after.facts[fact_id]}" for fact_id in added]
    return "\n".join(lines)


def _flag(value: str, option: str) -> bool:
    word = value.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise CommandError(f"{option}: must be true or false")


def _number(value: str, option: str) -> int:
    if not value.strip().isdecimal():
        raise CommandError(f"{option}: must be a whole number of minutes")
    return int(value)


class ConsoleCommands:
    """Runs the commands of one console user; `last_reply_id` is set by the chat loop after each reply."""

    def __init__(
        self, memory: MemoryService, *, user_id: int, place: Place, endpoint: str, ask: Ask, say: Say,
        exports: Path = Path("data") / EXPORTS_FOLDER,
    ) -> None:
        self.exports = exports  # where /export writes when no file is named
        self.memory = memory
        self.mine = memory.user(user_id)
        self.user_id = user_id
        self.place = place
        self.endpoint = endpoint
        self.ask = ask
        self.say = say
        self.last_reply_id: int | None = None
        self._handlers: dict[str, Callable[[Command], Awaitable[None]]] = {
            "/show": self.show, "/remember": self.remember, "/edit": self.edit, "/forget": self.forget,
            "/share": self.share, "/unshare": self.unshare, "/export": self.export, "/incognito": self.incognito,
            "/fresh": self.fresh, "/pause": self.pause, "/resume": self.resume, "/recalled": self.recalled,
            "/flush": self.flush, "/help": self.help, "/import": self.import_file,
        }  # fmt: skip

    async def run(self, command: Command) -> bool:
        """Carry out one command; False for `/quit`. Bad input gets one line, never an exception."""
        if command.name == "/quit":
            return False
        handler = self._handlers.get(command.name)
        if handler is None:
            self.say(f"(unknown command {command.name}; nothing was sent to the model)\n{help_text()}")
            return True
        try:
            await handler(command)
        except (CommandError, InvalidRequest) as error:
            usage = COMMANDS[command.name].form
            self.say(f"({error}; usage: {usage})")
        return True

    # --- seeing ---------------------------------------------------------------------------------------------

    async def help(self, command: Command) -> None:
        self.say(help_text())

    async def show(self, command: Command) -> None:
        memory = await self.mine.show()
        needle = (command.options.get("search") or command.rest).casefold()
        paused = " (learning is paused: /resume turns it back on)" if self.mine.privacy.incognito else ""
        if memory.is_empty():
            self.say(f"(I do not remember anything yet){paused}")
            return
        if needle:
            memory = memory.model_copy(
                update={"facts": [fact for fact in memory.facts if needle in fact.content.casefold()]}
            )
        self.say(memory_as_text(memory) + (f"\n{paused.strip()}" if paused else ""))

    async def recalled(self, command: Command) -> None:
        record = await self.memory.recall.reply_record(self.last_reply_id) if self.last_reply_id is not None else None
        if record is None:
            self.say("(no reply yet in this session)")
            return
        items = await self.mine.recalled(record)
        if not items:
            self.say("(my last reply used nothing I remember about you)")
            return
        lines = ["My last reply used:"]
        for item in items:
            label = SECTION_LABELS.get(item.key, item.key) if item.kind == "section" else item.key
            lines.append(f"  {label}: {item.text if item.text is not None else '(since forgotten)'}")
        self.say("\n".join(lines))

    # --- adding and correcting ------------------------------------------------------------------------------

    async def remember(self, command: Command) -> None:
        text = command.options.get("text") or command.rest
        everywhere = _flag(command.options["everywhere"], "everywhere") if "everywhere" in command.options else False
        fact = await self.mine.add(text, place=self.place, everywhere=everywhere)
        self.say(f"(remembered as {fact.id}{', used everywhere' if fact.shared else ''}: {fact.content})")

    async def edit(self, command: Command) -> None:
        fact_id, text = self._fact_id(command), command.options.get("text", "")
        if not text and "fact" not in command.options:  # plain form: /edit <id> <text>
            text = command.rest.partition(" ")[2]
        fact = await self.mine.edit(fact_id, text)
        self.say(f"(corrected {fact.id}: {fact.content})")

    async def share(self, command: Command) -> None:
        fact_id = self._fact_id(command)
        changed = await self.mine.share(fact_id, True)
        self.say(self._shared_line(fact_id, changed, "shared: I can now use it everywhere", "was already shared"))

    async def unshare(self, command: Command) -> None:
        fact_id = self._fact_id(command)
        changed = await self.mine.share(fact_id, False)
        self.say(self._shared_line(fact_id, changed, "unshared: used again only where I learned it", "was not shared"))

    @staticmethod
    def _shared_line(fact_id: str, changed: bool | None, done: str, already: str) -> str:
        if changed is None:
            return f"(you have no fact with the id {fact_id})"
        return f"({fact_id} {done})" if changed else f"({fact_id} {already})"

    @staticmethod
    def _fact_id(command: Command) -> str:
        fact_id = (command.options.get("fact") or command.rest).split(" ", 1)[0].strip()
        if not fact_id:
            raise CommandError("which fact? give its id (/show lists them)")
        return fact_id

    # --- forgetting -----------------------------------------------------------------------------------------

    async def forget(self, command: Command) -> None:
        chosen = {name: value for name, value in command.options.items() if name in ("fact", "section", "minutes")}
        if command.rest:  # plain form: /forget fact_1a2b3c4d, /forget topOfMind, /forget 30
            word = command.rest.split(" ", 1)[0]
            kind = "minutes" if word.isdecimal() else "section" if word in SECTION_NAMES else "fact"
            chosen.setdefault(kind, word)
        if len(chosen) > 1:
            raise CommandError("pick one of fact, section or minutes (or none to forget everything)")
        if not chosen:
            await self._forget_everything()
            return
        (kind, value), = chosen.items()
        if kind == "fact":
            removed = await self.mine.forget(ForgetFact(value))
            self.say(f"(forgotten: {value})" if removed.facts else f"(you have no fact with the id {value})")
        elif kind == "section":
            if value not in SECTION_NAMES:
                raise CommandError(f"there is no summary called {value}; they are {', '.join(SECTION_NAMES)}")
            cleared = await self.mine.forget(ForgetSection(value))
            label = SECTION_LABELS.get(value, value)
            done = f"(cleared the {label} summary)"
            self.say(done if cleared.sections else f"(the {label} summary was already empty)")
        else:
            minutes = _number(value, "minutes")
            report = await self.mine.forget(ForgetMinutes(minutes))
            if not (report.facts or report.sections or report.turns):
                self.say(f"(I learned nothing from you in the last {minutes} minutes: nothing to forget)")
            else:
                self.say(
                    f"(forgot the last {minutes} minutes: {report.facts} facts removed, {report.sections} summaries "
                    f"put back as they were, {report.turns} messages not yet learned from dropped)"
                )

    async def _forget_everything(self) -> None:
        answer = await self.ask("Forget everything I remember about you? This cannot be undone. Type yes to confirm: ")
        if answer is None or answer.strip().lower() not in CONFIRM_WORDS:
            self.say("(cancelled: your memory is unchanged)")
            return
        forgotten = await self.mine.forget(ForgetEverything())
        done = "(done: I have forgotten everything I knew about you)"
        self.say(done if forgotten.any_memory else "(done: I had nothing stored)")

    # --- export ---------------------------------------------------------------------------------------------

    def _export_path(self, command: Command) -> Path:
        """The file named, or a new one in the exports folder (private to the bot's user), named by the time."""
        named = command.options.get("file") or command.rest
        if named:
            return Path(named).expanduser()
        try:
            self.exports.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as error:
            raise CommandError(f"cannot create {self.exports}: {error.strerror or type(error).__name__}") from None
        return self.exports / f"memory-{self.user_id}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"

    async def export(self, command: Command) -> None:
        path = self._export_path(command)
        data = await self.mine.export()
        try:  # a new file, readable by its owner only: it holds everything the bot knows about them
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise CommandError(f"{path} already exists; give another file name") from None
        except OSError as error:
            raise CommandError(f"cannot write {path}: {error.strerror or type(error).__name__}") from None
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        self.say(f"(your memory is in {path.resolve()}, {len(data):,} bytes, readable by you only)")

    async def import_file(self, command: Command) -> None:
        named = command.options.get("file") or command.rest
        if not named:
            raise CommandError("name the file to import")
        await run_import(self.mine, Path(named).expanduser(), ask=self.ask, say=self.say)

    # --- privacy modes --------------------------------------------------------------------------------------

    async def incognito(self, command: Command) -> None:
        minutes = self._minutes(command)
        await self.mine.set_mode(Incognito(minutes))
        self.say(f"(incognito: I learn nothing from you {self._until(minutes)}; what was waiting is dropped)")

    async def fresh(self, command: Command) -> None:
        minutes = self._minutes(command)
        await self.mine.set_mode(Fresh(minutes))
        self.say(f"(fresh: my replies use none of your memory {self._until(minutes)}; nothing is deleted)")

    async def pause(self, command: Command) -> None:
        changed = not (await self.mine.set_mode(PAUSE)).before.paused
        self.say("(paused: I learn nothing new until /resume)" if changed else "(learning was already paused)")

    async def resume(self, command: Command) -> None:
        changed = (await self.mine.set_mode(Resume())).before.anything_on
        self.say(
            "(resumed: I learn from you again and my replies use what I remember)"
            if changed else "(nothing to resume: learning was on and replies already use your memory)"
        )

    @staticmethod
    def _minutes(command: Command) -> int:
        value = command.options.get("minutes") or command.rest
        return _number(value, "minutes") if value else 60

    @staticmethod
    def _until(minutes: int) -> str:
        if minutes == 0:
            return "until /resume"
        end = datetime.now(UTC) + timedelta(minutes=minutes)
        return f"for {minutes} minutes (until {end.astimezone():%H:%M})"

    # --- learning now ---------------------------------------------------------------------------------------

    async def flush(self, command: Command) -> None:
        self.say(f"(learning from what is pending; up to {FLUSH_WAIT_SECONDS:.0f}s…)")
        before = MemoryState.of(await self.mine.show())
        report = await self.memory.ops.flush(FLUSH_WAIT_SECONDS)
        after = MemoryState.of(await self.mine.show())
        self.say(flush_summary(report, before, after, endpoint=self.endpoint))
