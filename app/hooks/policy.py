"""Whether a prompt is worth a recall, and which part of it to search with.

Recall runs before every prompt, so most of its value is in not running (or not searching with
noise): slash commands, very short prompts and pure acknowledgements ("yes", "continue", "ok
thanks, go ahead") carry no topic, and a pasted stack trace, diff or JSON blob would drown the few
words of the actual question. Code and tool output are set aside line by line; what is left, if
long enough and more than an acknowledgement, is the query.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

MAX_QUERY_CHARS = 1000

_SLASH_COMMAND = re.compile(r"/[A-Za-z][\w:.-]*(?:\s|$)")
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_CODE_START = re.compile(
    r"""^(?:
        (?:\t|\ {4})                                  # indented block
      | (?:async\s+)?(?:def|class|function|fn|func)\s+\w+\s*[(:<{]
      | (?:const|let|var)\s+\w+\s*[:=]
      | \#include\b
      | from\s+\S+\s+import\b
      | (?:SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP)\s
      | Traceback\ \(most\ recent\ call\ last\)
      | \s*File\ ".*",\ line\ \d+
      | [\w.]+(?:Error|Exception|Warning):\s              # exception summary line
      | \s*at\ [\w$.<>]+\(.*\)$                       # JVM / JS stack frame
      | \d{4}-\d{2}-\d{2}[T\ ]\d{2}:\d{2}             # timestamped log line
      | \[?\d{2}:\d{2}:\d{2}                          # clock-stamped log line
      | (?:ERROR|WARN|WARNING|INFO|DEBUG|TRACE|FATAL)[\s:\]]
      | \$\ |>>>\ |PS\ [A-Z]:                      # shell / REPL prompts
      | @@\ |\+\+\+\ |---\ |diff\ --git|index\ [0-9a-f]+  # diff headers
      | [+-](?![\s+-])                                # diff body
      | </?[A-Za-z][\w-]*(?:\s[^>]*)?/?>              # markup / tool-output tags
      | \s*"[^"]*"\s*:                                # JSON member
      | [}\])]+[;,]?$                                 # closing brackets
    )""",
    re.VERBOSE,
)
# Words that acknowledge, agree, thank or tell the agent to go on, and nothing else: a prompt made of
# these alone ("thanks, that works", "ok go ahead please", "yes, continue") names no topic.
# fmt: off
_ACKNOWLEDGEMENT_WORDS = frozenset({
    "ok", "okay", "k", "kk", "alright", "right", "sure", "yes", "yeah", "yep", "yup", "ya",
    "no", "nope", "nah", "fine",
    "thanks", "thank", "thx", "ty", "tysm", "cheers", "much", "very", "so", "you", "to", "me", "us",
    "great", "good", "nice", "perfect", "cool", "awesome", "excellent", "amazing", "brilliant", "lovely",
    "got", "it", "that", "that's", "this", "is", "looks", "look", "sounds", "seems", "all",
    "makes", "sense", "lgtm", "sgtm",
    "works", "worked", "working", "done", "correct", "exactly", "agreed", "indeed", "true",
    "go", "on", "ahead", "continue", "proceed", "keep", "going", "carry", "next", "please",
    "pls", "do", "it's",
})
# fmt: on
MAX_ACKNOWLEDGEMENT_WORDS = 8
"""Longer prompts are read as saying something, whatever their words."""
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_CODE_END = re.compile(r"[;{}]$|\)\s*:$")
_SYMBOLS = frozenset("{}[]()<>;=|&$*\\^~`")


@dataclass(frozen=True, slots=True)
class Verdict:
    """`query` is what to search with, or None to skip recall; `reason` says why (for logs/headers)."""

    query: str | None
    reason: str


def _looks_like_code(line: str) -> bool:
    stripped = line.strip()
    if _CODE_START.match(line) or _CODE_END.search(stripped):
        return True
    symbols = sum(ch in _SYMBOLS for ch in stripped)
    return len(stripped) >= 8 and symbols / len(stripped) > 0.12


def _is_json(text: str) -> bool:
    if text[0] not in "{[" or text[-1] not in "}]":
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _shorten(text: str) -> str:
    if len(text) <= MAX_QUERY_CHARS:
        return text
    cut = text[:MAX_QUERY_CHARS]
    space = cut.rfind(" ")
    return cut[:space] if space > MAX_QUERY_CHARS // 2 else cut


def is_acknowledgement(text: str) -> bool:
    """Whether `text` only acknowledges, thanks or says go on (punctuation and emoji aside)."""
    words = _WORD.findall(text.lower().replace("\u2019", "'"))
    return 0 < len(words) <= MAX_ACKNOWLEDGEMENT_WORDS and all(w in _ACKNOWLEDGEMENT_WORDS for w in words)


def judge(prompt: str, min_chars: int) -> Verdict:
    text = prompt.replace("\x00", "").strip()
    if not text:
        return Verdict(None, "empty")
    if _SLASH_COMMAND.match(text):
        return Verdict(None, "slash-command")
    if text.startswith("!"):
        return Verdict(None, "shell-command")
    if _is_json(text):
        return Verdict(None, "json")
    without_fences = _FENCE.sub("\n", text)
    lines = [line for line in without_fences.splitlines() if line.strip()]
    # One typed line is prose even when it mentions f(x) = y; pasted material spans lines.
    prose = (
        lines
        if len(lines) == 1 and without_fences == text
        else [line for line in lines if not _looks_like_code(line)]
    )
    query = " ".join(" ".join(prose).split())
    set_aside = without_fences != text or len(prose) < len(lines)
    if len(query) < min_chars or not re.search(r"[^\W\d_]{2,}", query):
        return Verdict(None, "pasted-code" if set_aside else "too-short")
    if is_acknowledgement(query):
        return Verdict(None, "acknowledgement")
    return Verdict(_shorten(query), "ok")
