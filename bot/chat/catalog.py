"""What the endpoint offers (`GET /v1/models`), so a model it does not know is named with the ones it does.

The usual first failure on a local server is the default `CHAT_MODEL` (an OpenAI model name) answered with 404:
the line that says so lists what the server offers, so the fix is one copy and paste. The list is asked for with a
short timeout and no retries, at start and after a 404; a server that does not answer it (or lists nothing) only
costs the list, never the start. Some servers answer for models they do not list (aliases, routers), so a model
missing from the list is a warning at start, not a refusal.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import openai
from openai import AsyncOpenAI

log = logging.getLogger(__name__)

LIST_TIMEOUT_SECONDS = 5.0
SHOWN_MODELS = 15


async def offered_models(client: AsyncOpenAI, *, timeout: float = LIST_TIMEOUT_SECONDS) -> list[str] | None:
    """The model ids the endpoint lists, in its order, or None when it does not answer with a list."""
    try:
        page = await client.with_options(timeout=timeout, max_retries=0).models.list()
        ids = [model.id async for model in page]
    except (openai.OpenAIError, AttributeError, TypeError, ValueError) as error:
        log.debug("the endpoint's model list is not available: %s", type(error).__name__)
        return None
    return [model_id for model_id in ids if isinstance(model_id, str) and model_id] or None


def listing(offered: Sequence[str]) -> str:
    """The offered models as one short phrase (the first few, then how many more)."""
    shown = ", ".join(offered[:SHOWN_MODELS])
    more = len(offered) - SHOWN_MODELS
    return shown + (f" and {more} more" if more > 0 else "")


def unknown_model_line(setting: str, model: str, endpoint: str, offered: Sequence[str] | None) -> str:
    """One line: `setting`'s model is not one the endpoint knows, with what it offers when it said."""
    if not offered:
        return f"{setting}={model} is not a model {endpoint} knows (it does not list its models); check the name"
    return f"{setting}={model} is not offered by {endpoint}; it offers: {listing(offered)}. Set {setting} to one"


def missing_models(wanted: dict[str, str], offered: Sequence[str] | None) -> dict[str, str]:
    """The settings (name to model) whose model the endpoint's list lacks; none when it gave no list."""
    if not offered:
        return {}
    known = set(offered)
    return {setting: model for setting, model in wanted.items() if model not in known}


def configured_models(chat_model: str, memory_model: str | None) -> dict[str, str]:
    """The models the settings name, by setting: CHAT_MODEL, and MEMORY_MODEL when it names another one."""
    wanted = {"CHAT_MODEL": chat_model}
    if memory_model and memory_model != chat_model:
        wanted["MEMORY_MODEL"] = memory_model
    return wanted


async def start_check(client: AsyncOpenAI, wanted: dict[str, str], endpoint: str) -> list[str]:
    """The lines to show at start for the configured models (`configured_models`) the endpoint lacks."""
    offered = await offered_models(client)
    return [
        unknown_model_line(setting, model, endpoint, offered)
        for setting, model in missing_models(wanted, offered).items()
    ]
