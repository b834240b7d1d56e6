"""Attachment decoding and classification (the download and prompt paths are tested through the bot in
tests/cogs/test_chat_features.py)."""

from __future__ import annotations

import codecs

import pytest

from bot.chat.attachments import NOT_TEXT, ReadAttachments, Skipped, decode_text, image_type, is_text, user_content
from tests.helpers import make_attachment


@pytest.mark.parametrize(
    ("data", "text"),
    [
        ("plain ✓ utf-8".encode(), "plain ✓ utf-8"),
        (codecs.BOM_UTF8 + b"with a BOM", "with a BOM"),
        ("utf-16 text ✓".encode("utf-16"), "utf-16 text ✓"),
        ("Windows: caf\xe9 \u20ac".encode("cp1252"), "Windows: caf\xe9 \u20ac"),
        (b"", ""),
    ],
)
def test_text_is_decoded(data: bytes, text: str) -> None:
    assert decode_text(data) == text


@pytest.mark.parametrize("data", [b"\x00\x01\x02\x03binary", bytes(range(256)) * 4, b"\x89PNG\r\n\x1a\n\x00\x00"])
def test_binary_is_not_text(data: bytes) -> None:
    assert decode_text(data) is None


def test_kinds_come_from_the_content_type_or_the_extension() -> None:
    assert image_type(make_attachment("x.PNG", b"", None)) == "image/png"
    assert image_type(make_attachment("photo", b"", "image/jpeg")) == "image/jpeg"
    assert image_type(make_attachment("anim.gif", b"", "image/gif")) == "image/gif"
    assert image_type(make_attachment("x.bmp", b"", "image/bmp")) is None
    assert is_text(make_attachment("main.rs", b"", None))
    assert is_text(make_attachment("data", b"", "application/json"))
    assert is_text(make_attachment("README", b"", "text/plain; charset=utf-8"))
    assert not is_text(make_attachment("a.zip", b"", "application/zip"))


def test_the_content_is_a_string_without_images_and_parts_with_them() -> None:
    read = ReadAttachments(texts=[("a.md", "# hi")], skipped=[Skipped("b.bin", NOT_TEXT)])
    assert user_content("Alice: see", read) == (
        'Alice: see\n\n<attachment name="a.md">\n# hi\n</attachment>\n\n(attachments not read: b.bin (not a text file))'
    )
    read.images.append("data:image/png;base64,AAAA")
    content = user_content("Alice: see", read)
    assert isinstance(content, list)
    assert content[1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
