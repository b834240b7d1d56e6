"""Settings: every knob of the bot, read from the environment (and an optional `.env`) by pydantic-settings.

Nothing is read at import time: `load_settings()` builds a `Settings` when the entry point asks for one, so tests
and tools can build their own. Secrets are `SecretStr`, so they never show up in a repr, a log line or an error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from bot.discord_token import discord_token_problem
from bot.settings_words import plain_problem

DEFAULT_SYSTEM_PROMPT = (
    "You are a friendly, helpful member of this Discord community. You remember the people you talk with, "
    "and you use what you remember naturally, the way a friend would, without reciting it. Keep answers "
    "concise and conversational unless someone asks for detail; use Discord markdown where it helps. "
    "If you do not know something, say so."
)

IdList = Annotated[frozenset[int], NoDecode]
NameList = Annotated[frozenset[str], NoDecode]
ModelList = Annotated[tuple[str, ...], NoDecode]
ShardIds = Annotated[tuple[int, ...] | None, NoDecode]


class Settings(BaseSettings):
    """All configuration. The environment names (the field names in upper case) are a public contract: users,
    `.env.example` and the README depend on them."""

    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        case_sensitive=False,
        env_ignore_empty=True,  # `KEY=` (as copied from .env.example) means "use the default", not ""
        hide_input_in_errors=True,
    )

    # --- Discord ---
    discord_token: SecretStr
    allowed_guild_ids: IdList = frozenset()
    allowed_channel_ids: IdList = frozenset()
    auto_reply_channel_ids: IdList = frozenset()
    allow_dms: bool = True  # deprecated: DM_POLICY=off says the same (see DEPRECATED_SETTINGS)
    dm_policy: Literal["all", "members", "off"] = "all"
    sync_commands: bool = False
    command_sync_guild_id: int | None = None
    shard_count: int | None = Field(default=None, ge=1)
    shard_ids: ShardIds = None

    # --- LLM endpoint ---
    openai_api_key: SecretStr | None = None
    openai_base_url: str | None = None
    chat_model: str = "gpt-4o-mini"
    memory_model: str | None = None
    llm_timeout_seconds: float = Field(default=60.0, gt=0)
    chat_max_tokens: int = Field(default=1024, gt=0)
    chat_temperature: float | None = Field(default=None, ge=0, le=2)
    chat_token_parameter: Literal["auto", "max_tokens", "max_completion_tokens"] = "auto"  # noqa: S105 -- a name
    thinking_models: NameList = frozenset()
    allowed_chat_models: ModelList = ()

    # --- Budgets (tokens the endpoint reports, per UTC day; 0 = unlimited) ---
    user_daily_tokens: int = Field(default=0, ge=0)
    guild_daily_tokens: int = Field(default=0, ge=0)

    # --- Conversation ---
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    history_messages: int = Field(default=20, ge=0, le=100)
    history_chars: int = Field(default=8000, ge=0)
    # channel: the channel's recent messages, everyone's; conversation: only messages to and from the bot
    history_scope: Literal["channel", "conversation"] = "channel"
    rate_limit_messages: int = Field(default=8, ge=0)
    rate_limit_window_seconds: float = Field(default=60.0, gt=0)
    stream_replies: bool = True
    stream_edit_seconds: float = Field(default=1.0, ge=0.2)
    reply_chain_messages: int = Field(default=10, ge=0, le=50)
    reply_chain_chars: int = Field(default=6000, ge=0)
    chat_concurrency: int = Field(default=8, ge=1)
    chat_concurrency_per_guild: int = Field(default=4, ge=1)
    chat_queue_limit: int = Field(default=50, ge=0)
    chat_queue_seconds: float = Field(default=60.0, gt=0)

    # --- Attachments ---
    vision: bool = False
    vision_max_images: int = Field(default=4, ge=0, le=16)
    vision_max_image_bytes: int = Field(default=5_000_000, gt=0)
    text_attachment_max_files: int = Field(default=4, ge=0, le=16)
    text_attachment_max_bytes: int = Field(default=100_000, gt=0)

    # --- Memory ---
    data_dir: Path = Path("./data")
    memory_debounce_seconds: float = Field(default=30.0, gt=0)
    memory_max_wait_seconds: float = Field(default=300.0, gt=0)
    memory_top_k: int = Field(default=15, ge=0)
    memory_max_facts: int = Field(default=100, ge=1)
    memory_max_places: int = Field(default=50, ge=1)
    memory_min_confidence: float = Field(default=0.7, ge=0, le=1)
    memory_duplicate_similarity: float = Field(default=0.85, gt=0, le=1)
    memory_token_budget: int = Field(default=1000, ge=50)
    memory_max_turn_chars: int = Field(default=2000, ge=200)
    memory_max_concurrent_extractions: int = Field(default=4, ge=1)
    memory_cache_users: int = Field(default=256, ge=1)
    memory_extraction_retries: int = Field(default=4, ge=0)
    memory_scope: Literal["place", "user"] = "place"
    memory_encryption_key: SecretStr | None = None

    # --- Memory that ages (DESIGN 17) ---
    # Days without being restated or confirmed after which a learned fact ranks a little lower (0: never).
    memory_stale_days: int = Field(default=180, ge=0)

    # --- Recall by meaning (optional: an embedding model; unset, facts are selected by their words alone) ---
    embedding_model: str | None = None
    embedding_base_url: str | None = None  # default: OPENAI_BASE_URL
    embedding_api_key: SecretStr | None = None  # default: OPENAI_API_KEY
    embedding_dimensions: int | None = Field(default=None, ge=1, le=16384)
    embedding_timeout_seconds: float = Field(default=1.0, gt=0, le=60)
    embedding_query_prefix: str = ""
    embedding_passage_prefix: str = ""
    embedding_input_type: bool = False

    # --- Database (several processes; files in DATA_DIR when unset) ---
    database_url: SecretStr | None = None
    database_pool_size: int = Field(default=10, ge=1, le=100)
    database_statement_timeout_seconds: float = Field(default=10.0, gt=0, le=600)
    memory_lease_seconds: float | None = Field(default=None, gt=0)

    # --- Operations and data rights ---
    memory_retention_days: int = Field(default=365, ge=0)
    privacy_contact: str = ""
    memory_disabled_guild_ids: IdList = frozenset()
    memory_disabled_channel_ids: IdList = frozenset()
    metrics_port: int | None = Field(default=None, ge=1, le=65535)
    metrics_host: str = "127.0.0.1"

    # --- Process ---
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_prompts: bool = False
    shutdown_timeout_seconds: float = Field(default=20.0, gt=0)
    healthcheck_max_age_seconds: float = Field(default=90.0, gt=0)

    @field_validator(
        "allowed_guild_ids", "allowed_channel_ids", "memory_disabled_guild_ids", "memory_disabled_channel_ids",
        "auto_reply_channel_ids", mode="before",
    )
    @classmethod
    def _split_ids(cls, value: Any) -> Any:
        """Accept `123,456` (and spaces) from the environment, as admins naturally write it."""
        if isinstance(value, str):
            parts = [p for p in value.replace(";", ",").replace(" ", ",").split(",") if p]
            return frozenset(int(p) for p in parts)
        return value

    @field_validator("thinking_models", mode="before")
    @classmethod
    def _split_names(cls, value: Any) -> Any:
        """`qwen3:8b, deepseek-r1`: comma-separated, blanks around a name ignored."""
        if isinstance(value, str):
            return frozenset(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("allowed_chat_models", mode="before")
    @classmethod
    def _split_models(cls, value: Any) -> Any:
        """`gpt-4o-mini, gpt-4o`: comma-separated, in the order written (autocomplete shows them so), no repeats."""
        if isinstance(value, str):
            return tuple(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))
        return value

    @field_validator("dm_policy", mode="before")
    @classmethod
    def _lower_policy(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("shard_ids", mode="before")
    @classmethod
    def _split_shard_ids(cls, value: Any) -> Any:
        """`2,3` (or spaces) as a list in order, so a repeated id can be reported; nothing listed means unset."""
        if isinstance(value, str):
            parts = [p for p in value.replace(";", ",").replace(" ", ",").split(",") if p]
            return tuple(int(p) for p in parts) or None
        return value

    @field_validator("discord_token", "openai_api_key", "memory_encryption_key", mode="before")
    @classmethod
    def _strip_secret(cls, value: Any) -> Any:
        """A pasted token often brings a newline or spaces along; no token or key contains whitespace."""
        return value.strip() if isinstance(value, str) else value

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_level(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("memory_scope", mode="before")
    @classmethod
    def _lower_scope(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator(
        "openai_api_key", "openai_base_url", "memory_model", "command_sync_guild_id", "metrics_port",
        "chat_temperature", "database_url", "memory_lease_seconds", "shard_count", "memory_encryption_key",
        "embedding_model", "embedding_base_url", "embedding_api_key", "embedding_dimensions",
        mode="before",
    )
    @classmethod
    def _blank_is_unset(cls, value: Any) -> Any:
        """A blank value (also `KEY="  "` or an override) means "use the default", not "the empty string"."""
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("openai_base_url", "embedding_base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value

    @field_validator("database_url")
    @classmethod
    def _postgres_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith(("postgresql://", "postgres://")):
            raise ValueError("must start with postgresql:// (or postgres://)")
        return value

    @field_validator("memory_encryption_key")
    @classmethod
    def _master_key(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            from bot.storage.sealing import decode_master_key  # cryptography: only when a key is given

            decode_master_key(value.get_secret_value())
        return value

    @property
    def effective_memory_model(self) -> str:
        """The extraction model: MEMORY_MODEL, or CHAT_MODEL when unset."""
        return self.memory_model or self.chat_model

    @property
    def chat_models(self) -> tuple[str, ...]:
        """The chat models server admins may choose (`/bot-settings model`): CHAT_MODEL, then ALLOWED_CHAT_MODELS."""
        return tuple(dict.fromkeys((self.chat_model, *self.allowed_chat_models)))

    @property
    def effective_dm_policy(self) -> Literal["all", "members", "off"]:
        """Who may talk to the bot in DMs: DM_POLICY, or `off` when ALLOW_DMS is false."""
        return self.dm_policy if self.allow_dms else "off"

    @property
    def memory_dir(self) -> Path:
        return self.data_dir / "memory"

    @property
    def effective_embedding_base_url(self) -> str | None:
        """Where embeddings are asked for: EMBEDDING_BASE_URL, or OPENAI_BASE_URL when unset (None: OpenAI)."""
        return self.embedding_base_url or self.openai_base_url

    @property
    def embedding_endpoint(self) -> str | None:
        """Where the text to embed goes, when EMBEDDING_MODEL is set (OpenAI's API when no base URL is); else None."""
        if self.embedding_model is None:
            return None
        return self.effective_embedding_base_url or OPENAI_ENDPOINT

    def embedding_key_value(self) -> str:
        """EMBEDDING_API_KEY, or the chat endpoint's key when unset."""
        if self.embedding_api_key is not None and self.embedding_api_key.get_secret_value():
            return self.embedding_api_key.get_secret_value()
        return self.api_key_value()

    def api_key_value(self) -> str:
        """The key handed to the SDK; local servers accept any string, so a placeholder stands in when unset."""
        if self.openai_api_key is not None and self.openai_api_key.get_secret_value():
            return self.openai_api_key.get_secret_value()
        return "not-needed"


DEPRECATED_SETTINGS = {
    "allow_dms": "ALLOW_DMS is deprecated and will be removed: set DM_POLICY=off instead of ALLOW_DMS=false "
    "(ALLOW_DMS=true changes nothing); for now ALLOW_DMS=false still means DM_POLICY=off",
}
"""Settings still accepted under an old name, with the line the bot logs at start when one is set."""


def deprecation_lines(settings: Settings) -> list[str]:
    """One line for each deprecated setting the operator set, saying what to write instead."""
    return [line for name, line in DEPRECATED_SETTINGS.items() if name in settings.model_fields_set]


class SettingsError(Exception):
    """A configuration problem, phrased as one line an admin can act on (never containing a secret value)."""


OPENAI_ENDPOINT = "https://api.openai.com/v1"
"""Where the SDK sends requests when OPENAI_BASE_URL is unset."""
UNUSED_TOKEN = "placeholder-for-commands-that-never-connect-to-discord"  # noqa: S105 (not a secret)


def secret_names() -> frozenset[str]:
    """The settings whose values are never repeated in a message (the `SecretStr` ones)."""
    return frozenset(name for name, field in Settings.model_fields.items() if "SecretStr" in str(field.annotation))


def validation_problems(error: ValidationError) -> list[str]:
    """One phrase per bad setting in plain words (`bot.settings_words`): its environment name, what is allowed,
    and what was given, except for secrets."""
    secrets = secret_names()
    return [plain_problem(item, secret_names=secrets) for item in error.errors()]


def describe_validation_error(error: ValidationError) -> str:
    """One line naming each bad setting by its environment name, without echoing the values."""
    return "invalid configuration: " + "; ".join(validation_problems(error))


def describe_endpoint(url: str | None) -> str:
    """The LLM endpoint for messages: OPENAI_BASE_URL without any user name, password or query, or OpenAI's."""
    if url is None:
        return f"{OPENAI_ENDPOINT} (OpenAI)"
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(an unparsable OPENAI_BASE_URL)"
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _settings_with_defaults(overrides: dict[str, Any], failed: set[str]) -> Settings | None:
    """The settings with each field that failed validation at its default (the token at a placeholder), so the
    checks across settings can still report what else is wrong; None if that fails too."""
    patched = dict(overrides)
    for name in failed:
        field = Settings.model_fields.get(name)
        if field is not None:
            patched[name] = UNUSED_TOKEN if field.is_required() else field.get_default(call_default_factory=True)
    try:
        return Settings(**patched)
    except ValidationError:
        return None


def _cross_problems(settings: Settings, failed: set[str], *, discord: bool) -> list[str]:
    """What is wrong beyond each setting's own type and range, skipping checks of settings already reported."""
    problems = []
    if discord and "discord_token" not in failed:
        problem = discord_token_problem(settings.discord_token.get_secret_value().strip())
        if problem is not None:
            problems.append(problem)
    if not failed & {"openai_base_url", "openai_api_key"} and (
        settings.openai_base_url is None and settings.openai_api_key is None
    ):
        problems.append(
            "OPENAI_API_KEY is required for OpenAI (set OPENAI_BASE_URL to use a local server, which accepts any key)"
        )
    if not failed & {"memory_max_wait_seconds", "memory_debounce_seconds"} and (
        settings.memory_max_wait_seconds < settings.memory_debounce_seconds
    ):
        problems.append("MEMORY_MAX_WAIT_SECONDS must be at least MEMORY_DEBOUNCE_SECONDS")
    if not failed & {"shard_count", "shard_ids"} and (
        problem := shard_problem(settings.shard_count, settings.shard_ids)
    ) is not None:
        problems.append(problem)
    return problems


def _validated(overrides: dict[str, Any]) -> tuple[Settings | None, list[str], set[str]]:
    """The settings, the problems found in them and the names of the fields that failed. With failures, the
    settings hold each failed field at its default (None if even that fails), so the cross-checks still run."""
    try:
        return Settings(**overrides), [], set()
    except ValidationError as error:
        failed = {str(item["loc"][0]) for item in error.errors() if item["loc"]}
        return _settings_with_defaults(overrides, failed), validation_problems(error), failed


def load_settings(*, discord: bool = True, **overrides: Any) -> Settings:
    """Build the settings from the environment and `.env`; raise `SettingsError` with one readable line that names
    every problem at once (a missing token and a missing key are one fix, not two runs).

    `discord=False` (the console) needs no Discord token: a placeholder stands in unless one is given."""
    if not discord:
        overrides.setdefault("discord_token", UNUSED_TOKEN)
    settings, problems, failed = _validated(overrides)
    if settings is not None:
        problems += _cross_problems(settings, failed, discord=discord)
    if problems or settings is None:
        raise SettingsError("invalid configuration: " + "; ".join(problems))
    return settings


DATABASE_URL_EXAMPLE = "postgresql://USER:PASSWORD@HOST:5432/DATABASE"


def load_storage_settings() -> Settings:
    """The settings for the commands that work on the storage alone (`encrypt-existing`, `rotate-key`, and the
    database commands): DATA_DIR or DATABASE_URL and MEMORY_ENCRYPTION_KEY, not the Discord token or the LLM
    endpoint. Raises `SettingsError` with one readable line."""
    try:
        return Settings(discord_token=UNUSED_TOKEN)
    except ValidationError as error:
        raise SettingsError(describe_validation_error(error)) from None


def load_database_settings() -> Settings:
    """The settings for the database commands (`migrate`, `import-files`): they need DATABASE_URL, not the
    Discord token or the LLM endpoint, so an operator can prepare the database before configuring the rest.
    Raises `SettingsError` with one readable line."""
    settings = load_storage_settings()
    if settings.database_url is None:
        raise SettingsError(f"DATABASE_URL is not set: the PostgreSQL database to use ({DATABASE_URL_EXAMPLE})")
    return settings


def shard_problem(count: int | None, ids: tuple[int, ...] | None) -> str | None:
    """Why SHARD_IDS cannot be run with SHARD_COUNT, or None. Every process of one bot is given the same count
    and its own ids, so an id outside the count or listed twice is a slip worth stopping for."""
    if ids is None:
        return None
    if count is None:
        return "SHARD_IDS needs SHARD_COUNT, the total number of shards across all of the bot's processes"
    outside = [shard for shard in ids if not 0 <= shard < count]
    if outside:
        listed = ",".join(str(shard) for shard in outside)
        return f"SHARD_IDS lists {listed}, but with SHARD_COUNT={count} shard ids run from 0 to {count - 1}"
    repeated = sorted({shard for shard in ids if ids.count(shard) > 1})
    if repeated:
        listed = ",".join(str(shard) for shard in repeated)
        return f"SHARD_IDS lists {listed} more than once"
    return None
