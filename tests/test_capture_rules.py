"""The capture's skip rules (`app.capture.rules`) and its repeat fingerprint (`app.capture.fold`).

`noise-session.jsonl` is one session in Claude Code's transcript shape (the keys and entry kinds of
the recorded `real-claude-p.jsonl`): a greeting, a turn answered by `API Error: 529` (an
`isApiErrorMessage` entry, as Claude Code writes it), a tool call the person refused (the
`tool_result` Claude Code writes for a rejected call, then `[Request interrupted by user for tool
use]`), an interruption, "run the tests" → "All tests passed.", a question the assistant could not
answer, and the near-misses that must be kept: a thank-you carrying a fact, tests that failed, a
"Done." to a request that names the change. It goes through the capture hook's transcript reader
and the server's text cleaning, as a capture does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.capture.fold import fold_key, normalised
from app.capture.rules import (
    API_ERROR,
    EMPTY,
    GREETING,
    INTERRUPTED,
    PERMISSION_REFUSED,
    PROGRESS_ONLY,
    REASONS,
    RULES,
    UNANSWERED,
    carries_specifics,
    skip_reason,
)
from app.capture.schemas import Digest
from app.capture.text import clean_said
from memoria_hook_client.transcript import parse_delta

NOISE = Path(__file__).parent / "fixtures" / "transcripts" / "noise-session.jsonl"
NOISE_SESSION = "7c1e4b0a-2f6d-4c1b-9a8e-3d5f6a7b8c9d"
REFUSAL = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a "
    "file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the "
    "user to tell you how to proceed."
)
NO_GRANT = "Claude requested permissions to use Bash, but you haven't granted it yet."
OVERLOADED = (
    'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},'
    '"request_id":"req_011CVaXk2"}'
)


def reason(prompt: str, reply: str, digest: Digest | None = None) -> str | None:
    return skip_reason(clean_said(prompt), clean_said(reply), digest or Digest())


def test_a_noisy_session_keeps_only_the_exchanges_that_carry_information() -> None:
    delta = parse_delta(NOISE.read_bytes(), 0, 0, NOISE_SESSION, final=True)
    reasons = [(e["prompt"], reason(e["prompt"], e["reply"], Digest(**e["digest"]))) for e in delta.exchanges]
    assert reasons == [
        ("hi", GREETING),
        ("What region is the staging database in?", API_ERROR),
        ("Delete the build directory", PERMISSION_REFUSED),
        ("Explain the retry policy", INTERRUPTED),
        ("run the tests", PROGRESS_ONLY),
        ("What region is the staging database in?", UNANSWERED),
        ("thanks! by the way, the staging database runs in eu-west-1", None),
        ("run the tests", None),
        ("set RETRY_ATTEMPTS to 5", None),
        ("great, thanks!", GREETING),
    ]


@pytest.mark.parametrize(
    ("prompt", "reply"),
    [
        ("hi", "Hello! How can I help you today?"),
        ("thanks", "You're welcome!"),
        ("ok", ""),
        ("great, thanks!", "You're welcome! Let me know if you need anything else."),
        ("Thank you so much 🙏", "Happy to help. Have a great day!"),
        ("hello", "Hi there"),
        ("thx!", "You\u2019re welcome — happy coding!"),
        ("hey", "Hey! What's up?"),
        ("morning", "Morning! Ready when you are. What are we working on today?"),
    ],
)
def test_greetings_and_acknowledgements_answered_in_kind_are_skipped(prompt: str, reply: str) -> None:
    assert reason(prompt, reply) == GREETING


@pytest.mark.parametrize(
    ("prompt", "reply", "digest"),
    [
        ("hi, the staging database is in eu-west-1", "Noted!", Digest()),  # a fact in the greeting
        ("thanks! btw we deploy on Fridays only", "Noted, thanks!", Digest()),
        ("ok", "OK. The deploy goes through the Terraform Cloud workspace.", Digest()),  # a fact in the reply
        ("thanks", "You're welcome! The fix is in app/retry.py.", Digest()),
        ("ok", "Sure, I'll remember that the deploy key rotates monthly.", Digest()),
        ("yes", "Great, I've run the migration.", Digest(commands=["alembic upgrade head"])),  # tools ran
        ("ok go", "Sure.", Digest(files_touched=["app/retry.py"])),
    ],
)
def test_small_talk_that_carries_something_is_kept_by_the_greeting_rule(
    prompt: str, reply: str, digest: Digest
) -> None:
    assert reason(prompt, reply, digest) != GREETING


@pytest.mark.parametrize(
    "reply",
    [
        OVERLOADED,
        'API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"Rate limited"}}',
        "API Error: Request timed out.",
        "API Error: Connection error.",
        "Claude AI usage limit reached|1764252000",
        "Request timed out.",
        "Overloaded",
    ],
)
def test_a_turn_answered_by_an_api_error_is_skipped(reply: str) -> None:
    assert reason("What region is the staging database in?", reply) == API_ERROR


def test_an_api_error_after_files_changed_or_inside_a_real_reply_is_kept() -> None:
    assert reason("Bump the version", OVERLOADED, Digest(files_touched=["pyproject.toml"])) is None
    explained = (
        "The deploy failed with API Error: 529 from the provider; we retry with backoff in app/retry.py."
    )
    assert reason("Why did the deploy fail?", explained) is None
    for answer in (
        "Overloaded workers are restarted by the supervisor.",
        "Connection errors mean the pool is full.",
    ):
        assert reason("What happens under load?", answer) is None, answer


def test_an_interrupted_turn_is_skipped_unless_files_changed_before_it() -> None:
    assert reason("Explain the retry policy", "[Request interrupted by user]") == INTERRUPTED
    changed = Digest(files_touched=["/home/dev/shop-api/app/retry.py"])
    assert reason("Rewrite the retry policy", "[Request interrupted by user]", changed) is None


@pytest.mark.parametrize(
    ("reply", "errors"),
    [
        ("[Request interrupted by user for tool use]", [REFUSAL]),
        ("", [REFUSAL]),
        ("I need your permission to run that command. Shall I go ahead?", [NO_GRANT]),
        ("", ["The user doesn't want to take this action right now. STOP what you are doing."]),
    ],
)
def test_a_refused_tool_call_with_nothing_else_is_skipped(reply: str, errors: list[str]) -> None:
    digest = Digest(commands=["rm -rf build"], errors=errors)
    assert reason("Delete the build directory", reply, digest) == PERMISSION_REFUSED


def test_a_refusal_beside_real_work_or_a_real_error_is_kept() -> None:
    failing = Digest(errors=[REFUSAL, "FAILED tests/test_retry.py::test_attempts - assert 3 == 5"])
    assert reason("Fix the retry test", "", failing) is None, "a real error is information"
    edited = Digest(files_touched=["app/retry.py"], errors=[REFUSAL])
    assert reason("Fix the retry test", "I changed the retry count instead.", edited) is None
    answered = "I could not run it, but the staging database region is set in infra/staging.tf."
    assert reason("Where is the region set?", answered, Digest(errors=[REFUSAL])) is None


@pytest.mark.parametrize(
    ("prompt", "reply"),
    [
        ("run the tests", "All tests passed."),
        ("run the tests", "All 42 tests pass now!"),
        ("commit it", "Done."),
        ("please continue", "I've updated the file."),
        ("yes, push it", "Pushed."),
        ("run the linter", "No issues found."),
        ("fix it", "Fixed. All tests are passing now."),
        ("", "Done!"),
    ],
)
def test_a_routine_request_answered_only_with_progress_is_skipped(prompt: str, reply: str) -> None:
    assert reason(prompt, reply, Digest(commands=["pytest -q"])) == PROGRESS_ONLY


@pytest.mark.parametrize(
    ("prompt", "reply"),
    [
        ("set the retry limit to 5", "Done."),  # the request names the change
        ("rename getUser to fetchUser", "Done."),
        ("use pnpm for the frontend workspace instead of npm from now on, please", "Done."),  # not routine
        ("run the tests", "All tests passed. The flaky one needed a longer timeout in conftest.py."),
        ("run the tests", "Two tests fail: the retry policy allows 3 attempts where 5 are expected."),
        ("Why is the build slow?", "Done."),  # not a request
    ],
)
def test_progress_that_says_more_or_answers_a_specific_request_is_kept(prompt: str, reply: str) -> None:
    assert reason(prompt, reply) != PROGRESS_ONLY


@pytest.mark.parametrize(
    "reply",
    [
        "I don't know.",
        "I couldn't find the staging database's region anywhere in this repository.",
        "I'm not sure. It may be configured outside the code.",
        "Unfortunately, I wasn't able to find where that is set.",
        "There is no mention of a staging region in the project.",
    ],
)
def test_a_question_the_assistant_could_not_answer_is_skipped(reply: str) -> None:
    assert reason("What region is the staging database in?", reply) == UNANSWERED


REGION = "What region is the staging database in?"


@pytest.mark.parametrize(
    ("prompt", "reply", "digest"),
    [
        # something was found on the way
        (REGION, "I couldn't find it in the code, but infra/staging.tf sets eu-west-1.", Digest()),
        (REGION, "I don't know, but `STAGING_REGION` is read at startup.", Digest()),
        # the prompt states something besides its question
        ("We moved staging to eu-west-1 last week; where is it set?", "I couldn't find it.", Digest()),
        ("Fix the retry test", "I couldn't fix it.", Digest(files_touched=["app/retry.py"])),
        # a reply that starts otherwise answers
        (REGION, "The staging database runs in Frankfurt.", Digest()),
    ],
)
def test_an_unanswered_question_with_any_finding_is_kept(prompt: str, reply: str, digest: Digest) -> None:
    assert reason(prompt, reply, digest) is None


def test_an_exchange_with_no_text_is_empty_and_a_plain_fact_is_kept() -> None:
    assert reason("<private>secret</private>", "") == EMPTY
    assert reason("How do we deploy?", "We deploy with Terraform from the infra repository.") is None
    assert reason("Remember: staging runs on Postgres 16", "") is None, "a prompt without a reply is kept"


def test_specifics_are_what_keep_an_exchange() -> None:
    for text in (
        "port 5432",
        "see app/retry.py",
        "`make test`",
        "RETRY_ATTEMPTS",
        "getUser",
        "x = 1",
        "https://x.io",
    ):
        assert carries_specifics(text), text
    for text in ("thanks a lot", "All tests passed", "I don't know"):
        assert not carries_specifics(text), text


def test_every_rule_has_a_reason_and_says_why_it_skips() -> None:
    assert [name for name, _ in RULES] == [name for name in REASONS if name not in (EMPTY, "disabled")]
    assert all(rule.__doc__ and rule.__name__ == name.replace("-", "_") for name, rule in RULES)


def test_repeats_share_a_fingerprint_whatever_their_case_punctuation_or_spacing() -> None:
    question, answer = "What region is the staging database in?", "It runs in eu-west-1."
    assert fold_key(question, answer) == fold_key(
        "what region is the  staging database in", "It runs in eu west 1"
    )
    assert normalised("  Hello,   World!! ") == "hello world"
    assert fold_key(question, answer) != fold_key(question, "It runs in us-east-1.")
    assert fold_key(question, answer) != fold_key(answer, question), "prompt and reply keep their places"
    assert fold_key("a b", "c") != fold_key("a", "b c")
