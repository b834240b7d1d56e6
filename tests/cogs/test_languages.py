"""The bot speaks its users' languages, through discord.py's real dispatch: `/privacy` and `/memory show` answer in the
caller's Discord language (zh-CN, ja) and in English for en-US; an engine refusal is translated by the tree's error
hook; notices in a server channel speak the server's language and in a DM the user's last known one; and the command
sync sends every command's localized names and descriptions, valid by Discord's rules in every language."""

from __future__ import annotations

import re
from typing import Any

import discord
import pytest
from discord import app_commands

from bot.i18n.catalogs import catalog
from bot.i18n.languages import ENGLISH, LANGUAGES
from bot.i18n.speech import speech_in, valid_command_name
from tests.cogs.conftest import MakeHarness, Scene, make_scene
from tests.cogs.test_access import dm, with_roles
from tests.helpers import (
    Harness,
    calls,
    dispatch,
    make_guild,
    make_interaction,
    make_member,
    make_role,
    run_slash,
    seed_memory,
)

ZH, JA, EN = discord.Locale.chinese, discord.Locale.japanese, discord.Locale.american_english
TRANSLATED = [language for language in LANGUAGES if language != ENGLISH]


def answer_text(interaction: Any) -> str:
    """Everything the interaction's last answer shows: its content and its embeds' titles, fields and text."""
    call = calls(interaction)[-1]
    embeds = call.kwargs.get("embeds") or ([call.kwargs["embed"]] if call.kwargs.get("embed") else [])
    parts = [call.content]
    for embed in embeds:
        parts += [embed.title or "", embed.description or "", embed.footer.text or ""]
        parts += [f"{field.name} {field.value}" for field in embed.fields]
    return "\n".join(parts)


async def slash(h: Harness, user: Any, locale: discord.Locale, path: str, **options: Any) -> str:
    interaction = make_interaction(user, locale=locale)
    await run_slash(h.bot, interaction, path, **options)
    assert calls(interaction), f"/{path} did not answer"
    return answer_text(interaction)


# --- answers in the caller's language -----------------------------------------------------------------------


async def test_privacy_answers_in_the_callers_language(scene: Scene) -> None:
    h = scene.h
    chinese = await slash(h, scene.alice_user, ZH, "privacy")
    japanese = await slash(h, scene.alice_user, JA, "privacy")
    english = await slash(h, scene.alice_user, EN, "privacy")
    assert "**它会保存你的哪些信息**" in chinese and "隐私：我会保存你的哪些信息" in chinese
    assert "`/记忆 查看`" in chinese and "What it stores" not in chinese
    assert "**あなたについて保存するもの**" in japanese and "`/メモリ 表示`" in japanese
    assert "**What it stores about you**" in english and "`/memory show`" in english
    assert "它会保存" not in english


async def test_memory_show_answers_in_the_callers_language(scene: Scene) -> None:
    h = scene.h
    assert "我还不记得关于你的任何事。" in await slash(h, scene.alice_user, ZH, "memory show")
    assert "まだあなたについて何も覚えていません。" in await slash(h, scene.alice_user, JA, "memory show")
    assert "I don't remember anything about you yet." in await slash(h, scene.alice_user, EN, "memory show")

    await seed_memory(h.memory, scene.alice_user.id, ["Grows tomatoes", "Lives in Lyon"], workContext="Writes Go")
    chinese = await slash(h, scene.alice_user, ZH, "memory show")
    japanese = await slash(h, scene.alice_user, JA, "memory show")
    english = await slash(h, scene.alice_user, EN, "memory show")
    assert "我记得的关于你的事" in chinese and "**事实**（2）" in chinese and "工作 · 私信" in chinese
    assert "あなたについて覚えていること" in japanese and "**事実**（2）" in japanese and "仕事 · DM" in japanese
    assert "What I remember about you" in english and "**Facts** (2)" in english and "Work · DMs" in english
    for text in (chinese, japanese, english):
        assert "Grows tomatoes" in text and "Writes Go" in text  # memory stays in the words the user used


async def test_an_engine_refusal_is_answered_in_the_callers_language(scene: Scene) -> None:
    text = await slash(scene.h, scene.alice_user, JA, "memory forget", minutes=5000)  # refused by the engine
    assert text == "分は 1 から 1,440 の間で指定してください。"
    refused = make_interaction(scene.alice_user, locale=JA)
    await run_slash(scene.h.bot, refused, "memory edit", fact="fact_missing", text="Lives in Rome")
    assert answer_text(refused) == "ID が `fact_missing` の事実はありません。"
    german = make_interaction(scene.alice_user, locale=discord.Locale.german)
    await run_slash(scene.h.bot, german, "memory remember", text="my password is hunter2hunter2")
    assert "Das kann ich nicht speichern" in answer_text(german) and "hunter2" not in answer_text(german)


async def test_buttons_speak_the_language_of_the_person_who_asked(scene: Scene) -> None:
    interaction = make_interaction(scene.alice_user, locale=discord.Locale.french)
    await run_slash(scene.h.bot, interaction, "memory forget")
    (call,) = calls(interaction)
    assert call.content == "Oublier tout ce que je sais de toi\u00a0? C’est irréversible."
    labels = [item.item.label for item in call.kwargs["view"].children]  # type: ignore[attr-defined]
    assert labels == ["Tout oublier", "Annuler"]


# --- notices: the server's language in a channel, the user's in a DM ----------------------------------------


async def test_a_notice_in_a_channel_speaks_the_servers_language(make_harness: MakeHarness) -> None:
    h = await make_harness()
    guild = make_guild(name="Club de lecture", locale=discord.Locale.french)
    general = h.discord.text_channel(guild)
    scene = make_scene(h)
    role = make_role("Habitués")
    await h.memory.community.set_allowed_roles(guild.id, frozenset({role.id}))
    member = with_roles(make_member(scene.bob_user, guild))  # none of the allowed roles
    await dispatch(h.bot, "message", h.discord.mention_bot(general, member, "je peux ?"))
    assert [sent.content for sent in h.discord.sent] == [
        f"Sur ce serveur, seuls les membres ayant ces rôles peuvent me parler\u00a0: <@&{role.id}>."
    ]


async def test_a_dm_notice_speaks_the_users_last_known_language(make_harness: MakeHarness) -> None:
    from bot.client.reply_policy import DMS_OFF

    h = await make_harness(dm_policy="off")
    s = make_scene(h)
    await dm(h, s.bob_user, "hello?")  # never used a command: English
    assert h.discord.sent[-1].content == DMS_OFF
    await slash(h, s.alice_user, JA, "memory show")  # Alice's Discord speaks Japanese
    await dm(h, s.alice_user, "こんにちは")
    assert h.discord.sent[-1].content == "ここでは DM には返信しません。代わりにサーバーで話しかけてください。"
    assert h.bot.locales.language(s.alice_user.id) == "ja"


async def test_forgetting_everything_forgets_the_language_too(scene: Scene) -> None:
    h = scene.h
    interaction = make_interaction(scene.alice_user, locale=ZH)
    await run_slash(h.bot, interaction, "memory forget")
    assert h.bot.locales.language(scene.alice_user.id) == "zh_CN"
    view = calls(interaction)[0].kwargs["view"]
    press = make_interaction(scene.alice_user, locale=ZH)
    press.client = h.bot
    await view.confirm.callback(press)
    assert calls(press)[-1].kwargs["content"] == "完成：我本来就没有保存任何内容。"
    assert h.bot.locales.language(scene.alice_user.id) == ENGLISH


# --- the commands in Discord's picker -----------------------------------------------------------------------


async def synced_payload(h: Harness) -> list[dict[str, Any]]:
    """What `CommandTree.sync` sends to Discord, captured at discord.py's HTTP client (the one thing replaced)."""
    sent: list[dict[str, Any]] = []

    async def bulk_upsert_global_commands(application_id: int, payload: list[dict[str, Any]]) -> list[Any]:
        sent.extend(payload)
        return []

    h.bot._connection.application_id = 4242
    h.bot.http.bulk_upsert_global_commands = bulk_upsert_global_commands  # type: ignore[method-assign]
    await h.bot.sync_commands()
    assert sent, "nothing was synced"
    return sent


def by_name(payload: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(item for item in payload if item["name"] == name)


async def test_the_sync_sends_localized_names_and_descriptions(make_harness: MakeHarness) -> None:
    h = await make_harness(sync_commands=True)
    payload = await synced_payload(h)
    memory = by_name(payload, "memory")
    assert memory["name_localizations"]["zh-CN"] == "记忆" and memory["name_localizations"]["ja"] == "メモリ"
    assert memory["description_localizations"]["de"] == "Sieh und steuere, was ich mir über dich merke"
    assert "en-US" not in memory["name_localizations"] and "zh-TW" not in memory["name_localizations"]
    show = by_name(memory["options"], "show")
    assert show["name_localizations"]["ko"] == "보기" and show["name"] == "show"  # the English name stays
    forget = by_name(memory["options"], "forget")
    fact = by_name(forget["options"], "fact")
    assert not fact.get("name_localizations")  # option names stay English everywhere: `fact:` is the contract
    assert fact["description_localizations"]["fr"] == "L’identifiant du fait à oublier"
    section = by_name(forget["options"], "section")
    work = next(choice for choice in section["choices"] if choice["value"] == "workContext")
    assert work["name"] == "workContext" and work["name_localizations"]["ja"] == "仕事"
    menu = next(item for item in payload if item["name"] == "What did you remember?")
    assert menu["name_localizations"]["es-ES"] == "¿Qué recordaste?"
    assert menu["name_localizations"]["es-419"] == "¿Qué recordaste?"
    assert by_name(payload, "privacy")["name_localizations"]["pt-BR"] == "privacidade"


def test_the_summary_choices_are_the_six_summaries() -> None:
    """Written out for the catalogs, the `section:` choices must stay the engine's six summaries, in order."""
    from bot.memory.models import SECTION_NAMES
    from cogs.memory.commands import SECTION_CHOICES

    assert [choice.value for choice in SECTION_CHOICES] == list(SECTION_NAMES)
    assert [choice.name for choice in SECTION_CHOICES] == list(SECTION_NAMES)  # the English names, as before


def _names(payload: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(where, siblings) for every list of commands and subcommands the payload holds."""
    found = [("top", [item for item in payload if item.get("type", 1) == 1])]
    for item in payload:
        children = [option for option in item.get("options", []) if option.get("type") in (1, 2)]
        if children:
            found.append((item["name"], children))
    return found


async def test_every_localized_name_follows_discords_rules_and_siblings_stay_distinct(
    make_harness: MakeHarness,
) -> None:
    payload = await synced_payload(await make_harness(sync_commands=True))
    for where, siblings in _names(payload):
        for locale in {locale for item in siblings for locale in item["name_localizations"]}:
            names = [item["name_localizations"].get(locale, item["name"]) for item in siblings]
            assert len(set(names)) == len(names), (where, locale, names)
            assert all(valid_command_name(name) for name in names), (where, locale, names)
    texts = [text for item in payload for text in _descriptions(item)]
    assert texts and all(0 < len(text) <= 100 for text in texts)


def _descriptions(item: dict[str, Any]) -> list[str]:
    found = list(item.get("description_localizations", {}).values())
    for option in item.get("options", []):
        found += _descriptions(option)
        for choice in option.get("choices", []):
            found += list(choice.get("name_localizations", {}).values())
    return found


def command_words(tree: app_commands.CommandTree[Any]) -> tuple[set[str], set[str]]:
    """Every slash command's name (the words of its paths) and every full path (`memory forget`)."""
    words: set[str] = set()
    paths: set[str] = set()
    for command in tree.walk_commands():
        if isinstance(command, app_commands.Command | app_commands.Group):
            words.add(command.name)
            paths.add(command.qualified_name)
    return words, paths


@pytest.mark.parametrize("language", TRANSLATED)
async def test_every_command_name_is_translated_to_a_valid_name(harness: Harness, language: str) -> None:
    """A name whose translation Discord would refuse would silently stay English: the catalogs must not do that."""
    words, _ = command_words(harness.bot.tree)
    speech = speech_in(language)
    refused = {word: speech.tr(word) for word in words if not valid_command_name(speech.tr(word))}
    assert refused == {}


def picker_texts(tree: app_commands.CommandTree[Any]) -> set[str]:
    """Every description, option description and choice name the picker shows (what Discord limits to 100)."""
    found: set[str] = set()
    for command in tree.walk_commands():
        found.add(command.description)
        for parameter in getattr(command, "parameters", []):
            found.add(parameter.description)
            found.update(choice.name for choice in parameter.choices)
    return {text for text in found if text and text != "…"}


@pytest.mark.parametrize("language", TRANSLATED)
async def test_every_text_of_the_picker_fits_discords_limit_in_every_language(harness: Harness, language: str) -> None:
    """A description over 100 characters would silently stay English (the translator gives Discord none)."""
    speech = speech_in(language)
    texts = picker_texts(harness.bot.tree)
    assert len(texts) > 40
    too_long = {text: speech.tr(text) for text in texts if len(speech.tr(text)) > 100}
    assert too_long == {}


@pytest.mark.parametrize("language", TRANSLATED)
async def test_commands_named_in_a_translation_are_named_as_that_languages_discord_shows_them(
    harness: Harness, language: str
) -> None:
    """A message naming `/memory forget` says it, in each language, as the command picker there shows it."""
    from tests.test_i18n import TEMPLATE, messages

    _, paths = command_words(harness.bot.tree)
    speech = speech_in(language)
    pattern = re.compile(r"/(" + "|".join(sorted((re.escape(p) for p in paths), key=len, reverse=True)) + r")\b")
    wrong = []
    for key in messages(TEMPLATE):
        for english in [key] if isinstance(key, str) else key:
            named = pattern.findall(english)
            if not named:
                continue
            said = catalog(language).gettext(english) if isinstance(key, str) else catalog(language).ngettext(
                key[0], key[1], 2
            )
            for path in set(named):
                if said.count(speech.command(path)) < named.count(path):
                    wrong.append((english[:60], speech.command(path)))
    assert wrong == []
