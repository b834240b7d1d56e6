"""Lifetimes: the last day a fact's own words say it holds ("this week I'm in Rome", "my exam is on Friday").

`last_day(content, said_on, ...)` reads the fact's words as the user said them (before `bot.memory.pipeline.dates`
replaces the time words with dates), counted from the day the message was sent, in the languages the date resolver
reads (English, Chinese, Japanese). What bounds a fact, first match wins:

- an explicit end: "until Sunday", "till the end of the month", "for the next two months", 直到周日, 接下来两个月,
  日曜日まで, これから2か月;
- the model's `validUntil` (a date it computed), when it lies on or after the day said;
- a moment the words name that is still to come or under way: "this week", "on Friday", "tomorrow", "next month",
  这周, 周五, 明天, 今週, 金曜日; the fact lasts to the end of that day, week, month or year;
- the model's `eventDate`, at day or week precision, when the code read no time words at all.

Durable look-alikes are never bounded: a sentence in the past ("moved to Rome this week"), a habit ("works
weekends", "every Friday", 每周五, 毎週金曜日), and a month named alone ("birthday is in May": a date that comes back
every year, not an end). Pure: no I/O.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from bot.memory.pipeline.dates import EventDate, find, parse_event_date

_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ZH_DAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_JA_DAYS = {"月": 0, "火": 1, "水": 2, "木": 3, "金": 4, "土": 5, "日": 6}
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5,
            "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}

_PAST_EN = re.compile(
    r"\b(?:was|were|had|did|went|got|came|moved|started|finished|passed|failed|visited|attended|adopted|married|"
    r"graduated|quit|joined|bought|sold|left|returned|arrived|spent|began|ended|switched|since|ago|has\s+been|"
    r"have\s+been|used\s+to)\b|^\s*[A-Za-z]{3,}ed\b",
    re.IGNORECASE,
)
_PAST_CJK = re.compile(r"了|过|過|曾|(?:た|んだ)(?:$|[。、！!よね])|ました|でした")
_HABIT = re.compile(
    r"\b(?:every|each|usually|always|often|weekly|daily|monthly|yearly|annually|weekends|weekdays|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)days)\b|每|毎|平日|いつも|通常|总是|總是|經常|经常",
    re.IGNORECASE,
)
_MONTH_NAME = re.compile(
    r"january|february|march|april|may|june|july|august|september|october|november|december|\d+\s*月", re.IGNORECASE
)

_UNTIL_EN = re.compile(
    r"\b(?:until|till|til|through|thru|up\s+to)\s+(?:(?P<next>next)\s+)?(?:(?P<dow>" + "|".join(_DAYS) + r")"
    r"|the\s+end\s+of\s+(?:the\s+|this\s+)?(?P<end>week|month|year))\b",
    re.IGNORECASE,
)
_FOR_EN = re.compile(
    r"\bfor\s+(?:the\s+(?:next|coming)\s+|another\s+|the\s+rest\s+of\s+the\s+)?(?P<n>\d{1,3}|a|an|one|two|three|four|"
    r"five|six|seven|eight|nine|ten)?\s*(?P<more>more\s+)?(?P<unit>days?|weeks?|months?)\b(?P<tail>\s+more)?",
    re.IGNORECASE,
)
_FOR_EN_FUTURE = re.compile(r"\b(?:next|coming|another|more|rest)\b", re.IGNORECASE)
_UNTIL_ZH = re.compile(r"(?:直到|一直到|到)(?P<next>下)?(?:个|個)?(?:周|週|星期|礼拜|禮拜)(?P<dow>[一二三四五六日天])")
_UNTIL_JA = re.compile(r"(?P<next>来週の?)?(?P<dow>[月火水木金土日])曜日?まで")
_END_CJK = re.compile(r"(?:直到|到)?(?P<end>月底|月末|周末|週末|年底|年末)(?:为止|為止|まで|前|之前)")
_FOR_CJK = re.compile(
    r"(?:接下来|接下來|未来|未來|これから|今後|この先)(?:的)?(?P<n>\d{1,3}|[一二两兩三四五六七八九十])"
    r"(?:个|個|か|ヶ|カ)?(?P<unit>月|周|週間|週|星期|天|日間|日)"
)
_WEEKEND = re.compile(r"weekend|周末|週末", re.IGNORECASE)
_BARE_DOW_CJK = re.compile(r"(?<![下上这這本来今先每毎])(?:周|週|星期|礼拜|禮拜)(?P<zh>[一二三四五六日天])"
                           r"|(?<![来今先毎の])(?P<ja>[月火水木金土日])曜日")


def _number(text: str | None) -> int:
    if not text:
        return 1
    return int(text) if text.isdigit() else _NUMBERS.get(text.lower(), 1)


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _coming(said: date, weekday: int, *, next_week: bool = False) -> date:
    """The first `weekday` on or after `said` (in the week after this one with `next_week`)."""
    if next_week:
        return said - timedelta(days=said.weekday()) + timedelta(days=7 + weekday)
    return said + timedelta(days=(weekday - said.weekday()) % 7)


def _period_end(when: EventDate) -> date:
    """The last day of the day, week, month or year `when` names."""
    if when.precision == "day":
        return when.start
    if when.precision == "week":
        return when.start + timedelta(days=6)
    if when.precision == "month":
        return _add_months(when.start, 1) - timedelta(days=1)
    return date(when.start.year, 12, 31)


def _end_of(unit: str, said: date) -> date:
    if unit in {"week", "周末", "週末"}:
        return said + timedelta(days=6 - said.weekday())
    if unit in {"month", "月底", "月末"}:
        return _add_months(said, 1) - timedelta(days=1)
    return date(said.year, 12, 31)


def _span(said: date, amount: int, unit: str) -> date:
    unit = unit.lower().rstrip("s")
    if unit in {"month", "月"}:
        return _add_months(said.replace(day=1), amount) + timedelta(days=said.day - 2)
    days = 7 if unit in {"week", "周", "週間", "週", "星期"} else 1
    return said + timedelta(days=amount * days - 1)


def _explicit_end(text: str, said: date) -> date | None:
    """An end the words state: "until Sunday", "for the next two months" and their Chinese and Japanese forms."""
    if match := _UNTIL_EN.search(text):
        if match.group("end"):
            return _end_of(match.group("end").lower(), said)
        return _coming(said, _DAYS.index(match.group("dow").lower()), next_week=bool(match.group("next")))
    for pattern, days in ((_UNTIL_ZH, _ZH_DAYS), (_UNTIL_JA, _JA_DAYS)):
        if match := pattern.search(text):
            return _coming(said, days[match.group("dow")], next_week=bool(match.group("next")))
    if match := _END_CJK.search(text):
        return _end_of(match.group("end"), said)
    if (match := _FOR_EN.search(text)) and _FOR_EN_FUTURE.search(match.group(0)):
        return _span(said, _number(match.group("n")), match.group("unit"))
    if match := _FOR_CJK.search(text):
        return _span(said, _number(match.group("n")), match.group("unit"))
    return None


def _named_moment(text: str, said: date) -> date | None:
    """The end of the first moment the words name that has not passed yet (a month named alone does not count)."""
    for found in find(text, said):
        if _MONTH_NAME.search(text[found.start : found.end]):
            continue
        end = _period_end(found.when)
        if _WEEKEND.search(text[found.start : found.end]):
            end += timedelta(days=1)  # the resolver names a weekend by its Saturday; it lasts through Sunday
        return end if end >= said else None
    if match := _BARE_DOW_CJK.search(text):
        weekday = _ZH_DAYS[match.group("zh")] if match.group("zh") else _JA_DAYS[match.group("ja")]
        return _coming(said, weekday)
    return None


def durable(text: str) -> bool:
    """Words that hold beyond any date they name: the past, or a habit."""
    return bool(_PAST_EN.search(text) or _PAST_CJK.search(text) or _HABIT.search(text))


def last_day(
    content: str,
    said_on: date,
    *,
    when: str | None = None,
    valid_until: str | None = None,
    event_date: str | None = None,
) -> str:
    """The last day (`YYYY-MM-DD`) the fact holds, or "" when nothing bounds it (see the module for the rules).
    `when` is the time words the model quoted, `valid_until` and `event_date` the dates it computed."""
    text = f"{content} {when}" if when and when not in content else content
    if durable(text):
        return ""
    end = _explicit_end(text, said_on)
    if end is None and (stated := parse_event_date(valid_until)) is not None and _period_end(stated) >= said_on:
        end = _period_end(stated)
    if end is None:
        end = _named_moment(text, said_on)
    event = parse_event_date(event_date) if end is None and not find(text, said_on) else None
    if event is not None and event.precision in {"day", "week"} and _period_end(event) >= said_on:
        end = _period_end(event)
    return end.isoformat() if end is not None else ""
