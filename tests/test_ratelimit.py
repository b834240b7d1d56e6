"""Per-user sliding-window rate limit (bot/chat/ratelimit.py), driven by a fake clock: no sleeping."""

from __future__ import annotations

import pytest

from bot.chat.ratelimit import RateLimiter, describe_window, when_again


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def test_allows_n_per_window_then_refuses(clock: FakeClock) -> None:
    limiter = RateLimiter(3, 60.0, clock=clock)
    assert [limiter.allow(7) for _ in range(3)] == [True, True, True]
    assert limiter.allow(7) is False
    assert limiter.allow(7) is False


def test_users_are_limited_independently(clock: FakeClock) -> None:
    limiter = RateLimiter(2, 60.0, clock=clock)
    assert limiter.allow(1) and limiter.allow(1)
    assert not limiter.allow(1)
    assert limiter.allow(2) and limiter.allow(2)


def test_the_window_slides(clock: FakeClock) -> None:
    limiter = RateLimiter(2, 60.0, clock=clock)
    assert limiter.allow(1)  # t=1000
    clock.now += 30
    assert limiter.allow(1)  # t=1030
    assert not limiter.allow(1)
    clock.now += 29.9  # t=1059.9: the first event is still inside the window
    assert not limiter.allow(1)
    clock.now += 0.1  # t=1060: the first event has left it, the second has not
    assert limiter.allow(1)
    assert not limiter.allow(1)
    clock.now += 30  # t=1090: the second one left
    assert limiter.allow(1)


def test_refused_attempts_do_not_extend_the_limit(clock: FakeClock) -> None:
    limiter = RateLimiter(1, 10.0, clock=clock)
    assert limiter.allow(1)
    for _ in range(5):
        clock.now += 1
        assert not limiter.allow(1)
    clock.now += 5  # 10 s after the only counted event
    assert limiter.allow(1)


def test_retry_after_counts_down(clock: FakeClock) -> None:
    limiter = RateLimiter(1, 60.0, clock=clock)
    assert limiter.retry_after(1) == 0.0
    limiter.allow(1)
    clock.now += 20
    assert limiter.retry_after(1) == pytest.approx(40.0)


def test_notice_once_per_window(clock: FakeClock) -> None:
    limiter = RateLimiter(1, 60.0, clock=clock)
    limiter.allow(1)
    assert not limiter.allow(1)
    assert limiter.should_notice(1) is True
    clock.now += 10
    assert not limiter.allow(1)
    assert limiter.should_notice(1) is False
    clock.now += 50  # a window after the first notice
    assert limiter.should_notice(1) is True
    assert limiter.should_notice(2) is True  # per user


def test_zero_disables_the_limit(clock: FakeClock) -> None:
    limiter = RateLimiter(0, 60.0, clock=clock)
    assert all(limiter.allow(1) for _ in range(1000))


def test_the_table_forgets_idle_users(clock: FakeClock) -> None:
    limiter = RateLimiter(1, 60.0, clock=clock)
    for user in range(10_001):
        limiter.allow(user)
    clock.now += 61
    limiter.allow(99_999)
    assert len(limiter._events) <= 2
    assert limiter.allow(5)  # a forgotten user starts fresh


def test_when_again_gives_a_discord_timestamp_and_the_wait_in_words() -> None:
    assert when_again(42.2, now=1000.0) == "<t:1043:R> (in 43 sec)"
    assert when_again(125, now=0.0) == "<t:125:R> (in 3 min)"
    assert when_again(3600 + 61, now=0.0) == "<t:3661:R> (in 1 hr 2 min)"
    assert when_again(0, now=0.0) == "<t:1:R> (in 1 sec)"
    assert [describe_window(w) for w in (60, 300, 3600, 7200, 45)] == [
        "minute", "5 minutes", "hour", "2 hours", "45 seconds"
    ]


def test_the_wait_is_said_in_the_readers_language() -> None:
    from bot.i18n.speech import speech_in

    assert when_again(125, now=0.0, speech=speech_in("ja")) == "<t:125:R> (3 分後)"
    assert when_again(3600 + 61, now=0.0, speech=speech_in("de")) == "<t:3661:R> (in 1 Std. 2 Min.)"
    assert [describe_window(w, speech_in("fr")) for w in (60, 300)] == ["minute", "5 minutes"]
    assert describe_window(3600, speech_in("zh_CN")) == "小时"
