"""Credentials in the wordings extraction models and people use, and given over several messages of one batch:
found with the span of the secret itself, while talk about passwords and technical numbers stays. Error rates on
labelled corpora: `bench/gate_corpora.py`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.memory.rules import credentials
from bot.memory.rules.credential_batch import batch_findings, held_back, journaled, redact_batch
from bot.memory.rules.credentials import find_credentials, redact

HELDOUT = Path(__file__).resolve().parents[2] / "bench" / "corpora" / "gates"
DEEPL = "7c1e9a2b-4d3f-4a8e-b2c1-9f8e7d6c5b4a:fx"  # a DeepL key: a UUID with a suffix, secret only by its name


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
        # any words between a name and its value, in any language, typos included
        ("Gave their sister the Hulu password, which is PancakeStack#4", "PancakeStack#4"),
        ("The NAS admin password has been Quartz@Owl17 since June", "Quartz@Owl17"),
        ("Their pasword for the forum is tangerine2k19", "tangerine2k19"),
        ("Logs in to the pension portal with Falcon&Reed1999", "Falcon&Reed1999"),
        ("logged into the router using Admin!2468", "Admin!2468"),
        ("Son mot de passe Spotify est désormais Hibou-Gris-8", "Hibou-Gris-8"),
        ("Das Kennwort für den Router lautet seit gestern Blau_Wal_33", "Blau_Wal_33"),
        ("Mijn wachtwoord is nu Fietsbel!23", "Fietsbel!23"),
        ("Şifrem Gizli_Kedi99", "Gizli_Kedi99"),
        ("The TrueCrypt password is three owls under a lamp", "three owls under a lamp"),
        # codes near a code's name
        ("The garage combination is 4172", "4172"),
        ("Der Code für das Gartentor ist 5521", "5521"),
        ("El código del garaje es 3C-4410", "3C-4410"),
        ("Il codice del cancello è 7788", "7788"),
        ("The code the pharmacy just texted is 730914", "730914"),
        ("Le code de vérification reçu par mail est 118204", "118204"),
        ("the gym locker combination is 31-07-22", "31-07-22"),
        # keys and seeds in other words and languages
        (f"Der API-Schlüssel für Mapbox ist {DEEPL}", DEEPL),
        ("The TOTP seed for the bank app is JBSWY3DPEHPK3PXP", "JBSWY3DPEHPK3PXP"),
        # what a chosen string locks, a name inside a compound, a typo, filler between the verb and the value
        ("the photo archive is encrypted with Kestrel#2204", "Kestrel#2204"),
        ("the old laptop is locked w/ Puffin.Tide.42", "Puffin.Tide.42"),
        ("Das Router-Passwort ist jetzt Tannenbaum77!", "Tannenbaum77!"),
        ("psswd for the family disney account is Lighthouse_19", "Lighthouse_19"),
        ("Their Spotify password is still the old one, meadowlark88", "meadowlark88"),
        # values read out in groups, short keys given by a verb, backup codes, a numeric password
        ("Bike lock combination: 12 08 31", "12 08 31"),
        ("setup key for their bank's authenticator: k3vd 8mqa rt5z 2xwe", "k3vd 8mqa rt5z 2xwe"),
        ("their github backup code: r4tz-9mwq", "r4tz-9mwq"),
        ("La clave de la alarma es 55219", "55219"),
        ("the router key is 9b3e71c2aa", "9b3e71c2aa"),
        ("age identity: AGE-SECRET-KEY-1" + "QZ" * 29, "AGE-SECRET-KEY-1" + "QZ" * 29),
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
        "The docs show mysql://USER:PASSWORD@HOST:3306/DB as the format",
        # a credential's name near something else shaped like a value
        "Password hashing uses argon2id with 64MB memory",
        "Their password manager generated a 24-character password",
        "Signs in to AWS in eu-west-1 with SSO",
        "Logs in with Google on their Pixel8",
        "Logs in as admin_2024 on the staging box",
        "Pushed the code to GitHub at 2130 last night",
        "Refactored the code in PR 4521",
        "The promo code SAVE20 gave 20% off",
        "Changed the door code in 2023",
        "The verification code was sent to +44 7700 900123",
        "Their train ticket code is TK894426",
        "Lives at PIN 110001 in Delhi",
        "Their Minecraft world seed is 8675309",
        "Keeps the API key in OPENAI_API_KEY and the org in OPENAI_ORG",
        "Their SSH public key is ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKq sam@laptop",
        "Their password was leaked in a breach last year",
        "Ihr Passwort ist zu kurz, mindestens 12 Zeichen",
        "Le mot de passe doit contenir 12 caractères",
        "Stripe's test card 4242 4242 4242 4242 works in test mode",  # a processor's public test number
        "她的密码都保存在 Bitwarden 里",
        "密码用 argon2 做哈希，参数 m=64",
        "Lost their recovery codes and had to call the bank",
        "The archive is encrypted with AES-256",
        "Encrypted the disk with ChaCha20-Poly1305",
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
        # the value after other lead-ins, in other languages
        (["they locked my school login", "temp one is Spring2026!Qa"], "Spring2026!Qa"),
        (["the bike shed code", "3-1-4-1", "keep it quiet"], "3-1-4-1"),
        (["ho cambiato la password della banca", "adesso è Arancia_Rossa4"], "Arancia_Rossa4"),
        (["я поменял пароль от почты", "теперь он Lisitsa_2025"], "Lisitsa_2025"),
        (["メールのパスワード変えた", "新しいのは tanuki_3090"], "tanuki_3090"),
        (["이메일 비번 바꿨어", "이제 hodu_bread_7 야"], "hodu_bread_7"),
        # the value first, its name after
        (["Zephyr#2290", "oops wrong chat, that was my laptop password"], "Zephyr#2290"),
        (["Ember-Grove-4 lol", "yeah that's honestly my email password now"], "Ember-Grove-4"),
        (["Lantern#515 is what I picked", "for the new work login"], "Lantern#515"),
        (["4-4-1-9", "thats the gate code"], "4-4-1-9"),
        (["3318C", "c'est le digicode de la résidence"], "3318C"),  # a code with its block's letter
        (["Qm7!tr2Ves", "これは家のルーターのパスワード、覚えといて"], "Qm7!tr2Ves"),  # the name in Japanese
    ],
)
def test_a_secret_split_over_messages_is_cut_where_it_stands(
    messages: list[str], secret: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The patterns find none of these values in its message alone, only in the batch; the trained reader finds
    some of them alone too. Either way the value is cut where it stands and the other messages are untouched."""
    holder = next(i for i, text in enumerate(messages) if secret in text)
    with monkeypatch.context() as patterns_only:
        patterns_only.setattr(credentials, "credentials_read", lambda text: [])
        assert find_credentials(messages[holder]) == []  # alone, the patterns let it pass
        cut_by_patterns = redact_batch(messages)
    for redacted in (cut_by_patterns, redact_batch(messages)):
        assert secret not in redacted[holder] and "removed]" in redacted[holder]
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
        ["bought a new router", "TP-Link Archer AX55"],
        ["Upgraded to the RTX4090Ti", "still need to reset my windows password though"],
        ["my pin got blocked", "going to the bank at 14:30"],
        ["new wifi router", "it's a Fritz!Box 7590"],
        ["I like token-10", "I like token-15", "I like token-20"],
        ["remember secret-222222222222222222-1 please", "remember secret-222222222222222222-2 please"],
        ["mi código postal nuevo", "es 28014"],
        ["the public key of my wireguard peer", "xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg="],  # named public first
        ["here's my switch friend code", "SW-4412-0987-3310", "add me!"],  # a code that is public by its form
    ],
)
def test_messages_that_only_talk_about_a_secret_are_kept(messages: list[str]) -> None:
    assert redact_batch(messages) == messages
    assert batch_findings(messages) == [[] for _ in messages]


def test_a_value_where_a_password_would_be_is_cut_by_the_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    """"the password-protected zip is on the drive" … "it's now Budget2024": nothing names Budget2024 a password,
    and the patterns keep it; the trained reader cuts it, a password-shaped value said where a password would be.
    Losing the word costs less than storing a password."""
    messages = ["the password-protected zip is on the drive", "it's now Budget2024"]
    assert redact_batch(messages) == [messages[0], "it's now [password removed]"]
    monkeypatch.setattr(credentials, "credentials_read", lambda text: [])
    assert redact_batch(messages) == messages


def test_one_message_is_read_as_it_is_alone() -> None:
    text = "Their Wi-Fi password is now sunflower42"
    assert batch_findings([text]) == [find_credentials(text)]
    assert redact_batch([]) == []


def test_a_value_before_its_name_is_held_back_from_what_is_written_down(monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = "q7Mz!4rPw2", "^ that's the new admin password for the panel"
    assert redact_batch([first, second]) == ["[password removed]", second]  # the batch read whole finds it
    assert redact_batch([first]) == [first]  # on arrival nothing names it yet
    assert journaled(first) == "[password removed]"  # so what is written down holds it back
    lone = "Magnolia-Tide-5 lol"  # cut on arrival (the trained reader) or held back from what is written down
    assert "[password removed] lol" in (redact(lone), journaled(lone))
    with monkeypatch.context() as patterns_only:  # where no reader cuts it, what is written down holds it back
        patterns_only.setattr(credentials, "credentials_read", lambda text: [])
        assert held_back("Magnolia-Tide-5 lol") and journaled("Magnolia-Tide-5 lol") == "[password removed] lol"
    for text in ("ok see you at 5", "YES", "lol", "v2.14.3", "I use Bitwarden", "[password removed]"):
        assert held_back(text) == [] and journaled(text) == text


@pytest.mark.parametrize("name", ["credentials_heldout.jsonl", "credentials_fresh.jsonl", "credentials_unseen.jsonl"])
def test_the_labelled_sets_are_vendored_and_labelled(name: str) -> None:
    """The bench reads the development and held-out sets from the repository; every secret is the substring it
    names."""
    items = [json.loads(line) for line in (HELDOUT / name).read_text("utf-8").splitlines()]
    secrets = [item for item in items if item["label"] == "secret"]
    assert len(secrets) >= 80 and any("messages" in item for item in secrets)
    for item in secrets:
        assert item["secret"] in " ".join(item.get("messages", [item.get("text", "")]))
