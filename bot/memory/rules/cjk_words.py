"""Words of Chinese, Japanese and Korean text, for the forget gate (`bot.memory.rules.forgotten`): these scripts do
not put spaces between words, so "最近在学做陶艺" would otherwise be one word that no paraphrase ever repeats.

- Japanese (kana in the text): the runs of kanji and of katakana, the hiragana between them (particles, endings)
  left out: "週末に盆栽を育てている" -> 週末, 盆栽, 育.
- Chinese (Han characters and no kana): overlapping pairs of characters, without the pairs of two of the most
  common characters, which say nothing about a fact ("最近", "在学"): "最近在学做陶艺" -> 做陶, 陶艺.
- Korean: each word without the particle at its end ("도자기를" -> 도자기).
Single characters are left out everywhere. Pure functions of a string.
"""

from __future__ import annotations

import re

_HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HIRAGANA = r"\u3040-\u309f"
_KATAKANA = r"\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f"
_HANGUL = r"\uac00-\ud7af"
CJK = re.compile(f"[{_HAN}{_HIRAGANA}{_KATAKANA}{_HANGUL}]")
_KANA = re.compile(f"[{_HIRAGANA}{_KATAKANA}]")
_RUNS = re.compile(f"[{_HAN}々]+|[{_KATAKANA}ー]+|[{_HANGUL}]+|[^{_HAN}{_HIRAGANA}{_KATAKANA}{_HANGUL}]+")

# Chinese characters of grammar and of the most general verbs and adverbs: a pair of two of them ("最近", "在学",
# "正在") says nothing about what a fact is about. Nouns are not here, so "北京" or "家人" stay words.
_COMMON_HAN = frozenset(
    "的了在是我你他她它们这那哪有没和与及或但而就也都很太更最还再又才只已经曾刚正将要会能可以想得着过被把给让从向"
    "对为于以个些么什怎样多少几每各某其此之所做干弄搞学习开始觉喜欢爱近常总一二三两不吗呢吧啊呀哦嗯说看去来到用"
)
# Korean particles a noun carries ("를", "에서", "하고"), longest first.
_PARTICLES = (
    "에서는", "으로는", "에게서", "이라고", "에서", "으로", "에게", "한테", "까지", "부터", "처럼", "보다", "하고",
    "이랑", "라고", "은", "는", "이", "가", "을", "를", "에", "의", "도", "와", "과", "로", "만", "랑",
)


def has_cjk(word: str) -> bool:
    return CJK.search(word) is not None


def cjk_words(word: str, *, japanese: bool) -> list[str]:
    """The words of one space-free run of text (see the module); `japanese` when its text has kana."""
    found: list[str] = []
    for run in _RUNS.findall(word):  # hiragana match no run: they are left out
        if re.fullmatch(f"[{_HAN}々]+", run):
            found += _han_words(run, japanese=japanese)
        elif re.fullmatch(f"[{_HANGUL}]+", run):
            found.append(_without_particle(run))
        else:
            found.append(run)
    return [word for word in found if len(word) >= 2]


def is_japanese(text: str) -> bool:
    return _KANA.search(text) is not None


def _han_words(run: str, *, japanese: bool) -> list[str]:
    """A run of kanji between kana is a word; Chinese text gives its pairs of characters, the common ones left out."""
    if japanese:
        return [run]
    pairs = [run] if len(run) <= 2 else [run[i : i + 2] for i in range(len(run) - 1)]
    return [pair for pair in pairs if not all(char in _COMMON_HAN for char in pair)]


def _without_particle(word: str) -> str:
    for particle in _PARTICLES:
        if word.endswith(particle) and len(word) - len(particle) >= 2:
            return word[: -len(particle)]
    return word
