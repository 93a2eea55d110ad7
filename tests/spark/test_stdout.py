"""``fs_compat.spark._stdout``: what a Spark task of a bounded run prints is held for the driver;
a task that fails, or prints past the limit, writes to the worker's own standard output."""

from __future__ import annotations

import sys

import pytest

from fs_compat.spark import _stdout


def test_a_task_takes_what_it_printed_and_the_stream_is_given_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = sys.stdout
    at = _stdout.start()
    print("one")
    print("two", end="")
    assert _stdout.take(at) == "one\ntwo"
    assert sys.stdout is before
    assert capsys.readouterr().out == ""


def test_two_tasks_in_one_worker_each_take_their_own_lines() -> None:
    before = sys.stdout
    outer = _stdout.start()
    print("a")
    inner = _stdout.start()
    print("b")
    assert _stdout.take(inner) == "b\n"
    assert sys.stdout is not before  # the outer task still captures
    print("c")
    assert _stdout.take(outer) == "a\nc\n"
    assert sys.stdout is before


def test_past_the_limit_lines_go_to_the_workers_stdout(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(_stdout, "LIMIT", 8)
    at = _stdout.start()
    print("short")
    print("too long for it")
    assert _stdout.take(at) == "short\n"
    assert capsys.readouterr().out == "too long for it\n"


def test_a_failed_task_releases_its_lines_to_the_workers_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    before = sys.stdout
    _stdout.start()
    print("before the error")
    _stdout.release()
    assert sys.stdout is before
    assert capsys.readouterr().out == "before the error\n"
    _stdout.release()  # nothing captured: a no-op
    assert _stdout.take(0) == ""  # nothing captured: nothing to take
