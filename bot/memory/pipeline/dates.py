"""Dates in what users say: relative time words resolved in code against the day they were said.

"My exam is next Friday" is true for a week; stored as words, it misleads every reply after that. So a fact's (and a
summary's) relative time words are replaced with the date they stand for, counted from the day the message was sent,
not the day it was extracted, and the fact keeps that date as its `eventDate` (ISO 8601: a day `2024-06-14`, a week
`2024-W24`, a month `2024-06` or a year `2024`). Models get date arithmetic wrong, so it is done here; a date the
model wrote is used for words this module does not read (English, Chinese and Japanese are read) and to pick between
the two readings of words whose day the tense decides.

Conventions, since people use these words differently:
- "next Friday" is the Friday of next week (weeks start on Monday); "this Friday" the first Friday on or after the
  day it was said; "on Friday" and "coming Friday" the first one after it; "last Friday" the last one before it.
  In a sentence in the past tense, "this Friday" is the Friday of this week (if not after the day it was said) and
  "on Friday" the last Friday before it. "Fridays", "every Friday" are habits, not dates, and are left alone.
- "in two weeks" and "three days ago" are days; "in three months", "last month" and "in May" months; "next year" a
  year; "next week" a week; "this weekend" its Saturday.
- Days are UTC days: a message sent late in the evening far west of UTC counts from the next day. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Literal

Precision = Literal["day", "week", "month", "year"]
Style = Literal["zh", "ja"]

_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "a couple of": 2, "couple of": 2, "three": 3, "four": 4,
                 "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_CJK_DIGITS = {"一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_DAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_JA_DAYS = {"月": 0, "火": 1, "水": 2, "木": 3, "金": 4, "土": 5, "日": 6}
# Words after which a date reads without our own "on" / "in": "until 2023", "since May 2024".
_BARE_AFTER = frozenset(
    {"by", "until", "till", "since", "from", "before", "after", "through", "around", "of", "during", "starting"}
)
_SWALLOWED = frozenset({"on", "in"})  # "on next Friday": the "on" is ours to write
# Words that put a sentence in the past, for "on Friday" (went on Friday / has an exam on Friday); a fact that opens
# with a past participle ("Moved ...", "Traded ...") is in the past too.
_PAST = re.compile(
    r"\b(?:was|were|had|did|went|got|came|met|saw|left|took|made|ran|won|lost|bought|sold|moved|started|"
    r"finished|passed|failed|visited|attended|celebrated|adopted|adopting|married|graduated|quit|joined|broke|"
    r"spent|gave|found|began|ended|switched|signed|flew|drove|arrived|returned|traded|used|since|ago)\b",
    re.IGNORECASE,
)
_OPENING_PARTICIPLE = re.compile(r"\s*[A-Za-z]{3,}ed\b")


def _in_the_past(text: str) -> bool:
    return bool(_PAST.search(text) or _OPENING_PARTICIPLE.match(text))


@dataclass(frozen=True, slots=True)
class EventDate:
    """A point in time at some precision; `value` is its ISO 8601 form."""

    start: date  # the day, the Monday of the week, the first of the month or of the year
    precision: Precision

    @property
    def value(self) -> str:
        if self.precision == "day":
            return self.start.isoformat()
        if self.precision == "week":
            year, week, _ = self.start.isocalendar()
            return f"{year}-W{week:02d}"
        if self.precision == "month":
            return f"{self.start.year:04d}-{self.start.month:02d}"
        return f"{self.start.year:04d}"


@dataclass(frozen=True, slots=True)
class Found:
    """One relative time expression in a text: where it is, what it means, and the words that replace it. `other`
    is its reading in the other tense, for the words whose day the tense decides ("on Friday")."""

    start: int
    end: int
    when: EventDate
    replacement: str
    other: Found | None = None


_DAYS_IN = {"day": 1, "week": 7, "fortnight": 14}

# --- arithmetic --------------------------------------------------------------------------------------------


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _weekday(said: date, weekday: int, how: str, past: bool) -> date:
    if how == "next":
        return _monday(said) + timedelta(days=7 + weekday)
    if how == "this" and past and weekday <= said.weekday():
        return _monday(said) + timedelta(days=weekday)  # "started this Monday": the Monday of this week
    if how in {"last", "past"} or (how in {"on", "this"} and past):
        return said - timedelta(days=(said.weekday() - weekday - 1) % 7 + 1)
    ahead = (weekday - said.weekday()) % 7
    if ahead == 0 and how != "this":
        ahead = 7
    return said + timedelta(days=ahead)


def _shift(said: date, amount: int, unit: str) -> EventDate:
    unit = unit.rstrip("s")
    if unit in _DAYS_IN:
        return EventDate(said + timedelta(days=amount * _DAYS_IN[unit]), "day")
    if unit == "month":
        return EventDate(_add_months(said, amount), "month")
    return EventDate(date(said.year + amount, 1, 1), "year")


def _span(said: date, offset: int, unit: str) -> EventDate:
    """This (0), next (1) or last (-1) week, weekend, month or year."""
    if unit == "week":
        return EventDate(_monday(said) + timedelta(days=7 * offset), "week")
    if unit == "weekend":
        return EventDate(_monday(said) + timedelta(days=7 * offset + 5), "day")
    if unit == "month":
        return EventDate(_add_months(said, offset), "month")
    return EventDate(date(said.year + offset, 1, 1), "year")


def _named_month(said: date, month: int, how: str) -> EventDate:
    year = said.year
    if how == "next" and month <= said.month:
        year += 1
    elif how == "last" and month >= said.month:
        year -= 1
    return EventDate(date(year, month, 1), "month")


def _number(text: str) -> int:
    """A count written in digits, in English words or in Chinese numerals (up to 99)."""
    words = " ".join(text.lower().split())
    if words.isdigit() or words in _NUMBER_WORDS:
        return int(words) if words.isdigit() else _NUMBER_WORDS[words]
    tens, ten, ones = words.partition("十")
    return (_CJK_DIGITS.get(tens, 1) * 10 if ten else 0) + _CJK_DIGITS.get(ones if ten else tens, 0)


# --- English -------------------------------------------------------------------------------------------------

_DOW = "|".join(_DAYS)
_MONTH = "|".join(_MONTHS)
_CAPITAL_MONTH = "|".join(name.capitalize() for name in _MONTHS)  # "in May", never "in may"
_NUM = r"\d{1,3}|a\s+couple\s+of|couple\s+of|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
_UNIT = r"days?|weeks?|months?|years?|fortnights?"
_NOT_POSSESSIVE = r"(?!['’]s\b)"
_EN = re.compile(
    r"\b(?:"
    r"(?P<plus2>(?:the\s+)?day\s+after\s+tomorrow)"
    r"|(?P<minus2>(?:the\s+)?day\s+before\s+yesterday)"
    r"|(?P<after_next>(?:the\s+)?(?P<an_unit>week|month|year)\s+after\s+next)"
    r"|(?P<today>today|tonight|this\s+(?:morning|afternoon|evening))"
    r"|(?P<tomorrow>tomorrow|tmrw)(?:\s+(?:morning|afternoon|evening|night))?"
    r"|(?P<yesterday>yesterday(?:\s+(?:morning|afternoon|evening))?|last\s+night)"
    rf"|(?P<dow_how>next|last|this\s+coming|this\s+past|this|coming|on)\s+(?P<dow>{_DOW})"
    r"(?!s\b|\s+(?:nights|mornings|afternoons|evenings)\b|\s+of\s+(?:the|every|each)\b)"
    rf"|(?P<dow_nw>{_DOW})\s+next\s+week"
    rf"|(?:in|within)\s+(?P<in_n>{_NUM})\s+(?P<in_unit>{_UNIT})(?:['’]?s?\s+time)?(?!\s+or\b)"
    rf"|(?P<fn_n>{_NUM})\s+(?P<fn_unit>{_UNIT})\s+from\s+(?:now|today)"
    rf"|(?P<ago_n>{_NUM})\s+(?P<ago_unit>{_UNIT})\s+ago"
    r"|(?P<span_how>next|last|this\s+past|this|past)\s+(?P<span>week|weekend|month|year)"
    rf"|(?P<m_how>next|last|this)\s+(?P<month>{_MONTH})"
    rf"|in\s+(?-i:(?P<in_month>{_CAPITAL_MONTH}))(?![\s,]+\d)"
    rf")\b{_NOT_POSSESSIVE}(?!\s+of\b)",
    re.IGNORECASE,
)


_Reading = Callable[[re.Match[str], date, bool], EventDate]


def _days_away(days: int) -> _Reading:
    """Reads a fixed day relative to the day said ("tomorrow": 1)."""

    def read(match: re.Match[str], said: date, past: bool) -> EventDate:
        return EventDate(said + timedelta(days=days), "day")

    return read


def _after_next(match: re.Match[str], said: date, past: bool) -> EventDate:
    return _span(said, 2, match.group("an_unit").lower())


def _named_weekday(match: re.Match[str], said: date, past: bool) -> EventDate:
    how = " ".join(match.group("dow_how").lower().split())
    how = {"this coming": "coming", "this past": "last"}.get(how, how)
    return EventDate(_weekday(said, _DAYS.index(match.group("dow").lower()), how, past), "day")


def _weekday_next_week(match: re.Match[str], said: date, past: bool) -> EventDate:
    return EventDate(_weekday(said, _DAYS.index(match.group("dow_nw").lower()), "next", past), "day")


def _counted(prefix: str, sign: int) -> _Reading:
    """Reads "in two weeks" (`in`), "two weeks from now" (`fn`) or "two weeks ago" (`ago`, sign -1)."""

    def read(match: re.Match[str], said: date, past: bool) -> EventDate:
        return _shift(said, sign * _number(match.group(f"{prefix}_n")), match.group(f"{prefix}_unit").lower())

    return read


def _relative_span(match: re.Match[str], said: date, past: bool) -> EventDate:
    how = " ".join(match.group("span_how").lower().split())
    offset = {"next": 1, "this": 0}.get(how, -1)
    return _span(said, offset, match.group("span").lower())


def _relative_month(match: re.Match[str], said: date, past: bool) -> EventDate:
    return _named_month(said, _MONTHS.index(match.group("month").lower()) + 1, match.group("m_how").lower())


def _bare_month(match: re.Match[str], said: date, past: bool) -> EventDate:
    """A month named alone, by the tense: "moved in January" is the last one, "starts in September" the next."""
    month = _MONTHS.index(match.group("in_month").lower()) + 1
    year = said.year
    if month != said.month and (month > said.month) == past:
        year += -1 if past else 1
    return EventDate(date(year, month, 1), "month")


# Each alternative of `_EN` by the group that names it, in the pattern's order, with how to read its date.
_EN_READINGS: tuple[tuple[str, _Reading], ...] = (
    ("plus2", _days_away(2)),
    ("minus2", _days_away(-2)),
    ("after_next", _after_next),
    ("today", _days_away(0)),
    ("tomorrow", _days_away(1)),
    ("yesterday", _days_away(-1)),
    ("dow", _named_weekday),
    ("dow_nw", _weekday_next_week),
    ("in_n", _counted("in", 1)),
    ("fn_n", _counted("fn", 1)),
    ("ago_n", _counted("ago", -1)),
    ("span", _relative_span),
    ("month", _relative_month),
    ("in_month", _bare_month),
)


def _en_value(match: re.Match[str], said: date, past: bool) -> EventDate | None:
    """The date an English expression stands for, read by the alternative of `_EN` it matched."""
    for group, read in _EN_READINGS:
        if match.group(group):
            return read(match, said, past)
    return None


def _en_phrase(when: EventDate, weekend: bool) -> tuple[str, str]:
    """(preposition, words) for a date in an English sentence."""
    if weekend:
        return "on", f"the weekend of {when.value}"
    if when.precision == "day":
        return "on", when.value
    if when.precision == "week":
        return "in", f"the week of {when.start.isoformat()}"
    if when.precision == "month":
        return "in", f"{_MONTHS[when.start.month - 1].capitalize()} {when.start.year}"
    return "in", when.value


def _previous_word(text: str, start: int) -> tuple[int, str]:
    """(position, lower-cased word) of the word before `start`, separated from it by spaces; (start, "") if none."""
    end = len(text[:start].rstrip())
    if end == start:
        return start, ""
    begin = end
    while begin > 0 and (text[begin - 1].isalnum() or text[begin - 1] == "_"):
        begin -= 1
    return begin, text[begin:end].lower()


# Every English expression holds one of these words: texts without any (most facts) skip the big pattern.
_EN_WORDS = frozenset(
    {*_DAYS, *_MONTHS, "today", "tonight", "tomorrow", "tmrw", "yesterday", "night", "morning", "afternoon",
     "evening", "day", "days", "week", "weeks", "weekend", "month", "months", "year", "years", "fortnight",
     "fortnights"}
)
_WORD = re.compile(r"[a-z]+")


def _english(text: str, said: date) -> list[Found]:
    if _EN_WORDS.isdisjoint(_WORD.findall(text.lower())):
        return []
    past = _in_the_past(text)
    found = []
    for match in _EN.finditer(text):
        position, word = _previous_word(text, match.start())
        if word in {"every", "each", "other", "the"}:
            continue  # a habit ("every Friday") or a duration ("the last year")
        when = _en_value(match, said, past)
        if when is None:
            continue
        start = position if word in _SWALLOWED else match.start()  # "on next Friday" -> "on 2024-06-14"
        weekend = (match.group("span") or "").lower() == "weekend"
        first = not text[:start].strip() or text[:start].rstrip()[-1] in ".!?"  # a sentence starts with it
        other = None
        on_or_this = bool(match.group("dow")) and match.group("dow_how").lower() in {"on", "this"}
        ambiguous = on_or_this or bool(match.group("in_month"))
        if ambiguous and (flipped := _en_value(match, said, not past)) is not None and flipped != when:
            other = Found(start, match.end(), flipped, _en_replacement(flipped, word, weekend, first))
        found.append(Found(start, match.end(), when, _en_replacement(when, word, weekend, first), other))
    return found


def _en_replacement(when: EventDate, before: str, weekend: bool, first: bool) -> str:
    """The words for `when` after the word `before`: "until 2023", but "on 2024-06-14" where no preposition is."""
    preposition, words = _en_phrase(when, weekend)
    replacement = words if before in _BARE_AFTER else f"{preposition} {words}"
    return replacement[0].upper() + replacement[1:] if first else replacement


# --- Chinese and Japanese ------------------------------------------------------------------------------------

_CJK_NUM = r"(?<!\d)\d{1,3}|[一二两兩三四五六七八九十]{1,3}"
_CJK = re.compile(
    r"(?P<zw_rel>下下|下|上|这|這|本)(?:个|個)?(?:周|週|星期|礼拜|禮拜)(?P<zw_day>[一二三四五六日天])"
    r"|(?P<jw_rel>再来週|来週|今週|先週)の?(?P<jw_day>[月火水木金土日])曜日?"
    r"|(?P<we>下下|下|上|这|這|本|再来|来|今|先)(?:个|個)?(?:周末|週末)"
    r"|(?P<wk>下下|下|上|这|這|本)(?:个|個)?(?:周|週|星期|礼拜|禮拜)(?![围圍边邊到年期末])"
    r"|(?P<wk_ja>再来週|来週|今週|先週)(?!末)"
    r"|(?<![晚早马馬])(?P<mo>下(?:个|個)?月|上(?:个|個)?月|这个月|這個月|本月|来月|先月|今月)(?![亮光球饼餅])"
    r"|(?P<yr>明年|来年|去年|昨年|今年|后年|後年|再来年|一昨年|前年|おととし)"
    r"|(?P<day>大后天|大後天|后天|後天|明後日|あさって|明天|明日|あした|今天|今日|昨天|昨日|きのう|前天|一昨日|おととい)"
    rf"|(?P<n>{_CJK_NUM})(?:(?:个|個|ヶ|か|カ)(?P<unit_m>月)|(?:个|個)?(?P<unit>天|日|周|週間|週|星期|年))"
    r"(?P<dir>以后|以後|之后|之後|后|後|以前|之前|前)"
)
_CJK_DAY_OFFSETS = {"大后天": 3, "大後天": 3, "后天": 2, "後天": 2, "明後日": 2, "あさって": 2, "明天": 1, "明日": 1,
                    "あした": 1, "今天": 0, "今日": 0, "昨天": -1, "昨日": -1, "きのう": -1, "前天": -2, "一昨日": -2,
                    "おととい": -2}
_CJK_WEEK_OFFSETS = {"下下": 2, "再来週": 2, "再来": 2, "下": 1, "来週": 1, "来": 1, "上": -1, "先週": -1, "先": -1,
                     "这": 0, "這": 0, "本": 0, "今週": 0, "今": 0}
_CJK_MONTH_OFFSETS = {"下": 1, "来月": 1, "上": -1, "先月": -1}
_CJK_YEAR_OFFSETS = {"明年": 1, "来年": 1, "去年": -1, "昨年": -1, "今年": 0, "后年": 2, "後年": 2, "再来年": 2,
                     "前年": -2, "一昨年": -2, "おととし": -2}
_JAPANESE = re.compile(r"[\u3040-\u30ff]|曜|来週|先週|来月|先月|週間")


def _cjk_value(match: re.Match[str], said: date) -> EventDate | None:
    group = match.group
    for prefix, days in (("zw", _ZH_DAYS), ("jw", _JA_DAYS)):
        if group(f"{prefix}_day"):
            monday = _monday(said) + timedelta(days=7 * _CJK_WEEK_OFFSETS[group(f"{prefix}_rel")])
            return EventDate(monday + timedelta(days=days[group(f"{prefix}_day")]), "day")
    if group("we"):
        return _span(said, _CJK_WEEK_OFFSETS[group("we")], "weekend")
    if group("wk") or group("wk_ja"):
        return _span(said, _CJK_WEEK_OFFSETS[group("wk") or group("wk_ja")], "week")
    if group("mo"):
        text = group("mo")
        offset = next((value for key, value in _CJK_MONTH_OFFSETS.items() if text.startswith(key)), 0)
        return _span(said, offset, "month")
    if group("yr"):
        return _span(said, _CJK_YEAR_OFFSETS[group("yr")], "year")
    if group("day"):
        return EventDate(said + timedelta(days=_CJK_DAY_OFFSETS[group("day")]), "day")
    amount = _number(group("n"))
    if amount <= 0:
        return None
    sign = -1 if "前" in group("dir") else 1
    unit = {"天": "day", "日": "day", "周": "week", "週間": "week", "週": "week", "星期": "week"}
    return _shift(said, sign * amount, "month" if group("unit_m") else unit.get(group("unit"), "year"))


def _cjk_phrase(when: EventDate, style: Style) -> str:
    day = when.start
    if when.precision == "day":
        return f"{day.year}年{day.month}月{day.day}日"
    if when.precision == "week":
        return f"{day.year}年{day.month}月{day.day}日" + ("の週" if style == "ja" else "那周")
    if when.precision == "month":
        return f"{day.year}年{day.month}月"
    return f"{day.year}年"


# Every Chinese or Japanese expression holds one of these: texts without any (all others) skip the big pattern.
_CJK_TRIGGER = re.compile(r"[天日周週期拜月年后後前]|あした|あさって|きのう|おととい|おととし")


def _cjk(text: str, said: date) -> list[Found]:
    if not _CJK_TRIGGER.search(text):
        return []
    style: Style = "ja" if _JAPANESE.search(text) else "zh"
    found = []
    for match in _CJK.finditer(text):
        when = _cjk_value(match, said)
        if when is not None:
            found.append(Found(match.start(), match.end(), when, _cjk_phrase(when, style)))
    return found


# --- the API -------------------------------------------------------------------------------------------------

_FINDERS: tuple[Callable[[str, date], list[Found]], ...] = (_english, _cjk)


def find(text: str, said_on: date) -> list[Found]:
    """Every relative time expression in `text`, resolved against `said_on`, in order and without overlaps."""
    found = sorted((item for finder in _FINDERS for item in finder(text, said_on)), key=lambda item: item.start)
    kept: list[Found] = []
    for item in found:
        if not kept or item.start >= kept[-1].end:
            kept.append(item)
    return kept


def resolved(text: str, said_on: date, *, hint: EventDate | None = None) -> tuple[str, EventDate | None]:
    """`text` with each relative time expression replaced by the date it stands for, and the first such date.
    `hint` (a date the model wrote) picks the reading of a first expression whose day the tense decides, when the
    other reading is the hint ("traded the car on Saturday": the last Saturday, not the next)."""
    found = find(text, said_on)
    if not found:
        return text, None
    if hint is not None and found[0].other is not None and found[0].other.when == hint:
        found[0] = found[0].other
    pieces, at = [], 0
    for item in found:
        pieces += [text[at : item.start], item.replacement]
        at = item.end
    pieces.append(text[at:])
    return "".join(pieces), found[0].when


_ISO = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?(?:[T ][0-9:.+\-Z]*)?|(\d{4})-W(\d{2})")


def parse_event_date(value: Any) -> EventDate | None:
    """An ISO 8601 date a model wrote (`2024-06-14`, `2024-06`, `2024`, `2024-W24`, or a timestamp), or None for
    anything else, including years outside 1900-2200."""
    if not isinstance(value, str):
        return None
    match = _ISO.fullmatch(value.strip())
    if match is None:
        return None
    try:
        if match.group(4):
            year, week = int(match.group(4)), int(match.group(5))
            when = EventDate(date.fromisocalendar(year, week, 1), "week")
        elif match.group(3):
            when = EventDate(date(int(match.group(1)), int(match.group(2)), int(match.group(3))), "day")
        elif match.group(2):
            when = EventDate(date(int(match.group(1)), int(match.group(2)), 1), "month")
        else:
            when = EventDate(date(int(match.group(1)), 1, 1), "year")
    except ValueError:
        return None
    return when if 1900 <= when.start.year <= 2200 else None


def dated(content: str, said_on: date, *, when: str | None = None, model_date: str | None = None) -> tuple[str, str]:
    """A fact's text with its relative time words resolved, and its event date ("" when the words give none).

    The fact's own words come first; then the time words the model quoted (`when`); then the date the model
    computed (`model_date`), used only when the code read no time words, or to choose between the two readings of
    words whose day depends on the tense. A date that is not in the text already is
    appended in brackets, so the text never keeps words that age."""
    hint = parse_event_date(model_date)
    text, found = resolved(content, said_on, hint=hint)
    if found is not None:
        return text, found.value
    quoted = find(when, said_on) if when else []
    event = quoted[0].when if quoted else hint
    if event is None:
        return content, ""
    return (content if event.value in content else f"{content} ({event.value})"), event.value
