"""Relative time words resolved in code: the conventions, the languages read, what is left alone, the model's dates."""

from __future__ import annotations

from datetime import date
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.memory.pipeline.dates import dated, find, parse_event_date, resolved

WEDNESDAY = date(2024, 6, 5)  # weeks start on Monday 2024-06-03
SUNDAY = date(2024, 6, 9)
NEW_YEAR = date(2024, 12, 30)  # a Monday, in ISO week 1 of 2025


@pytest.mark.parametrize(
    "text, said, expected, value",
    [
        ("Has an exam next Friday", WEDNESDAY, "Has an exam on 2024-06-14", "2024-06-14"),
        ("Has an exam this Friday", WEDNESDAY, "Has an exam on 2024-06-07", "2024-06-07"),
        ("Has an exam on Friday", WEDNESDAY, "Has an exam on 2024-06-07", "2024-06-07"),
        ("Has an exam on next Friday", WEDNESDAY, "Has an exam on 2024-06-14", "2024-06-14"),
        ("Went hiking on Friday", WEDNESDAY, "Went hiking on 2024-05-31", "2024-05-31"),
        ("Went to a concert last Friday", WEDNESDAY, "Went to a concert on 2024-05-31", "2024-05-31"),
        ("Has a meeting this Wednesday", WEDNESDAY, "Has a meeting on 2024-06-05", "2024-06-05"),
        ("Has a meeting this coming Wednesday", WEDNESDAY, "Has a meeting on 2024-06-12", "2024-06-12"),
        ("Exam is Friday next week", WEDNESDAY, "Exam is on 2024-06-14", "2024-06-14"),
        ("Flies to Oslo tomorrow", WEDNESDAY, "Flies to Oslo on 2024-06-06", "2024-06-06"),
        ("Flies to Oslo the day after tomorrow", WEDNESDAY, "Flies to Oslo on 2024-06-07", "2024-06-07"),
        ("Got the keys yesterday", WEDNESDAY, "Got the keys on 2024-06-04", "2024-06-04"),
        ("Has a dentist appointment today", WEDNESDAY, "Has a dentist appointment on 2024-06-05", "2024-06-05"),
        ("Starts a new job in two weeks", WEDNESDAY, "Starts a new job on 2024-06-19", "2024-06-19"),
        ("Has a wedding in a couple of weeks", WEDNESDAY, "Has a wedding on 2024-06-19", "2024-06-19"),
        ("Moves out 10 days from now", WEDNESDAY, "Moves out on 2024-06-15", "2024-06-15"),
        ("Adopted a dog three days ago", WEDNESDAY, "Adopted a dog on 2024-06-02", "2024-06-02"),
        ("Moved to Lyon last month", WEDNESDAY, "Moved to Lyon in May 2024", "2024-05"),
        ("Finishes the course in three months", WEDNESDAY, "Finishes the course in September 2024", "2024-09"),
        ("Lived in Paris until last year", WEDNESDAY, "Lived in Paris until 2023", "2023"),
        ("Got married 3 years ago", WEDNESDAY, "Got married in 2021", "2021"),
        ("Wants to visit Japan next year", WEDNESDAY, "Wants to visit Japan in 2025", "2025"),
        ("Starts the course next week", WEDNESDAY, "Starts the course in the week of 2024-06-10", "2024-W24"),
        ("Is going to Rome this weekend", WEDNESDAY, "Is going to Rome on the weekend of 2024-06-08", "2024-06-08"),
        ("Visits Berlin next March", WEDNESDAY, "Visits Berlin in March 2025", "2025-03"),
        ("Ran a marathon last March", WEDNESDAY, "Ran a marathon in March 2024", "2024-03"),
        ("Tomorrow they fly home", WEDNESDAY, "On 2024-06-06 they fly home", "2024-06-06"),
        ("Has an exam next Monday", SUNDAY, "Has an exam on 2024-06-10", "2024-06-10"),
        ("Went climbing last Sunday", SUNDAY, "Went climbing on 2024-06-02", "2024-06-02"),
        ("Starts a job next week", NEW_YEAR, "Starts a job in the week of 2025-01-06", "2025-W02"),
        ("下周五有考试", WEDNESDAY, "2024年6月14日有考试", "2024-06-14"),
        ("上个月搬到了上海", WEDNESDAY, "2024年5月搬到了上海", "2024-05"),
        ("去年开始学日语", WEDNESDAY, "2023年开始学日语", "2023"),
        ("三天前养了一只猫", WEDNESDAY, "2024年6月2日养了一只猫", "2024-06-02"),
        ("下周末去北京", WEDNESDAY, "2024年6月15日去北京", "2024-06-15"),
        ("来週の金曜日に試験がある", WEDNESDAY, "2024年6月14日に試験がある", "2024-06-14"),
        ("先月引っ越した", WEDNESDAY, "2024年5月引っ越した", "2024-05"),
    ],
)
def test_relative_words_become_the_date_they_stand_for(text: str, said: date, expected: str, value: str) -> None:
    rewritten, when = resolved(text, said)
    assert rewritten == expected
    assert when is not None and when.value == value


@pytest.mark.parametrize(
    "text",
    [
        "Goes climbing every Friday",
        "Works from home on Mondays",
        "Plays football on Friday nights",
        "Has book club on the last Friday of the month",
        "Is in the last year of a PhD",
        "Has read a lot over the last year",
        "Prefers today's docs over old blog posts",
        "Will decide in a day or two",
        "Writes Go microservices at work",
        "晚上月亮很美",
        "请帮我看一下周围的餐厅",
        "Was born in 1990",
    ],
)
def test_habits_durations_and_other_words_are_left_alone(text: str) -> None:
    assert resolved(text, WEDNESDAY) == (text, None)


def test_every_expression_of_a_text_is_resolved_and_the_first_is_its_date() -> None:
    text, when = resolved("Moved to Lyon last month and starts a new job next Monday", WEDNESDAY)
    assert text == "Moved to Lyon in May 2024 and starts a new job on 2024-06-10"
    assert when is not None and when.value == "2024-05"
    assert [item.when.value for item in find("tomorrow or the day after tomorrow", WEDNESDAY)] == [
        "2024-06-06", "2024-06-07",
    ]


def test_the_fact_words_come_first_then_the_quoted_words_then_the_model_date() -> None:
    said = WEDNESDAY
    assert dated("Has an exam next Friday", said, when="next Friday", model_date="2024-06-21") == (
        "Has an exam on 2024-06-14", "2024-06-14",  # the model counted wrong: the code's date wins
    )
    assert dated("Has an exam", said, when="next Friday") == ("Has an exam (2024-06-14)", "2024-06-14")
    assert dated("Examen vendredi prochain", said, when="vendredi prochain", model_date="2024-06-14") == (
        "Examen vendredi prochain (2024-06-14)", "2024-06-14",
    )
    assert dated("Exam on 2024-06-14", said, model_date="2024-06-14") == ("Exam on 2024-06-14", "2024-06-14")
    assert dated("Likes tea", said, when="sometimes", model_date="soon") == ("Likes tea", "")


@pytest.mark.parametrize(
    "value, expected",
    [
        ("2024-06-14", "2024-06-14"),
        ("2024-06", "2024-06"),
        ("2024", "2024"),
        ("2024-W24", "2024-W24"),
        (" 2024-06-14T10:00:00Z ", "2024-06-14"),
        ("2024-02-30", None),
        ("2024-13", None),
        ("14/06/2024", None),
        ("next Friday", None),
        ("1066", None),
        (20240614, None),
        (None, None),
    ],
)
def test_a_model_date_is_read_only_when_it_is_a_real_iso_date(value: object, expected: str | None) -> None:
    when = parse_event_date(value)
    assert (when.value if when else None) == expected


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=80), day=st.dates(date(1950, 1, 1), date(2150, 12, 31)))
def test_any_text_resolves_without_error_to_text_without_overlaps(text: str, day: date) -> None:
    found = find(text, day)
    assert all(a.end <= b.start for a, b in pairwise(found))
    rewritten, first = resolved(text, day)
    assert (first is None) == (not found)
    assert rewritten == text if not found else first == found[0].when


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Joined Klarna this Monday", "2024-06-03"),  # past tense: the Monday of this week
        ("Started this Wednesday", "2024-06-05"),
        ("Has an interview this Monday", "2024-06-10"),  # future: the coming Monday
        ("Went out on Wednesday", "2024-05-29"),
    ],
)
def test_this_and_on_follow_the_tense_of_the_sentence(text: str, expected: str) -> None:
    _, when = resolved(text, WEDNESDAY)
    assert when is not None and when.value == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Moved to Denver in January", "Moved to Denver in January 2024"),  # said in March: the last January
        ("Starts school in September", "Starts school in September 2024"),
        ("Starts school in February", "Starts school in February 2025"),
        ("Is in Rome in March", "Is in Rome in March 2024"),
        ("Was born in May 1990", "Was born in May 1990"),  # a year given: nothing to resolve
    ],
)
def test_a_month_alone_is_the_last_or_the_next_one_by_the_tense(text: str, expected: str) -> None:
    assert resolved(text, date(2024, 3, 14))[0] == expected


def test_the_model_date_picks_the_reading_the_tense_words_missed() -> None:
    # "threw ... on Saturday": no past-tense word the code knows, so it reads the coming Saturday, unless the
    # model's date is the other reading; a model date that is neither reading changes nothing
    monday = date(2024, 6, 3)
    assert dated("Threw a housewarming party on Saturday", monday) == (
        "Threw a housewarming party on 2024-06-08", "2024-06-08",
    )
    assert dated("Threw a housewarming party on Saturday", monday, model_date="2024-06-01") == (
        "Threw a housewarming party on 2024-06-01", "2024-06-01",
    )
    assert dated("Threw a housewarming party on Saturday", monday, model_date="2024-05-25")[1] == "2024-06-08"
    assert dated("Swapped their Corolla for a Prius on Saturday", monday)[1] == "2024-06-01"  # opens in the past
