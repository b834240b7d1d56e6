"""No words the bot says to its users bypass the catalogs.

A static check (AST, nothing imported) of the modules whose words users read: every cog, and the notices, answers
and errors of `bot/client/` and `bot/chat/`. Two rules:
- a literal handed straight to Discord (a message's content, an embed's title or description, a button's label, a
  command's name or description, an option's description, a choice's name) must be marked: `tr(...)`, `trn(...)`,
  `N_(...)` or `locale_str(...)`;
- any other literal that reads as prose (two words or more) must be marked too, unless it is not for users: a
  docstring, a log line, an exception's text for the log, or one of the few words written for the model (listed
  below, each with why).
"""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
USER_FACING = sorted(
    [
        *(ROOT / "cogs").rglob("*.py"),
        *(ROOT / "bot" / "client" / name for name in (
            "interactions.py", "notices.py", "reply_policy.py", "privacy_statement.py", "locations.py",
        )),
        *(ROOT / "bot" / "chat" / name for name in ("attachments.py", "ratelimit.py", "streaming.py")),
    ]
)
MARKS = frozenset({"tr", "trn", "N_", "Np_", "locale_str", "Phrase", "InvalidRequest"})
LOGGING = frozenset({"debug", "info", "warning", "error", "exception", "critical", "log"})
# Where Discord shows a literal as it is: keyword arguments, and the positional text of the send methods.
SHOWN_KEYWORDS = frozenset({"content", "title", "description", "label", "placeholder", "name", "text"})
SHOWN_CALLS = frozenset({"send_message", "send", "edit_message", "edit_original_response", "reply", "post"})
DISCORD_ITEMS = frozenset({"Button", "Embed", "Choice", "Group", "ContextMenu", "command", "set_footer",
                           "add_field", "TextInput", "Select", "SelectOption"})
PROSE = re.compile(r"[^\W\d_]{2,}[,;:!?]?\s+[^\W\d_]{2,}")  # two words apart: "memory:page" or "a.md" are not
WORDS = re.compile(r"[^\W\d_]")
# Words not said to users, each with why (module, the start of the literal).
NOT_FOR_USERS = {
    ("cogs/chat.py", "This is a server channel"): "the model's instructions (English, as the system prompt)",
    ("cogs/deletes.py", " deleted messages in channel "): "what the log says could not be honoured",
    ("cogs/deletes.py", "the edit of message "): "what the log says could not be honoured",
    ("bot/chat/attachments.py", "<attachment name="): "how the model reads an attached file",
    ("cogs/chat.py", "This channel is age-restricted"): "the model's instructions",
    ("cogs/chat.py", "This conversation is not in an age-restricted"): "the model's instructions",
    ("cogs/chat.py", "(sent an attachment)"): "what the model reads for a message with no words",
    ("cogs/chat.py", "(mentioned you without saying anything)"): "what the model reads for a bare mention",
    ("cogs/chat.py", "reply chains"): "the name of a cache in the process's inventory (logs)",
    ("cogs/chat.py", "history starts"): "the name of a cache in the process's inventory (logs)",
    ("cogs/usage.py", "token usage saver"): "an asyncio task's name",
    ("cogs/privacy.py", "What did you remember?"): "a message menu's name: MENU_HELP's key (its label is translated)",
    ("bot/client/interactions.py", "a slash command"): "the log's name for a command it cannot name",
    ("bot/chat/attachments.py", "(attached images you cannot see"): "what the model reads",
    ("bot/chat/attachments.py", "(attachments not read"): "what the model reads",
    ("bot/chat/streaming.py", "reply-stream"): "an asyncio task's name",
}


def _callee(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _strings(node: ast.AST) -> list[str]:
    """The literal text of a string constant, or the literal parts of an f-string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [part.value for part in node.values if isinstance(part, ast.Constant) and isinstance(part.value, str)]
    return []


def _skipped_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes whose strings are not the users': docstrings, marked calls, log lines, exception texts."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and _strings(body[0].value):
            skipped.add(id(body[0].value))  # a docstring
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            skipped.add(id(node.value))  # an attribute's docstring
        inside = (
            isinstance(node, ast.Call) and (_callee(node) in MARKS or _callee(node) in LOGGING)
        ) or isinstance(node, ast.Raise)
        if inside:
            skipped.update(id(child) for child in ast.walk(node))
    return skipped


def _shown_literals(tree: ast.AST) -> list[ast.AST]:
    """Literals handed straight to Discord (see the module docstring)."""
    found: list[ast.AST] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        callee = _callee(node)
        if callee in SHOWN_CALLS:
            found += [arg for arg in node.args[:1] if _strings(arg)]
        if callee in SHOWN_CALLS or callee in DISCORD_ITEMS or callee == "describe":
            found += [
                keyword.value for keyword in node.keywords
                if (callee == "describe" or keyword.arg in SHOWN_KEYWORDS) and _strings(keyword.value)
            ]
    return found


def unmarked(source: str, where: str) -> list[str]:
    tree = ast.parse(source)
    skipped = _skipped_nodes(tree)
    found = [f"{where}:{node.lineno} shown unmarked: {_strings(node)[0]!r}"  # type: ignore[attr-defined]
             for node in _shown_literals(tree)
             if id(node) not in skipped and any(WORDS.search(text) for text in _strings(node))]
    for node in ast.walk(tree):
        if id(node) in skipped or not _strings(node):
            continue
        for text in _strings(node):
            allowed = any(where == module and text.startswith(start) for module, start in NOT_FOR_USERS)
            if PROSE.search(text) and not allowed:
                found.append(f"{where}:{node.lineno} prose unmarked: {text[:60]!r}")  # type: ignore[attr-defined]
    return sorted(set(found))


@pytest.mark.parametrize("path", USER_FACING, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_word_for_users_goes_through_the_catalogs(path: Path) -> None:
    assert unmarked(path.read_text("utf-8"), str(path.relative_to(ROOT))) == []


def mark_misuses(source: str, where: str) -> list[str]:
    """Marks whose message `pybabel extract` cannot read as one message: a choice between two literals, an
    f-string (placeholders are filled after translation, never before), a mark inside an f-string, or a literal key
    (`tr(ACTIONS["all"])`, which Babel before 2.13 extracts as a message of its own)."""
    found = []
    tree = ast.parse(source)
    for formatted in (node for node in ast.walk(tree) if isinstance(node, ast.JoinedStr)):
        for call in (node for node in ast.walk(formatted) if isinstance(node, ast.Call) and _callee(node) in MARKS):
            if call.args and _strings(call.args[0]):
                found.append(f"{where}:{call.lineno} {_callee(call)}(...) inside an f-string, unseen by the extraction")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _callee(node) in MARKS and node.args:
            first = node.args[0]
            if isinstance(first, ast.IfExp | ast.JoinedStr | ast.BinOp | ast.BoolOp):
                found.append(f"{where}:{node.lineno} {_callee(node)}({ast.unparse(first)[:60]})")
            elif isinstance(first, ast.Subscript) and _strings(first.slice):  # older Babel reads `X["key"]` as one
                found.append(f"{where}:{node.lineno} {_callee(node)}({ast.unparse(first)[:60]}): name the constant")
    return found


@pytest.mark.parametrize(
    "path", [*USER_FACING, *sorted((ROOT / "bot").rglob("*.py"))], ids=lambda path: str(path.relative_to(ROOT))
)
def test_every_marked_message_is_one_literal(path: Path) -> None:
    assert mark_misuses(path.read_text("utf-8"), str(path.relative_to(ROOT))) == []


def test_the_mark_check_catches_a_choice_inside_a_mark() -> None:
    source = 'def f(s, yes):\n    return s.tr("Shared." if yes else "Already shared.")\n'
    assert mark_misuses(source, "cogs/probe.py") != []
    assert mark_misuses('def f(s, n):\n    return s.tr(f"{n} facts")\n', "cogs/probe.py") != []
    assert mark_misuses('def f(s):\n    return f"## {s.tr(\'History\')}"\n', "cogs/probe.py") != []
    assert mark_misuses('def f(s):\n    return s.tr(ACTIONS["all"])\n', "cogs/probe.py") != []


FILLED = frozenset({"tr", "trn", "Phrase", "InvalidRequest"})


def placeholder_misfits(source: str, where: str) -> list[str]:
    """Calls that say a literal message with other values than its placeholders: a missing value would fail at the
    moment the bot speaks, an extra one is a typo. `trn` fills `{count}` itself."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and _callee(node) in FILLED and node.args):
            continue
        if any(keyword.arg is None for keyword in node.keywords):
            continue  # **values: checked where they are built
        texts = [text for arg in node.args[: 2 if _callee(node) == "trn" else 1] for text in _strings(arg)]
        if not texts or any(isinstance(arg, ast.JoinedStr) for arg in node.args[:2]):
            continue
        wanted = set().union(*(_placeholders(text) for text in texts))
        given = {keyword.arg for keyword in node.keywords if keyword.arg}
        if _callee(node) == "trn":
            wanted.discard("count")
            given.discard("count")
        if wanted != given:
            found.append(f"{where}:{node.lineno} {texts[0][:50]!r} wants {sorted(wanted)}, given {sorted(given)}")
    return found


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


@pytest.mark.parametrize(
    "path", [*USER_FACING, *sorted((ROOT / "bot").rglob("*.py"))], ids=lambda path: str(path.relative_to(ROOT))
)
def test_every_message_is_given_exactly_its_placeholders(path: Path) -> None:
    assert placeholder_misfits(path.read_text("utf-8"), str(path.relative_to(ROOT))) == []


def test_the_placeholder_check_catches_a_missing_or_misspelt_value() -> None:
    assert placeholder_misfits('def f(s, n):\n    return s.tr("Forgot {n} facts.", count=n)\n', "x.py") != []
    assert placeholder_misfits('def f(s):\n    return s.tr("Forgot {n} facts.")\n', "x.py") != []
    assert placeholder_misfits('def f(s, n):\n    return s.trn("a {x}", "{count} {x}", n, x=1)\n', "x.py") == []


def test_the_exceptions_are_still_in_the_code() -> None:
    """An entry of NOT_FOR_USERS that no longer matches anything is stale: it would hide a new literal."""
    texts: dict[str, list[str]] = {}
    for path in USER_FACING:
        tree = ast.parse(path.read_text("utf-8"))
        texts[str(path.relative_to(ROOT))] = [text for node in ast.walk(tree) for text in _strings(node)]
    stale = [
        (module, start) for module, start in NOT_FOR_USERS
        if not any(text.startswith(start) for text in texts.get(module, []))
    ]
    assert stale == []


@pytest.mark.parametrize(
    "source",
    [
        'async def f(i):\n    await i.response.send_message("Done: all gone.", ephemeral=True)\n',
        'async def f(i):\n    await i.followup.send(f"Forgot {n} facts.")\n',
        'import discord\nB = discord.ui.Button(label="Cancel")\n',
        'import discord\nE = discord.Embed(title="Your memory")\n',
        'from discord import app_commands\n@app_commands.describe(fact="Which")\nasync def f(i, fact): ...\n',
        'TEXT = "You have no fact with that id."\n',
        'def f(n):\n    return f"Forgot the last {n} minutes."\n',
    ],
)
def test_the_check_catches_words_that_bypass_the_catalogs(source: str) -> None:
    assert unmarked(source, "cogs/probe.py") != []


@pytest.mark.parametrize(
    "source",
    [
        'async def f(i, speech):\n    await i.response.send_message(speech.tr("Done: all gone."), ephemeral=True)\n',
        'from bot.i18n.speech import N_\nTEXT = N_("You have no fact with that id.")\n',
        'import logging\nlog = logging.getLogger()\nlog.info("synced %d commands globally", 3)\n',
        'def f():\n    """Say what this does, in a docstring."""\n',
        'def f():\n    raise RuntimeError("the memory commands are not loaded")\n',
        'C = f"memory:page:{1}:{2}"\n',
    ],
)
def test_the_check_lets_marked_words_and_the_log_through(source: str) -> None:
    assert unmarked(source, "cogs/probe.py") == []
