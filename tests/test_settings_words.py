"""What a newcomer reads when a setting is wrong: plain words (the name, what was given, what is allowed) in one
line, a token refusal that fits what was pasted, a DATA_DIR that is a file named as such, and the old DM switch
accepted with one deprecation line. Through `load_settings` and the real entry point as a process."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import SettingsError, load_settings
from tests.test_config import API_KEY, TOKEN, error_of, minimal
from tests.test_process import assert_one_clean_line, clean_env, run_bot_command, standin_env

SECRET_KEY_GIVEN = "not-base64-but-secret-Zq9x"
SECRET_URL_GIVEN = "mysql://admin:hunter2-pass@db.example/bot"


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"MEMORY_TOP_K": "many"}, "MEMORY_TOP_K must be a whole number (given 'many')"),
        ({"LLM_TIMEOUT_SECONDS": "soon"}, "LLM_TIMEOUT_SECONDS must be a number (given 'soon')"),
        ({"STREAM_REPLIES": "maybe"}, "STREAM_REPLIES must be true or false (given 'maybe')"),
        ({"DM_POLICY": "friends"}, "DM_POLICY must be one of 'all', 'members' or 'off' (given 'friends')"),
        ({"HISTORY_MESSAGES": "500"}, "HISTORY_MESSAGES must be at most 100 (given '500')"),
        ({"LLM_TIMEOUT_SECONDS": "0"}, "LLM_TIMEOUT_SECONDS must be more than 0"),
        ({"ALLOWED_GUILD_IDS": "123, general"}, "ALLOWED_GUILD_IDS must be ids (whole numbers) separated by commas"),
        ({"OPENAI_BASE_URL": "localhost:11434"}, "OPENAI_BASE_URL must start with http:// or https://"),
    ],
    ids=["integer", "number", "boolean", "choice", "at-most", "more-than", "id-list", "url"],
)
def test_a_bad_setting_is_named_in_plain_words(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], says: str) -> None:
    minimal(monkeypatch)
    message = error_of(monkeypatch, **env)
    assert says in message
    assert "Input should" not in message and "unable to parse" not in message and "Value error" not in message


def test_a_long_value_is_described_by_its_length_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """It may be a key pasted into the wrong line."""
    minimal(monkeypatch)
    message = error_of(monkeypatch, MEMORY_TOP_K="sk-proj-" + "x" * 40)
    assert "MEMORY_TOP_K must be a whole number (given a value of 48 characters)" in message
    assert "sk-proj" not in message


def test_a_bad_secret_is_named_but_never_repeated(monkeypatch: pytest.MonkeyPatch) -> None:
    minimal(monkeypatch)
    message = error_of(monkeypatch, MEMORY_ENCRYPTION_KEY=SECRET_KEY_GIVEN, DATABASE_URL=SECRET_URL_GIVEN)
    assert "MEMORY_ENCRYPTION_KEY must be 32 random bytes in base64" in message
    assert "DATABASE_URL must start with postgresql://" in message
    assert "given" not in message
    assert "hunter2" not in message and "Zq9x" not in message and "mysql" not in message


@pytest.mark.parametrize(
    ("token", "says"),
    [
        ("x.y.z", "it has three parts, but 5 characters where a bot token has about 70"),
        ("aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW", "a bot token has three parts separated by dots and this one has no dots"),
        (TOKEN.rsplit(".", 1)[0], "a bot token has three parts separated by dots and this one has 2 parts"),
        (f'"{TOKEN}"', "it is wrapped in quotes"),
        ("bm90IGFuIGlkIGF0IGFsbA.GfAkEd.not-a-real-token-abcdefghijklmnopqrstuv", "its first part should be the bot's"),
    ],
    ids=["three-short-parts", "client-secret", "cut-short", "quoted", "first-not-an-id"],
)
def test_a_token_refusal_fits_what_was_pasted(monkeypatch: pytest.MonkeyPatch, token: str, says: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    message = error_of(monkeypatch, DISCORD_TOKEN=token)
    assert f"DISCORD_TOKEN is not a bot token: {says}" in message
    assert "that is three parts separated by dots" not in message
    assert token.strip('"')[:12] not in message or token == "x.y.z"


def test_the_old_dm_switch_still_works(monkeypatch: pytest.MonkeyPatch) -> None:
    minimal(monkeypatch)
    monkeypatch.setenv("ALLOW_DMS", "false")
    monkeypatch.setenv("DM_POLICY", "all")  # as an .env copied from an older .env.example has both
    assert load_settings().effective_dm_policy == "off"


def test_a_data_dir_that_is_a_file_is_named_as_a_file(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("not a folder")
    result = run_bot_command(["console", "--user-id", "42"], tmp_path, clean_env(
        DATA_DIR=str(tmp_path / "data"), OPENAI_BASE_URL="http://127.0.0.1:9/v1"
    ))
    assert result.returncode == 2, result.stderr
    assert_one_clean_line(result.stderr, f"DATA_DIR {tmp_path / 'data'} is a file, not a folder")
    assert "File exists" not in result.stderr


def test_a_data_dir_under_a_file_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("not a folder")
    target = tmp_path / "data" / "bot"
    result = run_bot_command(["console", "--user-id", "42"], tmp_path, clean_env(
        DATA_DIR=str(target), OPENAI_BASE_URL="http://127.0.0.1:9/v1"
    ))
    assert result.returncode == 2, result.stderr
    assert_one_clean_line(result.stderr, f"cannot be created: {tmp_path / 'data'} is a file")


def test_allow_dms_gives_one_deprecation_line_at_start(tmp_path: Path) -> None:
    """The console starts, logs the line to its log file, and ends at once (end of input)."""
    data = tmp_path / "data"
    env = standin_env(data, "http://127.0.0.1:9/v1", ALLOW_DMS="false")
    result = run_bot_command(["console", "--user-id", "42"], tmp_path, env)
    assert result.returncode == 0, result.stderr
    log = (data / "console.log").read_text()
    assert log.count("ALLOW_DMS is deprecated") == 1 and "DM_POLICY=off" in log


def test_settings_errors_never_raise_anything_but_settings_error(monkeypatch: pytest.MonkeyPatch) -> None:
    minimal(monkeypatch)
    monkeypatch.setenv("SHARD_IDS", "a;b")
    with pytest.raises(SettingsError, match="SHARD_IDS must be ids"):
        load_settings()
