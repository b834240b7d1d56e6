"""Credentials in the wordings extraction models and people use, and given over several messages of one batch:
found with the span of the secret itself, while talk about passwords and technical numbers stays. Error rates on
labelled corpora: `bench/gate_corpora.py`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.memory.rules.credential_batch import batch_findings, held_back, journaled, redact_batch
from bot.memory.rules.credentials import find_credentials, redact

HELDOUT = Path(__file__).resolve().parents[2] / "bench" / "corpora" / "gates"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Their Wi-Fi password is now sunflower42", "sunflower42"),
        ("password is: Tr0ub4dor&3", "Tr0ub4dor&3"),
        ("The router password is still Gravel-Moon-88", "Gravel-Moon-88"),
        ("Router admin password — velvetcactus19", "velvetcactus19"),
        ("The master password is correct horse battery staple", "correct horse battery staple"),
        ("Their passphrase is the quiet otter sings at noon", "the quiet otter sings at noon"),
        ("Her ATM PIN is still 7714, she never changed it", "7714"),
        ("The CVV on the back of the card is 706", "706"),
        ("Changed the bank app PIN to 739104", "739104"),
        ("Logged in with Hx7$mQ2#rTv9 on the second try", "Hx7$mQ2#rTv9"),
        ("The lockbox by the front door opens with 3-8-1-6", "3-8-1-6"),
        ("Das WLAN-Passwort ist jetzt Kuckuck2021", "Kuckuck2021"),
        ("家里的WiFi密码改成了hongshao_rou520", "hongshao_rou520"),
        ("Redis is at redis://:redisPass_5f2a9c@cache.lan:6379/0", "redisPass_5f2a9c"),
    ],
)
def test_the_wordings_of_an_extraction_model_are_caught(text: str, secret: str) -> None:
    spans = [text[f.start : f.end] for f in find_credentials(text)]
    assert secret in spans
    assert secret not in redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "Their password is the same as their email one",
        "Password: they always forget it, they said",
        "Their password is too weak and needs changing",
        "Ich benutze einen Passwort-Manager",
        "またパスワードを忘れた",
        "Renamed the home wifi to \"FBI Surveillance Van 3\"",
        "Gets their 2FA codes from Authy",
        "Their backup codes are printed and kept in a drawer",
        "Lives near zip code 94110",
        "The connection string format is postgres://USER:<PASSWORD>@HOST:5432/DB",
    ],
)
def test_talk_about_passwords_is_kept(text: str) -> None:
    assert find_credentials(text) == []


@pytest.mark.parametrize(
    ("messages", "secret"),
    [
        (["I changed my wifi password again", "it's now sunflower42 lol"], "sunflower42"),
        (["new netflix password btw", "Hazelnut-Fox-3"], "Hazelnut-Fox-3"),
        (["alarm code at the shop", "is still", "8042"], "8042"),
        (["my bank just sent me a code", "771045 what do I do with it"], "771045"),
        (["the master password for the vault", "paper crane midnight ferry"], "paper crane midnight ferry"),
        (["q7Mz!4rPw2", "^ that's the new admin password for the panel"], "q7Mz!4rPw2"),
        (["Ich habe mein WLAN-Passwort geändert", "es ist jetzt Zitrone77"], "Zitrone77"),
    ],
)
def test_a_secret_split_over_messages_is_cut_where_it_stands(messages: list[str], secret: str) -> None:
    assert all(find_credentials(text) == [] for text in messages if secret in text)  # alone, each one passes
    redacted = redact_batch(messages)
    assert not any(secret in text for text in redacted)
    holder = next(i for i, text in enumerate(messages) if secret in text)
    assert "removed]" in redacted[holder]
    assert all(redacted[i] == messages[i] for i in range(len(messages)) if i != holder)


@pytest.mark.parametrize(
    "messages",
    [
        ["I changed my router password again", "took me ages to find the admin page lol"],
        ["new password who dis", "jk I just use Bitwarden for everything now"],
        ["the door code changed again", "I'll ask the landlord tomorrow"],
        ["new password policy at work", "it's now 14 characters minimum"],
        ["flight's delayed", "BA2490 now leaving at 18:45"],
        ["my order finally shipped", "tracking is 1ZNXEE5W4487970226"],
    ],
)
def test_messages_that_only_talk_about_a_secret_are_kept(messages: list[str]) -> None:
    assert redact_batch(messages) == messages
    assert batch_findings(messages) == [[] for _ in messages]


def test_one_message_is_read_as_it_is_alone() -> None:
    text = "Their Wi-Fi password is now sunflower42"
    assert batch_findings([text]) == [find_credentials(text)]
    assert redact_batch([]) == []


def test_a_value_before_its_name_is_held_back_from_what_is_written_down() -> None:
    first, second = "q7Mz!4rPw2", "^ that's the new admin password for the panel"
    assert redact_batch([first, second]) == ["[password removed]", second]  # the batch read whole finds it
    assert redact_batch([first]) == [first]  # on arrival nothing names it yet
    assert journaled(first) == "[password removed]"  # so what is written down holds it back
    assert held_back("Magnolia-Tide-5 lol") and journaled("Magnolia-Tide-5 lol") == "[password removed] lol"
    for text in ("ok see you at 5", "YES", "lol", "v2.14.3", "I use Bitwarden", "[password removed]"):
        assert held_back(text) == [] and journaled(text) == text


@pytest.mark.parametrize("name", ["credentials_heldout.jsonl", "credentials_fresh.jsonl"])
def test_the_labelled_sets_are_vendored_and_labelled(name: str) -> None:
    """The bench reads the development and held-out sets from the repository; every secret is the substring it
    names."""
    items = [json.loads(line) for line in (HELDOUT / name).read_text("utf-8").splitlines()]
    secrets = [item for item in items if item["label"] == "secret"]
    assert len(secrets) >= 80 and any("messages" in item for item in secrets)
    for item in secrets:
        assert item["secret"] in " ".join(item.get("messages", [item.get("text", "")]))
