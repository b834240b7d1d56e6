"""Attachments of the message being answered: images for vision models, text files read into the prompt.

Images (png, jpeg, webp, gif) are downloaded and sent as base64 data URLs: local servers (llama.cpp, Ollama,
LM Studio, vLLM) cannot fetch Discord's CDN links, and the links expire. Text files (by extension or a text content
type) are decoded as UTF-8 (a BOM is honoured), or as Windows-1252 when they are not UTF-8 but look like text;
binary files are skipped. Sizes are checked before downloading. What is skipped is said in a short note, to the
model (in English) and to the user (in their language). Nothing here is ever stored: attachments reach the prompt
and nothing else.
"""

from __future__ import annotations

import base64
import codecs
import logging
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Protocol

from openai.types.chat import ChatCompletionContentPartParam

from bot.i18n.speech import ENGLISH_SPEECH, N_, Np_, Speech

log = logging.getLogger(__name__)

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp",
               ".gif": "image/gif"}
_TEXT_EXTENSIONS_LINE = (
    ".txt .md .markdown .rst .log .csv .tsv .json .jsonl .yaml .yml .toml .ini .cfg .conf .xml .html .htm .css "
    ".py .pyi .js .mjs .ts .tsx .jsx .java .kt .go .rs .rb .php .swift .cs .c .h .cc .cpp .hpp .m .lua .r .jl "
    ".sh .bash .zsh .ps1 .bat .sql .diff .patch .tex .dockerfile .gradle .vue .svelte .scala .hs .ex .exs .dart"
)
TEXT_EXTENSIONS = frozenset(_TEXT_EXTENSIONS_LINE.split(" "))
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_MAX_CONTROL_SHARE = 0.05


class AttachmentLike(Protocol):
    """What is used of a `discord.Attachment`."""

    filename: str
    size: int
    content_type: str | None

    async def read(self) -> bytes: ...


@dataclass(frozen=True, slots=True)
class AttachmentLimits:
    vision: bool
    max_images: int
    max_image_bytes: int
    max_text_files: int
    max_text_bytes: int


TOO_MANY_IMAGES = Np_("{name} (more than {count} image)", "{name} (more than {count} images)")
TOO_MANY_FILES = Np_("{name} (more than {count} file)", "{name} (more than {count} files)")
TOO_BIG = N_("{name} (over {size})")
NOT_DOWNLOADED = N_("{name} (could not be downloaded)")
NOT_TEXT = N_("{name} (not a text file)")
NEITHER = N_("{name} (not a text file or an image)")


@dataclass(frozen=True, slots=True)
class Skipped:
    """One attachment left out, and why: `why` is one of the reasons above (a pair: singular and plural of
    `count`); `size` is a limit in bytes."""

    name: str
    why: str | tuple[str, str]
    count: int = 0
    size: int = 0

    def words(self, speech: Speech = ENGLISH_SPEECH) -> str:
        if isinstance(self.why, tuple):
            return speech.trn(*self.why, self.count, name=self.name)
        return speech.tr(self.why, name=self.name, size=_size(self.size, speech))

    def __str__(self) -> str:
        """In English: what the model is told."""
        return self.words()


@dataclass(slots=True)
class ReadAttachments:
    """Image data URLs, text files (name, text), and one short phrase per attachment left out."""

    images: list[str] = field(default_factory=list)
    texts: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    unseen_images: list[str] = field(default_factory=list)  # images while vision is off: named to the model

    def note(self, speech: Speech = ENGLISH_SPEECH) -> str:
        """One line for the user about what was left out ("" when nothing was), in their language."""
        if not self.skipped:
            return ""
        return speech.tr("Not read: {attachments}.", attachments="; ".join(item.words(speech) for item in self.skipped))


def _size(n_bytes: int, speech: Speech = ENGLISH_SPEECH) -> str:
    if n_bytes >= 1_000_000:
        return speech.tr("{size} MB", size=speech.number(n_bytes / 1_000_000))
    return speech.tr("{size} KB", size=speech.number(n_bytes / 1000))


def image_type(attachment: AttachmentLike) -> str | None:
    content_type = (attachment.content_type or "").split(";")[0].strip().lower()
    if content_type in IMAGE_TYPES.values():
        return content_type
    return IMAGE_TYPES.get(PurePath(attachment.filename).suffix.lower())


def is_text(attachment: AttachmentLike) -> bool:
    content_type = (attachment.content_type or "").split(";")[0].strip().lower()
    suffix = PurePath(attachment.filename).suffix.lower()
    return suffix in TEXT_EXTENSIONS or content_type.startswith("text/") or content_type == "application/json"


def decode_text(data: bytes) -> str | None:
    """The text of a file, or None when it is not text (binary, or garbled past repair)."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding)
            except UnicodeDecodeError:
                return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        if b"\x00" in data:
            return None
        text = data.decode("cp1252", errors="replace")
    if "\x00" in text:
        return None
    controls = sum(1 for ch in text if ord(ch) < 32 and ch not in "\n\r\t\f")
    if text and controls / len(text) > _MAX_CONTROL_SHARE:
        return None
    return text


async def _download(attachment: AttachmentLike) -> bytes | None:
    try:
        return await attachment.read()
    except Exception as error:  # noqa: BLE001 -- an HTTP or network error: the reply goes on without it
        log.warning("could not download an attachment (%s)", type(error).__name__)
        return None


async def _download_within(attachment: AttachmentLike, max_bytes: int) -> bytes | None:
    """The attachment's bytes, or None when they could not be downloaded or came out larger than `max_bytes`."""
    data = await _download(attachment)
    return None if data is None or len(data) > max_bytes else data


async def _read_image(attachment: AttachmentLike, kind: str, limits: AttachmentLimits, result: ReadAttachments) -> None:
    """Add one image to `result`: as a data URL, as a name the model is told of (vision off), or as skipped."""
    name = attachment.filename
    if not limits.vision:
        result.unseen_images.append(name)
    elif len(result.images) >= limits.max_images:
        result.skipped.append(Skipped(name, TOO_MANY_IMAGES, count=limits.max_images))
    elif attachment.size > limits.max_image_bytes:
        result.skipped.append(Skipped(name, TOO_BIG, size=limits.max_image_bytes))
    elif (data := await _download_within(attachment, limits.max_image_bytes)) is None:
        result.skipped.append(Skipped(name, NOT_DOWNLOADED))
    else:
        result.images.append(f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}")


async def _read_text_file(attachment: AttachmentLike, limits: AttachmentLimits, result: ReadAttachments) -> None:
    """Add one text file to `result`: decoded, or as skipped with the reason."""
    name = attachment.filename
    if len(result.texts) >= limits.max_text_files:
        result.skipped.append(Skipped(name, TOO_MANY_FILES, count=limits.max_text_files))
    elif attachment.size > limits.max_text_bytes:
        result.skipped.append(Skipped(name, TOO_BIG, size=limits.max_text_bytes))
    elif (data := await _download_within(attachment, limits.max_text_bytes)) is None:
        result.skipped.append(Skipped(name, NOT_DOWNLOADED))
    elif (text := decode_text(data)) is None:
        result.skipped.append(Skipped(name, NOT_TEXT))
    else:
        result.texts.append((name, text))


async def read_attachments(attachments: list[Any], limits: AttachmentLimits) -> ReadAttachments:
    """Download and decode what fits the limits, in order; say what was left out and why."""
    result = ReadAttachments()
    for attachment in attachments:
        kind = image_type(attachment)
        if kind is not None:
            await _read_image(attachment, kind, limits, result)
        elif is_text(attachment):
            await _read_text_file(attachment, limits, result)
        else:
            result.skipped.append(Skipped(attachment.filename, NEITHER))
    return result


def user_content(text: str, read: ReadAttachments) -> str | list[ChatCompletionContentPartParam]:
    """The current message's content for the model: its text, the text files quoted after it, a line naming what
    was attached but not readable, and the images as parts (a plain string when there are none)."""
    parts = [text]
    for name, body in read.texts:
        parts.append(f'<attachment name="{name}">\n{body}\n</attachment>')
    if read.unseen_images:
        parts.append(f"(attached images you cannot see: {', '.join(read.unseen_images)})")
    if read.skipped:
        parts.append(f"(attachments not read: {'; '.join(str(item) for item in read.skipped)})")
    combined = "\n\n".join(parts)
    if not read.images:
        return combined
    content: list[ChatCompletionContentPartParam] = [{"type": "text", "text": combined}]
    content.extend({"type": "image_url", "image_url": {"url": url}} for url in read.images)
    return content
