"""Settings (bot/config.py): the documented defaults, parsing, one-line errors without secrets, `.env`, and docs.

Every test runs in an empty temporary folder with every setting removed from the environment, so neither the
developer's shell nor a `.env` in the repository can change the outcome.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import SecretStr

from bot.config import DEPRECATED_SETTINGS, Settings, SettingsError, describe_endpoint, load_settings

REPO = Path(__file__).resolve().parent.parent
TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GfAkEd.not-a-real-token-abcdefghijklmnopqrstuv"  # shaped like a real one
API_KEY = "sk-test-key-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
SETTING_NAMES = sorted(name.upper() for name in Settings.model_fields)


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in SETTING_NAMES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def minimal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCORD_TOKEN", TOKEN)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)


def error_of(monkeypatch: pytest.MonkeyPatch, **env: str) -> str:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as caught:
        load_settings()
    message = str(caught.value)
    assert "\n" not in message
    assert TOKEN not in message and API_KEY not in message
    return message


# --- defaults -----------------------------------------------------------------------------------------------


def test_defaults_match_the_design_contract(monkeypatch: pytest.MonkeyPatch) -> None:
    minimal(monkeypatch)
    settings = load_settings()
    assert settings.chat_model == "gpt-4o-mini"
    assert settings.memory_model is None
    assert settings.effective_memory_model == "gpt-4o-mini"
    assert settings.data_dir == Path("./data")
    assert settings.memory_dir == Path("./data/memory")
    assert settings.memory_debounce_seconds == 30
    assert settings.memory_top_k == 15
    assert settings.openai_base_url is None  # the OpenAI endpoint
    assert settings.allowed_guild_ids == frozenset() and settings.allowed_channel_ids == frozenset()


def test_memory_model_falls_back_to_chat_model_and_can_differ(monkeypatch: pytest.MonkeyPatch) -> None:
    minimal(monkeypatch)
    monkeypatch.setenv("CHAT_MODEL", "llama3.1:8b")
    assert load_settings().effective_memory_model == "llama3.1:8b"
    monkeypatch.setenv("MEMORY_MODEL", "qwen2.5:3b")
    settings = load_settings()
    assert (settings.chat_model, settings.effective_memory_model) == ("llama3.1:8b", "qwen2.5:3b")


def test_comma_separated_id_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    minimal(monkeypatch)
    monkeypatch.setenv("ALLOWED_GUILD_IDS", "123456789012345678, 223456789012345678")
    monkeypatch.setenv("ALLOWED_CHANNEL_IDS", "42")
    settings = load_settings()
    assert settings.allowed_guild_ids == {123456789012345678, 223456789012345678}
    assert settings.allowed_channel_ids == {42}


def test_a_bad_id_in_a_list_names_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    minimal(monkeypatch)
    assert "ALLOWED_CHANNEL_IDS" in error_of(monkeypatch, ALLOWED_CHANNEL_IDS="12,general")


@pytest.mark.parametrize("blank", ["", "   "])
def test_blank_values_mean_unset(monkeypatch: pytest.MonkeyPatch, blank: str) -> None:
    minimal(monkeypatch)
    for name in ("MEMORY_MODEL", "OPENAI_BASE_URL", "COMMAND_SYNC_GUILD_ID", "ALLOWED_GUILD_IDS"):
        monkeypatch.setenv(name, blank)
    settings = load_settings()
    assert settings.memory_model is None
    assert settings.openai_base_url is None
    assert settings.command_sync_guild_id is None
    assert settings.allowed_guild_ids == frozenset()


def test_empty_values_fall_back_to_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """`KEY=` lines, as copied from .env.example, must not turn numbers into errors or models into ""."""
    minimal(monkeypatch)
    for name in ("CHAT_MODEL", "DATA_DIR", "MEMORY_DEBOUNCE_SECONDS", "MEMORY_TOP_K", "SYSTEM_PROMPT"):
        monkeypatch.setenv(name, "")
    settings = load_settings()
    assert settings.chat_model == "gpt-4o-mini"
    assert settings.data_dir == Path("./data")
    assert settings.memory_debounce_seconds == 30
    assert settings.memory_top_k == 15
    assert settings.system_prompt == Settings.model_fields["system_prompt"].default


def test_blank_api_key_counts_as_missing_for_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCORD_TOKEN", TOKEN)
    message = error_of(monkeypatch, OPENAI_API_KEY="  ")
    assert "OPENAI_API_KEY" in message


# --- sharding -----------------------------------------------------------------------------------------------


def test_shards_unset_by_default_and_parsed_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    minimal(monkeypatch)
    settings = load_settings()
    assert (settings.shard_count, settings.shard_ids) == (None, None)
    monkeypatch.setenv("SHARD_COUNT", "8")
    assert (load_settings().shard_count, load_settings().shard_ids) == (8, None)  # all eight in this process
    monkeypatch.setenv("SHARD_IDS", " 5, 2 3")
    assert load_settings().shard_ids == (5, 2, 3)
    monkeypatch.setenv("SHARD_IDS", ",")
    assert load_settings().shard_ids is None


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"SHARD_IDS": "0,1"}, "SHARD_IDS needs SHARD_COUNT, the total number of shards across all of the bot's"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "6,8,9"}, "SHARD_IDS lists 8,9, but with SHARD_COUNT=8 shard ids run from"),
        ({"SHARD_COUNT": "2", "SHARD_IDS": "-1"}, "SHARD_IDS lists -1, but with SHARD_COUNT=2 shard ids run from 0 to"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "2,3,2"}, "SHARD_IDS lists 2 more than once"),
        ({"SHARD_COUNT": "0"}, "SHARD_COUNT must be at least 1 (given '0')"),
        ({"SHARD_COUNT": "eight"}, "SHARD_COUNT"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "2,three"}, "SHARD_IDS"),
    ],
    ids=["ids-without-count", "beyond-count", "negative", "repeated", "zero-count", "not-a-count", "not-an-id"],
)
def test_bad_shard_settings_are_one_line(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: str) -> None:
    minimal(monkeypatch)
    message = error_of(monkeypatch, **env)
    assert message.startswith("invalid configuration: ")
    assert expected in message


# --- secrets ------------------------------------------------------------------------------------------------


def test_secrets_are_secretstr_and_absent_from_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    minimal(monkeypatch)
    settings = load_settings()
    assert isinstance(settings.discord_token, SecretStr)
    assert isinstance(settings.openai_api_key, SecretStr)
    assert settings.discord_token.get_secret_value() == TOKEN
    for text in (repr(settings), str(settings), repr(settings.model_dump()), settings.model_dump_json()):
        assert TOKEN not in text and API_KEY not in text


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MEMORY_DEBOUNCE_SECONDS", "soon"),
        ("MEMORY_TOP_K", "-1"),
        ("LOG_LEVEL", "LOUD"),
        ("OPENAI_BASE_URL", "ftp://example.invalid"),
    ],
)
def test_errors_next_to_secrets_never_echo_them(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    minimal(monkeypatch)
    message = error_of(monkeypatch, **{name: value})
    assert name in message


def test_pasted_secrets_lose_surrounding_whitespace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCORD_TOKEN", f"  {TOKEN}\n")
    monkeypatch.setenv("OPENAI_API_KEY", f"{API_KEY} ")
    settings = load_settings()
    assert settings.discord_token.get_secret_value() == TOKEN
    assert settings.openai_api_key is not None and settings.openai_api_key.get_secret_value() == API_KEY


# --- one-line errors ----------------------------------------------------------------------------------------


def test_missing_discord_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    message = error_of(monkeypatch)
    assert "DISCORD_TOKEN" in message and "required" in message


def test_whitespace_discord_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    assert "DISCORD_TOKEN" in error_of(monkeypatch, DISCORD_TOKEN="   ")


def test_non_numeric_debounce(monkeypatch: pytest.MonkeyPatch) -> None:
    minimal(monkeypatch)
    message = error_of(monkeypatch, MEMORY_DEBOUNCE_SECONDS="thirty")
    assert "MEMORY_DEBOUNCE_SECONDS must be a number (given 'thirty')" in message  # a short value is shown
    message = error_of(monkeypatch, MEMORY_DEBOUNCE_SECONDS=API_KEY)
    assert API_KEY not in message  # a long one is not (it could be a pasted secret)


def test_max_wait_below_debounce(monkeypatch: pytest.MonkeyPatch) -> None:
    minimal(monkeypatch)
    message = error_of(monkeypatch, MEMORY_DEBOUNCE_SECONDS="60", MEMORY_MAX_WAIT_SECONDS="10")
    assert "MEMORY_MAX_WAIT_SECONDS" in message


def test_bad_base_url_scheme(monkeypatch: pytest.MonkeyPatch) -> None:
    minimal(monkeypatch)
    assert "OPENAI_BASE_URL" in error_of(monkeypatch, OPENAI_BASE_URL="localhost:11434/v1")


def test_no_api_key_with_the_default_openai_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCORD_TOKEN", TOKEN)
    assert "OPENAI_API_KEY" in error_of(monkeypatch)


def test_no_api_key_is_fine_for_a_local_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCORD_TOKEN", TOKEN)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    settings = load_settings()
    assert settings.openai_api_key is None
    assert settings.api_key_value()  # the SDK still gets a placeholder string


def test_several_problems_are_reported_on_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    message = error_of(monkeypatch, MEMORY_TOP_K="many")
    assert "DISCORD_TOKEN" in message and "MEMORY_TOP_K" in message


# --- .env ---------------------------------------------------------------------------------------------------


def test_dotenv_file_is_read(monkeypatch: pytest.MonkeyPatch, isolated: Path) -> None:
    (isolated / ".env").write_text(
        f"DISCORD_TOKEN={TOKEN}\nOPENAI_BASE_URL=http://127.0.0.1:8080/v1\nCHAT_MODEL=local-model\n"
        "MEMORY_DEBOUNCE_SECONDS=5\nALLOWED_GUILD_IDS=1,2,3\n",
        encoding="utf-8",
    )
    settings = load_settings()
    assert settings.discord_token.get_secret_value() == TOKEN
    assert settings.chat_model == "local-model"
    assert settings.memory_debounce_seconds == 5
    assert settings.allowed_guild_ids == {1, 2, 3}


def test_environment_wins_over_dotenv(monkeypatch: pytest.MonkeyPatch, isolated: Path) -> None:
    (isolated / ".env").write_text(f"DISCORD_TOKEN={TOKEN}\nOPENAI_API_KEY={API_KEY}\nCHAT_MODEL=from-file\n")
    monkeypatch.setenv("CHAT_MODEL", "from-env")
    assert load_settings().chat_model == "from-env"


def test_dotenv_errors_name_the_setting_without_the_secret(isolated: Path) -> None:
    (isolated / ".env").write_text(f"DISCORD_TOKEN={TOKEN}\nOPENAI_API_KEY={API_KEY}\nMEMORY_TOP_K=lots\n")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert "MEMORY_TOP_K" in str(caught.value)
    assert TOKEN not in str(caught.value) and API_KEY not in str(caught.value)


# --- .env.example stays true --------------------------------------------------------------------------------

_ASSIGNMENT = re.compile(r"^([A-Z][A-Z0-9_]*)=(.*)$")


def example_entries() -> dict[str, tuple[str, str]]:
    """NAME -> (value, the comment line right above it), from .env.example."""
    lines = (REPO / ".env.example").read_text(encoding="utf-8").splitlines()
    entries: dict[str, tuple[str, str]] = {}
    for index, line in enumerate(lines):
        match = _ASSIGNMENT.match(line)
        if match:
            above = next((lines[i] for i in range(index - 1, -1, -1) if not _ASSIGNMENT.match(lines[i])), "")
            entries[match.group(1)] = (match.group(2), above)
    return entries


def test_every_setting_is_documented_in_env_example() -> None:
    entries = example_entries()
    current = sorted(set(SETTING_NAMES) - {name.upper() for name in DEPRECATED_SETTINGS})  # old names: not offered
    assert sorted(entries) == current, "settings and .env.example disagree"
    for name, (_, comment) in entries.items():
        assert comment.startswith("#") and len(comment) > 10, f"{name} needs a comment line above it"


def test_env_example_shows_the_defaults(isolated: Path) -> None:
    """Copying .env.example to .env and filling in the token changes nothing but the token."""
    body = (REPO / ".env.example").read_text(encoding="utf-8").replace("DISCORD_TOKEN=\n", f"DISCORD_TOKEN={TOKEN}\n")
    (isolated / ".env").write_text(body, encoding="utf-8")
    from_example = Settings()
    defaults = Settings(discord_token=TOKEN, _env_file=None)
    assert from_example.model_dump() == defaults.model_dump()


# --- every problem at once; a token that cannot be one ------------------------------------------------------


def test_every_missing_setting_is_named_in_one_run(monkeypatch: pytest.MonkeyPatch) -> None:
    message = error_of(monkeypatch)  # nothing set at all: a fresh clone's first start
    assert "DISCORD_TOKEN is required" in message and "OPENAI_API_KEY is required" in message


def test_malformed_and_cross_setting_problems_come_together(monkeypatch: pytest.MonkeyPatch) -> None:
    message = error_of(
        monkeypatch, MEMORY_TOP_K="many", MEMORY_DEBOUNCE_SECONDS="60", MEMORY_MAX_WAIT_SECONDS="10", SHARD_IDS="1"
    )
    for name in ("DISCORD_TOKEN", "MEMORY_TOP_K", "OPENAI_API_KEY", "MEMORY_MAX_WAIT_SECONDS", "SHARD_IDS needs"):
        assert name in message, name
    assert message.count("invalid configuration") == 1


def test_a_malformed_value_is_not_also_blamed_on_its_neighbour(monkeypatch: pytest.MonkeyPatch) -> None:
    minimal(monkeypatch)
    message = error_of(monkeypatch, MEMORY_DEBOUNCE_SECONDS="a minute", MEMORY_MAX_WAIT_SECONDS="10")
    assert "MEMORY_DEBOUNCE_SECONDS" in message
    assert "MEMORY_MAX_WAIT_SECONDS must be at least" not in message, "the default stood in only to check the rest"


CLIENT_SECRET = "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW"
PUBLIC_KEY = "3f1c2b9e8d7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e"


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (f"Bot {TOKEN}", "starts with 'Bot '"),
        ("123456789012345678", "is a number"),
        (CLIENT_SECRET, "is not a bot token"),
        (PUBLIC_KEY, "is not a bot token"),
        (TOKEN.rsplit(".", 1)[0], "is not a bot token"),  # cut short while pasting
        (f'"{TOKEN}"', "is not a bot token"),  # quotes from a shell export kept by a compose env_file
        ("bm90IGFuIGlkIGF0IGFsbA.GfAkEd.not-a-real-token-abcdefghijklmnopqrstuv", "is not a bot token"),
    ],
    ids=["bot-prefix", "application-id", "client-secret", "public-key", "two-parts", "quoted", "first-not-an-id"],
)
def test_a_malformed_discord_token_is_named_without_echoing_it(
    monkeypatch: pytest.MonkeyPatch, value: str, says: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    message = error_of(monkeypatch, DISCORD_TOKEN=value)
    assert f"DISCORD_TOKEN {says}" in message
    assert value not in message and value.strip('"')[:16] not in message


def test_the_console_needs_no_discord_token_even_a_malformed_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    assert load_settings(discord=False).chat_model == "gpt-4o-mini"
    monkeypatch.setenv("DISCORD_TOKEN", CLIENT_SECRET)
    assert load_settings(discord=False).discord_token.get_secret_value() != CLIENT_SECRET
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(SettingsError, match="OPENAI_API_KEY"):
        load_settings(discord=False)


def test_the_endpoint_is_described_without_credentials() -> None:
    assert describe_endpoint(None) == "https://api.openai.com/v1 (OpenAI)"
    assert describe_endpoint("https://me:pw-123456@llm.example:8443/v1?api-key=abcdef") == "https://llm.example:8443/v1"
    assert describe_endpoint("http://[::1]:11434/v1") == "http://[::1]:11434/v1"


# --- community settings and budgets ---------------------------------------------------------------------------


def test_models_budgets_and_dm_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    minimal(monkeypatch)
    defaults = load_settings()
    assert defaults.chat_models == ("gpt-4o-mini",)  # CHAT_MODEL only
    assert (defaults.user_daily_tokens, defaults.guild_daily_tokens) == (0, 0)  # unlimited
    assert defaults.effective_dm_policy == "all"
    monkeypatch.setenv("ALLOWED_CHAT_MODELS", " gpt-4o , qwen3:8b,gpt-4o,, gpt-4o-mini")
    monkeypatch.setenv("USER_DAILY_TOKENS", "20000")
    monkeypatch.setenv("DM_POLICY", " Members ")
    settings = load_settings()
    assert settings.chat_models == ("gpt-4o-mini", "gpt-4o", "qwen3:8b")  # in the order written, once each
    assert settings.user_daily_tokens == 20_000 and settings.effective_dm_policy == "members"
    monkeypatch.setenv("ALLOW_DMS", "false")
    assert load_settings().effective_dm_policy == "off"
    assert "DM_POLICY" in error_of(monkeypatch, DM_POLICY="friends")
    assert "USER_DAILY_TOKENS" in error_of(monkeypatch, DM_POLICY="all", USER_DAILY_TOKENS="-5")
