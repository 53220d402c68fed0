"""The one wait-until-ready loop: it returns what `ready` gives, gives up at its deadline, asks
at least once, and lets `ready` stop the wait by raising."""

from __future__ import annotations

import pytest

from dbscale import polling
from dbscale.polling import poll_until


def test_returns_the_first_answer_that_is_not_none_or_false() -> None:
    answers = iter([None, False, 0, "ready"])
    assert poll_until(lambda: next(answers), 1.0, 0.001) == 0  # 0 is an answer


class FakeClock:
    """time.monotonic and time.sleep for the polling module: sleeping moves the clock."""

    def __init__(self) -> None:
        self.now = 0.0
        self.pauses: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.pauses.append(round(seconds, 6))
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(polling.time, "monotonic", fake.monotonic)
    monkeypatch.setattr(polling.time, "sleep", fake.sleep)
    return fake


def test_gives_up_at_the_deadline_having_asked_at_least_once(clock: FakeClock) -> None:
    asked: list[float] = []
    assert poll_until(lambda: asked.append(clock.now), 0.35, 0.1) is None
    assert asked == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.35])  # the last ask at the deadline
    once: list[int] = []
    assert poll_until(lambda: once.append(1), 0.0) is None and once == [1]


def test_the_pause_grows_to_its_ceiling(clock: FakeClock) -> None:
    poll_until(lambda: None, 5.0, 0.2, growth=2.0, max_interval_s=1.0)
    assert clock.pauses[:5] == [0.2, 0.4, 0.8, 1.0, 1.0] and sum(clock.pauses) == pytest.approx(5)


def test_a_refusal_ends_the_wait_at_once(clock: FakeClock) -> None:
    def refused() -> None:
        raise PermissionError("wrong password")

    with pytest.raises(PermissionError):
        poll_until(refused, 10.0)
    assert clock.pauses == []
