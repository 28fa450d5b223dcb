"""One way a kind of credential shows up, as app/secrets/detect.py runs it (the rules themselves are
app/secrets/rules.py and app/secrets/context_rules.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.secrets.accept import Accept, always


@dataclass(frozen=True, slots=True)
class Rule:
    """One way a kind of credential shows up.

    `group`: the part of the match that is the secret (the password of a URL); `VALUE` for a value that
    may be quoted (groups `dq`, `sq`, `bq` or `bare`: the one that matched, without its quotes, a bare
    one without the sentence's closing punctuation). `triggers`: lowercase substrings one of which the
    text must hold for the rule to run. `anchored`: the pattern starts with one of its triggers, so it
    is tried only where they occur (`str.find`, fast) instead of at every position of the text (a
    case-insensitive pattern, or one starting with an alternation, costs about a millisecond per 4,000
    characters that way). `tail`: characters the token may continue with past what the pattern matched
    (detect-secrets' patterns match a fixed length; a longer real token must not leave a fragment
    behind). `bounded`: the token must not start or end inside a longer word. `word_start`: only the
    start is checked (before matching, like `bounded`'s start, so `eyJeyJeyJ…` costs one attempt, not
    one per `eyJ`). `after_catalog`: a rule that knows a credential by its context only (a keyword, a
    command line), run after the maintained catalog (app/secrets/catalog.py), so a provider format the
    catalog names keeps the provider's kind.
    """

    kind: str
    pattern: re.Pattern[str]
    triggers: tuple[str, ...]
    accept: Accept = always
    group: int | str = 0
    tail: re.Pattern[str] | None = None
    bounded: bool = False
    word_start: bool = False
    anchored: bool = False
    after_catalog: bool = False


VALUE = "(quoted value)"
"""`Rule.group` for a value that may be quoted: see `Rule` (not a valid group name, so no pattern's
own group can mean it by accident)."""
