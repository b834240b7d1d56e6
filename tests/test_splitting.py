"""Reply splitting (bot/chat/splitting.py): no chunk over the limit, fences balanced, nothing lost or duplicated."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bot.chat.splitting import DISCORD_LIMIT, split_message

# A fence line, as CommonMark opens one: optional spaces, three or more backticks, an info string without backticks.
FENCE_LINE = re.compile(r"[ \t]*```+[^`\n]*")


def fence_lines(chunk: str) -> int:
    return sum(1 for line in chunk.split("\n") if FENCE_LINE.fullmatch(line))


def normalised(text: str) -> str:
    """The text with fence lines dropped and all whitespace removed: what a reader would see, minus layout."""
    kept = [line for line in text.split("\n") if not FENCE_LINE.fullmatch(line)]
    return re.sub(r"\s+", "", "\n".join(kept))


def has_empty_block(text: str) -> bool:
    """A fence that opens a block followed, after nothing but blank lines, by the fence that closes it."""
    inside = empty = False
    for line in text.split("\n"):
        if FENCE_LINE.fullmatch(line):
            if inside and empty:
                return True
            inside, empty = not inside, True
        elif line.strip():
            empty = False
    return inside and empty  # an opening fence with nothing after it is an empty block too


def rejoined(chunks: list[str]) -> str:
    return normalised("\n".join(chunks))


# --- generators: Discord-ish markdown -----------------------------------------------------------------------

words = st.text(
    alphabet=st.sampled_from(
        list("abcdefghijklmnopqrstuvwxyz") + list("ABC.,!?;:-_*#>") + list("日本語中文字。！？") + ["😀", "🎉", "é"]
    ),
    min_size=1,
    max_size=12,
)
long_word = st.integers(min_value=50, max_value=2600).map(lambda n: "x" * n)
backticks = st.sampled_from(["`code`", "``", "```", "```python", "````"])  # inline, mid-line: not fences
separators = st.sampled_from([" ", " ", " ", "\n", "\n\n", "\t", ". ", "。", "\n    "])
prose = st.lists(
    st.tuples(st.one_of(words, words, words, words, long_word, backticks), separators), max_size=300
).map(lambda parts: "".join(word + sep for word, sep in parts))
languages = st.sampled_from(["", "python", "js", "c++", "diff", " spaced info", "x" * 1500])
indents = st.sampled_from(["", "", "  "])
code_block = st.tuples(indents, languages, prose).map(lambda p: f"{p[0]}```{p[1]}\n{p[2]}\n{p[0]}```")
markdown = st.lists(st.one_of(prose, prose, code_block), min_size=1, max_size=6).map("\n\n".join)
any_text = st.one_of(markdown, st.text(max_size=5000))


def check_properties(text: str, limit: int) -> list[str]:
    chunks = split_message(text, limit)
    for chunk in chunks:
        assert len(chunk) <= limit
        assert chunk.strip(), "no empty messages"
    if "```" not in text:
        assert all(fence_lines(chunk) == 0 for chunk in chunks), "no fences invented"
    if fence_lines(text) % 2 == 0:
        for chunk in chunks:
            assert fence_lines(chunk) % 2 == 0, f"unbalanced fences in {chunk!r}"
    assert rejoined(chunks) == normalised(text), "text lost or duplicated"
    if not has_empty_block(text):
        assert not any(has_empty_block(chunk) for chunk in chunks), "an empty code block was sent"
    return chunks


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=any_text)
@example(text="```python\n" + "print('hello')\n" * 400 + "```")
@example(text="x" * 4500)
@example(text="日本語の文章です。" * 600)
@example(text="😀" * 2500)
@example(text="```\n" + "a" * 3000 + "\n```")
@example(text="```py\n" + "\n" * 3000 + "x\n```")
def test_properties_at_the_discord_limit(text: str) -> None:
    check_properties(text, DISCORD_LIMIT)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=any_text, limit=st.integers(min_value=64, max_value=2500))
@example(text="```python\n" + "x = 1\n" * 100 + "```", limit=64)
@example(text="```" + "a" * 100 + "\nbody\n```", limit=64)
def test_properties_at_any_limit(text: str, limit: int) -> None:
    check_properties(text, limit)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.text(alphabet=st.sampled_from(list("```  \n\n\t.a。x")), max_size=3000),
    limit=st.integers(min_value=64, max_value=300),
)
def test_properties_with_backticks_everywhere(text: str, limit: int) -> None:
    """Fences, inline backticks and partial fences packed densely, at small limits, where every cut is near one."""
    check_properties(text, limit)


@given(text=st.text(min_size=1, max_size=DISCORD_LIMIT).filter(lambda t: t.strip() == t and t))
def test_short_text_is_one_unchanged_chunk(text: str) -> None:
    assert split_message(text) == [text]


def test_empty_and_blank_text_give_no_chunks() -> None:
    assert split_message("") == []
    assert split_message(" \n\n ") == []


def test_limit_too_small_is_refused() -> None:
    with pytest.raises(ValueError, match="limit"):
        split_message("hello", 10)


# --- where the cuts go --------------------------------------------------------------------------------------


def test_cuts_at_a_paragraph_boundary_first() -> None:
    first = "First paragraph. " * 60  # ~1,000 chars with sentences and line breaks available
    second = "Second paragraph line one.\nSecond paragraph line two. " * 20
    chunks = split_message(first.strip() + "\n\n" + second.strip())
    assert chunks[0] == first.strip()
    assert chunks[1].startswith("Second paragraph line one.")


def test_then_at_a_line_boundary() -> None:
    lines = [f"line {i:03d} of a long answer without paragraph breaks. more words here" for i in range(60)]
    chunks = split_message("\n".join(lines))
    assert len(chunks) >= 2
    for chunk in chunks:
        assert chunk.split("\n")[-1] in lines, "every chunk ends with a whole line"
        assert chunk.split("\n")[0] in lines, "every chunk starts with a whole line"


def test_then_at_a_sentence_end() -> None:
    sentences = [f"This is sentence number {i} and it goes on for a while." for i in range(80)]
    chunks = split_message(" ".join(sentences))
    assert len(chunks) >= 2
    for chunk in chunks[:-1]:
        assert chunk.endswith("."), chunk[-40:]
    assert all(chunk.startswith("This is sentence") for chunk in chunks)


def test_cjk_sentences_cut_after_the_full_stop() -> None:
    text = "这是一个很长的句子，用来测试没有空格的中文文本如何分割。" * 150
    chunks = split_message(text)
    assert len(chunks) >= 2
    assert all(chunk.endswith("。") for chunk in chunks)
    assert "".join(chunks) == text


def test_a_long_word_is_cut_only_as_a_last_resort() -> None:
    text = "x" * 4500
    chunks = split_message(text)
    assert [len(c) for c in chunks] == [len(c) for c in chunks if len(c) <= DISCORD_LIMIT]
    assert "".join(chunks) == text


def test_a_long_code_block_is_closed_and_reopened_with_its_language() -> None:
    body = "\n".join(f"    value_{i} = compute({i})  # step {i}" for i in range(120))
    text = f"Here is the code:\n\n```python\n{body}\n```\n\nThat's all."
    assert len(text) > 4500
    chunks = split_message(text)
    assert len(chunks) >= 3
    for chunk in chunks:
        assert len(chunk) <= DISCORD_LIMIT
        assert fence_lines(chunk) % 2 == 0
    code_chunks = [c for c in chunks if "value_" in c]
    for chunk in code_chunks[1:]:
        assert chunk.startswith("```python\n"), "reopened with its language tag"
    for chunk in code_chunks[:-1]:
        assert chunk.endswith("\n```"), "closed at the end of the message"
    assert rejoined(chunks) == normalised(text)


def test_a_cut_outside_a_code_block_is_preferred() -> None:
    """The later line breaks are inside the code block; the earlier paragraph break outside it wins."""
    intro = "Intro sentence that explains things. " * 25  # ~925 chars
    code = "```js\n" + "\n".join(f"console.log({i});" for i in range(90)) + "\n```"  # ~1,500 chars
    text = intro.strip() + "\n\n" + code + "\n\nAfter the code."
    chunks = split_message(text)
    assert chunks[0] == intro.strip()
    assert chunks[1].startswith("```js\n") and chunks[1].rstrip().endswith("After the code.")
    assert all(fence_lines(chunk) % 2 == 0 for chunk in chunks)


def test_prose_between_two_code_blocks_is_not_mistaken_for_code() -> None:
    block = "```\n" + "x\n" * 300 + "```"
    text = f"{block}\n\n" + "Between the blocks. " * 40 + f"\n\n{block}"
    chunks = split_message(text)
    for chunk in chunks:
        assert fence_lines(chunk) % 2 == 0
        if "Between the blocks" in chunk:
            assert not chunk.startswith("```\nBetween"), "prose after a closed block was wrapped in a fence"
    assert rejoined(chunks) == normalised(text)


def test_code_indentation_survives_a_cut() -> None:
    body = "\n".join(f"def f{i}():\n    if x:\n        return {i}" for i in range(150))
    text = f"```python\n{body}\n```"
    chunks = split_message(text)
    assert len(chunks) >= 3
    original_lines = set(body.split("\n"))
    for chunk in chunks:
        inner = chunk.split("\n")[1:-1]  # between the fences
        assert set(inner) <= original_lines, "a code line lost its indentation"
    assert [line for c in chunks for line in c.split("\n")[1:-1]] == body.split("\n")


def test_no_message_is_an_empty_code_block() -> None:
    """Cuts right after an opening fence or right before a closing one would send an empty block."""
    code = "```\n" + "\n".join("y" * 60 for _ in range(30)) + "\n```"
    for filler in range(0, 300, 7):
        text = "z" * filler + "\n\n" + code + "\n\nafter" * 3
        for limit in range(64, 2100, 13):
            chunks = split_message(text, limit)
            assert not any(has_empty_block(chunk) for chunk in chunks), (filler, limit)


def test_triple_backticks_inside_a_line_never_become_a_fence() -> None:
    text = "To start a block type ```python on its own line, then your code. " + "word " * 800
    for limit in (64, 100, 500, DISCORD_LIMIT):
        chunks = split_message(text, limit)
        assert all(fence_lines(chunk) == 0 for chunk in chunks)
        assert rejoined(chunks) == normalised(text)
