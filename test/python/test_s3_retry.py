"""The S3 reader's retry rule (s3_objects.py), the one both languages follow (contract.py, generated
from lib/contract/s3-retry-rule.ts): a transient failure is tried the rule's 6 times, then again
until the retry budget has passed, 100 attempts at most; the budget comes from `retry_seconds`, else
SHARDIO_S3_RETRY_SECONDS, else 60 s; the final error says the attempts and the seconds. The failing
call is a stand-in for a GET (no server): what is under test is when it is called again."""
from __future__ import annotations

import os
import unittest
from typing import Callable, List
from unittest import mock

from shardio.contract import S3_RETRY_RULE, THROTTLING_CODES, TRANSIENT_CODES
from shardio.source.s3_objects import (DEFAULT_ATTEMPTS, DEFAULT_RETRY_SECONDS, RETRY_SECONDS_ENV, Backoff, S3Objects, S3ReadError,
                                _throttled, _transient, retry_seconds_from_env)
from test_reader_safety import FakeTime


def failing(times: int, error: Callable[[], Exception] = lambda: ConnectionResetError("connection reset by peer")):
    """A call that raises `error()` its first `times` calls, then returns "ok"; `calls` counts them."""
    calls: List[int] = []

    def call() -> str:
        calls.append(1)
        if len(calls) <= times:
            raise error()
        return "ok"
    return call, calls


def objects(time: FakeTime, **options) -> S3Objects:
    return S3Objects("bucket", "prefix/", backoff=Backoff(clock=time.clock, sleep=time.sleep, draw=lambda: 0.999999), **options)


class S3RetryRuleTest(unittest.TestCase):
    def setUp(self) -> None:
        patcher = mock.patch.dict(os.environ)
        patcher.start()
        self.addCleanup(patcher.stop)
        os.environ.pop(RETRY_SECONDS_ENV, None)

    def test_the_numbers_are_the_contracts(self) -> None:
        self.assertEqual(DEFAULT_ATTEMPTS, S3_RETRY_RULE["attempts"])
        self.assertEqual(DEFAULT_RETRY_SECONDS, S3_RETRY_RULE["budgetMs"] / 1000)
        self.assertGreaterEqual(DEFAULT_RETRY_SECONDS, 60)
        self.assertEqual((Backoff().first, Backoff().cap), (S3_RETRY_RULE["baseDelayMs"] / 1000, S3_RETRY_RULE["maxDelayMs"] / 1000))

    def test_a_failure_past_the_six_attempts_is_retried_within_the_budget(self) -> None:
        time = FakeTime()
        call, calls = failing(12)
        self.assertEqual(objects(time)._retried("k", call), "ok")
        self.assertEqual(len(calls), 13)
        self.assertLess(time.now, DEFAULT_RETRY_SECONDS)

    def test_a_failure_that_outlasts_the_budget_fails_saying_the_attempts_and_the_seconds(self) -> None:
        time = FakeTime()
        call, calls = failing(1_000)
        with self.assertRaisesRegex(S3ReadError, r"^GetObject s3://bucket/prefix/k: failed 18 times in 61\.3 s \(retried for 60 s at "
                                                 r"most: retry_seconds, SHARDIO_S3_RETRY_SECONDS\), last: ConnectionResetError"):
            objects(time)._retried("k", call)
        self.assertEqual(len(calls), 18)  # the waits: 0.1, 0.2, … 3.2 s, then 5 s until 60 s have passed

    def test_a_budget_of_zero_leaves_the_attempts_only_from_the_keyword_or_the_environment(self) -> None:
        for options, environment in (({"retry_seconds": 0}, None), ({}, "0"), ({"retry_seconds": 0}, "30")):
            with self.subTest(options=options, environment=environment):
                if environment is not None:
                    os.environ[RETRY_SECONDS_ENV] = environment
                call, calls = failing(1_000)
                with self.assertRaisesRegex(S3ReadError, r"failed 6 times in \d+\.\d s \(retried for 0 s at most"):
                    objects(FakeTime(), **options)._retried("k", call)
                self.assertEqual(len(calls), DEFAULT_ATTEMPTS)

    def test_attempts_stop_at_the_ceiling_should_the_clock_not_move(self) -> None:
        time = FakeTime()
        call, calls = failing(1_000)
        reader = S3Objects("bucket", "prefix/", backoff=Backoff(clock=lambda: 0.0, sleep=time.sleep))
        with self.assertRaisesRegex(S3ReadError, r"failed 100 times"):
            reader._retried("k", call)
        self.assertEqual(len(calls), S3_RETRY_RULE["attemptCeiling"])

    def test_throttling_is_retried_and_reported_as_throttling(self) -> None:
        from botocore.exceptions import ClientError

        def slow_down() -> Exception:
            return ClientError({"Error": {"Code": "SlowDown"}, "ResponseMetadata": {"HTTPStatusCode": 503}}, "GetObject")
        call, _calls = failing(1_000, slow_down)
        with self.assertRaisesRegex(S3ReadError, r"throttled for 61\.3 s \(18 attempts, .*fewer readers at once"):
            objects(FakeTime())._retried("k", call)

    def test_every_code_of_the_contract_is_retried_and_only_the_throttling_ones_reported_so(self) -> None:
        from botocore.exceptions import ClientError

        def answer(code: str) -> ClientError:
            return ClientError({"Error": {"Code": code}, "ResponseMetadata": {"HTTPStatusCode": 400}}, "GetObject")
        for code in THROTTLING_CODES + TRANSIENT_CODES:
            with self.subTest(code=code):
                self.assertTrue(_transient(answer(code)))
                self.assertEqual(_throttled(answer(code)), code in THROTTLING_CODES)
        self.assertFalse(_transient(answer("AccessDenied")))

    def test_the_environment_variable_is_checked(self) -> None:
        self.assertEqual(retry_seconds_from_env({}), DEFAULT_RETRY_SECONDS)
        self.assertEqual(retry_seconds_from_env({RETRY_SECONDS_ENV: " 600 "}), 600)
        for bad in ("-1", "soon", "inf", "nan"):
            with self.subTest(value=bad), self.assertRaisesRegex(ValueError, rf"^{RETRY_SECONDS_ENV}='{bad}': must be a number of "
                                                                             r"seconds, 0 or more \(0: 6 attempts only; default 60\)"):
                retry_seconds_from_env({RETRY_SECONDS_ENV: bad})
        with self.assertRaisesRegex(ValueError, "S3 retry_seconds must be 0 or more, got -1"):
            S3Objects("bucket", "prefix/", retry_seconds=-1)


if __name__ == "__main__":
    unittest.main()
