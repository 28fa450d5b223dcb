"""Skip rules: which captured exchanges carry nothing worth remembering, and why.

Every exchange used to become an episode, so recall and SessionStart filled with greetings, "All
tests passed", `API Error: 529 …` and the same unanswered question asked again and again, ahead of
the facts. Each rule here is a pure, deterministic function of an exchange's cleaned prompt, reply
and tool digest that answers True when the exchange holds nothing to remember; `skip_reason`
names the first rule that holds (the reason the capture route counts and answers).

The rules are conservative by construction: an exchange is skipped only when every part of it is
empty talk. A prompt or reply carrying specifics (a number, a path or file name, code, an
identifier, a URL, an assignment; see `carries_specifics`) is kept, as is any exchange whose
tools changed files (the digest says what changed). A greeting that also states a fact is kept.
Word lists, not a model: what is skipped can be explained by pointing at the list.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from app.capture.schemas import Digest

EMPTY = "empty"
DISABLED = "disabled"
GREETING = "greeting"
API_ERROR = "api-error"
INTERRUPTED = "interrupted"
PERMISSION_REFUSED = "permission-refused"
PROGRESS_ONLY = "progress-only"
UNANSWERED = "unanswered"

MAX_SMALL_TALK_WORDS = 8
"""A greeting or acknowledgement longer than this is taken to say something."""
MAX_ROUTINE_PROMPT_WORDS = 8
"""A request longer than this ("run the tests") is taken to say something."""
MAX_UNANSWERED_WORDS = 60
"""An "I couldn't find …" reply longer than this is taken to say something on the way."""
MAX_QUESTION_WORDS = 30
"""An unanswered prompt longer than this is taken to state something besides its question."""

# Something a person may want to find again: a digit, a URL, a path, a file name, code, an
# identifier (snake_case, camelCase, dotted), an assignment, an @handle or a #ref.
_SPECIFICS = re.compile(
    r"\d|https?://|[/\\]|`|\w\.\w|\w_\w|[a-z][A-Z]|[=@#$%{}<>\[\]]",
)
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
_DECORATION = re.compile(r"[*_~>]+|:[a-z_]+:|[^\w\s'.,!?…-]")


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


SMALL_TALK_WORDS = _word_set(
    """
    hi hello hey hiya heya yo howdy morning evening afternoon night good bye goodbye cya cheers
    thanks thank thx ty tysm much so very a lot lots again you all everyone there ok okay k kk
    alright allright fine sure yes yep yeah yup no nope nah great cool nice perfect awesome
    excellent wonderful amazing brilliant fantastic lovely sweet neat got it that this works
    worked sounds looks lgtm understood noted appreciate appreciated right indeed wow oh ah haha
    lol please welcome
    """
)
"""Words a greeting or an acknowledgement is made of ("hi", "thanks", "great, thanks!")."""

PLEASANTRY_WORDS = _word_set(
    """
    i i'm i'd i'll me my you you're your it it's is are was were be there here how what can could
    would do did help helped helping assist glad happy pleasure welcome problem anytime any time
    let know if need anything else more questions other feel free to ask just today have a an day
    great nice see take care coding luck again for the with
    up what's how's going doing ready when shall we get started work working on
    """
)
"""With `SMALL_TALK_WORDS`, the words a reply to small talk is made of ("You're welcome! Let me
know if you need anything else."): a reply with any other word says something."""

_API_ERROR = re.compile(
    r"api error\b|claude ai usage limit reached|credit balance is too low|"
    r"\d{3} \{\"type\":\s*\"error\"|"
    r"(prompt is too long|request timed out|connection error|overloaded|rate limited)[.!]?\s*$"
)
"""How Claude Code's reply starts when the API failed instead of answering (`API Error: 529
{"type":"error","error":{"type":"overloaded_error",…}}`, a usage limit), or the whole reply when
it is only the failure's name ("Overloaded", "Request timed out.")."""

_INTERRUPTED = re.compile(r"\[request interrupted by user")

_REFUSED_TOOL = re.compile(
    r"(the user doesn't want to (proceed with this tool use|take this action)|"
    r"the tool use was rejected|permission to use \S+ has been denied|"
    r"claude requested permissions? to .+ but you haven't granted it|"
    r"user (rejected|denied|declined) (the |this )?tool|"
    r"\[request interrupted by user for tool use)"
)
"""How a tool call the person refused reads in the digest's errors (the tool_result Claude Code
writes for a refused call: "The user doesn't want to proceed with this tool use. The tool use was
rejected …"; in `-p` mode "Claude requested permissions to … but you haven't granted it yet.")."""

_ASKS_PERMISSION = re.compile(
    r"permission|approv|grant|allow|declin|reject|denied|not proceed|won'?t proceed"
)

_WHAT = (
    "(file|files|code|test|tests|config|configuration|change|changes|function|docs|documentation|"
    "readme|script|it|them|everything)"
)
"""What a progress report may name without saying anything ("I've updated the file")."""

_PROGRESS = re.compile(
    r"(all )?(the )?(\d+ )?(unit |integration )?(tests?|checks?|specs?|lints?)( now)? "
    r"(pass(ed|es)?|succeed(ed|s)?|(are|is) (passing|green)|(are|is) (all )?(passing|green))"
    r"( now)?( successfully)?|"
    r"(everything|it|that|this) (works|passes|is done|is working|looks good)( now)?|"
    r"(all )?(done|finished|complete|completed|fixed|all set|ready)|"
    r"(that'?s|it'?s|this is) (done|fixed|finished|complete)|"
    r"(i'?ve|i have|i) (now )?(updated|changed|edited|fixed|made|applied|committed|pushed|created|"
    r"added|removed|deleted|renamed|saved|run|ran|reran|finished|completed|formatted|installed)"
    rf"( (the|this|that|these|those|your|all( the)?))?( {_WHAT})?( accordingly| as requested| for you)?|"
    r"(changes?|edits?|updates?|fix) (applied|made|committed|pushed|saved|done)|"
    rf"(committed|pushed|saved|updated|formatted)( (the|this|that|these|those|your|all( the)?))?( {_WHAT})?"
    r"( for you)?|"
    r"(the )?(build|lint|linter|type check|ci) (succeeded|passes|passed|is green|is clean)|"
    r"no (errors|issues|problems|warnings)( found| left| remaining)?|"
    r"(ok|okay|sure|great|perfect)"
)
"""A sentence that only reports progress ("All tests passed", "Done.", "I've updated the file.")."""

_ROUTINE_VERBS = _word_set(
    """
    run rerun re-run commit push continue proceed go retry try fix do redo lint format build
    test check save apply finish install yes ok okay sure
    """
)
"""How a request starts whose reply "Done." leaves nothing to remember ("run the tests")."""

_POLITE_LEAD = _word_set(
    """
    please now ok okay yes yeah sure great then and so alright
    """
)

_INABILITY = re.compile(
    r"(unfortunately,? )?(i (don'?t|do not|didn'?t|did not) (know|find|see|have)|"
    r"i (couldn'?t|could not|can'?t|cannot|wasn'?t able to|was not able to|am unable to|"
    r"am not able to|was unable to) (find|locate|determine|tell|see|answer|access|figure|work out)|"
    r"i'?m (not sure|unable|not able)|i am (not sure|unable|not able)|"
    r"there (is|are|was|were) no (information|mention|reference|record|sign|trace)|"
    r"i have no (information|record|way|access)|i (found|see) no (information|mention|reference))"
)
"""How a reply starts that says the assistant could not answer ("I don't know …", "I couldn't find …")."""


def carries_specifics(text: str) -> bool:
    """True when `text` holds something a person may want to find again: a digit, a URL, a path
    or file name, code, an identifier, an assignment, a handle or reference. What keeps a
    near-miss of every rule (a greeting with a port number in it, "Done, the timeout is now 30s")."""
    return _SPECIFICS.search(text) is not None


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold().replace("\u2019", "'"))


def _sentences(text: str) -> list[str]:
    """`text` in lower-case sentences without markdown decoration, emoji or closing punctuation."""
    out = []
    for part in _SENTENCE_END.split(text):
        sentence = _DECORATION.sub(" ", part.casefold())
        sentence = " ".join(sentence.split()).strip(" .,!?…-")
        if sentence:
            out.append(sentence)
    return out


def _starts(pattern: re.Pattern[str], text: str) -> bool:
    return pattern.match(text.strip().casefold()) is not None


def _whole(pattern: re.Pattern[str], sentence: str) -> bool:
    return pattern.fullmatch(sentence) is not None


def _changed_files(digest: Digest) -> bool:
    return any(item.strip() for item in digest.files_touched)


def is_small_talk(text: str) -> bool:
    """A greeting or acknowledgement and nothing else: a few words, all from `SMALL_TALK_WORDS`
    ("hi", "thanks", "ok", "great, thanks!"), no specifics."""
    words = _words(text)
    return (
        0 < len(words) <= MAX_SMALL_TALK_WORDS
        and not carries_specifics(text)
        and all(word in SMALL_TALK_WORDS for word in words)
    )


def greeting(prompt: str, reply: str, digest: Digest) -> bool:
    """The person only greeted or acknowledged, and the assistant only answered in kind: the
    prompt is small talk, and the reply is empty or made only of small-talk and pleasantry words
    ("You're welcome! Let me know if you need anything else."). No tool did anything."""
    if not is_small_talk(prompt) or carries_specifics(reply) or _used_tools(digest):
        return False
    return all(word in SMALL_TALK_WORDS or word in PLEASANTRY_WORDS for word in _words(reply))


def api_error(prompt: str, reply: str, digest: Digest) -> bool:
    """The turn's reply is the API failing (`API Error: 529 …overloaded_error…`, a rate or usage
    limit, a timeout): the assistant never answered, and the question comes back when it is asked
    again. Kept when tools changed files before the failure."""
    return bool(reply) and _starts(_API_ERROR, reply) and not _changed_files(digest)


def interrupted(prompt: str, reply: str, digest: Digest) -> bool:
    """The person interrupted the turn ("[Request interrupted by user]") before any reply and
    before any file changed."""
    return bool(reply) and _starts(_INTERRUPTED, reply) and not _changed_files(digest)


def permission_refused(prompt: str, reply: str, digest: Digest) -> bool:
    """The assistant asked to run a tool, the person refused, and nothing else happened: every
    tool error is a refusal, no file changed, and the reply is empty, an interruption, or a short
    one about the permission, without specifics."""
    errors = [item.strip() for item in digest.errors if item.strip()]
    if not errors or _changed_files(digest):
        return False
    if not all(_REFUSED_TOOL.search(error.casefold()) for error in errors):
        return False
    if not reply or _starts(_INTERRUPTED, reply):
        return True
    return (
        len(_words(reply)) <= MAX_UNANSWERED_WORDS
        and not carries_specifics(reply)
        and _ASKS_PERMISSION.search(reply.casefold()) is not None
    )


def is_routine_request(prompt: str) -> bool:
    """A short request with no specifics that starts with a routine verb ("run the tests",
    "commit it", "please continue"), or no prompt at all."""
    if not prompt:
        return True
    words = _words(prompt)
    if not words or len(words) > MAX_ROUTINE_PROMPT_WORDS or carries_specifics(prompt):
        return False
    lead = 0
    while lead < len(words) - 1 and words[lead] in _POLITE_LEAD:
        lead += 1
    return words[lead] in _ROUTINE_VERBS


def progress_only(prompt: str, reply: str, digest: Digest) -> bool:
    """A routine request answered only with progress ("run the tests" → "All tests passed",
    "commit it" → "Done."): every sentence of the reply is a progress report. A request that
    names what to change ("set the timeout to 30s") is kept, and so is any reply saying more."""
    sentences = _sentences(reply)
    if not sentences or not is_routine_request(prompt):
        return False
    return all(_whole(_PROGRESS, sentence) for sentence in sentences)


def unanswered(prompt: str, reply: str, digest: Digest) -> bool:
    """A question the assistant could not answer ("I don't know …", "I couldn't find …") with
    nothing found on the way: a short reply without specifics, a short prompt without specifics,
    and no file changed."""
    if not prompt or not reply or _changed_files(digest):
        return False
    if carries_specifics(prompt) or len(_words(prompt)) > MAX_QUESTION_WORDS:
        return False
    if carries_specifics(reply) or len(_words(reply)) > MAX_UNANSWERED_WORDS:
        return False
    return _starts(_INABILITY, reply)


def _used_tools(digest: Digest) -> bool:
    return any(
        item.strip()
        for items in (digest.files_touched, digest.files_read, digest.commands, digest.subagents)
        for item in items
    )


Rule = Callable[[str, str, Digest], bool]

RULES: tuple[tuple[str, Rule], ...] = (
    (API_ERROR, api_error),
    (PERMISSION_REFUSED, permission_refused),  # before `interrupted`: a refusal ends in an interruption
    (INTERRUPTED, interrupted),
    (GREETING, greeting),
    (PROGRESS_ONLY, progress_only),
    (UNANSWERED, unanswered),
)
"""Every rule, by the reason it answers; the first that holds names the skip."""

REASONS = (EMPTY, DISABLED, *(reason for reason, _ in RULES))
"""Every reason an exchange is skipped for (`empty`: no text once private spans are out;
`disabled`: capture is switched off)."""


def skip_reason(prompt: str, reply: str, digest: Digest) -> str | None:
    """Why the exchange (its prompt and reply already cleaned) is not worth storing, or None to
    store it."""
    if not prompt and not reply:
        return EMPTY
    for reason, rule in RULES:
        if rule(prompt, reply, digest):
            return reason
    return None
