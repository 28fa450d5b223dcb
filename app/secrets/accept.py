"""Whether a value a rule matched is a real credential rather than a placeholder or an identifier.

Context decides, never shape alone: a 40-character hex string is a commit SHA unless an
`aws…secret…key=` names it, and a random base64 run is data unless a known prefix or a keyword
assignment says otherwise. So there is no context-free "high entropy string" rule; entropy only
tells a real value from a placeholder (`ghp_xxxx…`, `YOUR_API_KEY`, `${TOKEN}`). Each function here
is one rule's judgement (`Rule.accept`, app/secrets/rules.py), built on detect-secrets' entropy, its
JWT validity check and its look-alike heuristics.
"""

from __future__ import annotations

import base64
import binascii
import re
import string
from collections.abc import Callable

from detect_secrets.filters.heuristic import is_sequential_string, is_templated_secret
from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
from detect_secrets.plugins.jwt import JwtTokenDetector


class _PrintableEntropy(HighEntropyStringsPlugin):
    """detect-secrets' entropy over every visible ASCII character: its base64 alphabet would not count
    the punctuation that makes a password (`%a_@@9z=T=`)."""

    secret_type = "Printable High Entropy String"  # noqa: S105 - a label, not a secret

    def __init__(self) -> None:
        super().__init__(charset=string.ascii_letters + string.digits + string.punctuation, limit=3.0)


class Entropy:
    """Shannon entropy in bits per character, as detect-secrets computes it for its entropy plugins."""

    def __init__(self) -> None:
        self._plugin = _PrintableEntropy()

    def __call__(self, value: str) -> float:
        return float(self._plugin.calculate_shannon_entropy(value))


Accept = Callable[[Entropy, str], bool]
"""Whether a matched value is a real credential rather than a placeholder or an identifier."""


_PLACEHOLDER_WORDS = (
    "your",
    "example",
    "placeholder",
    "changeme",
    "change_me",
    "change-me",
    "redacted",
    "dummy",
    "sample",
    "replace",
    "xxxx",
    "****",
    "....",
    "<",
    ">",
    "todo",
    "insert",
)
_STOPWORDS = frozenset({"none", "null", "nil", "true", "false", "empty", "required", "optional", "unset"})
_ENV_NAME = re.compile(r"^[A-Z]+(?:_[A-Z0-9]+)*$")
_NAME_PART = r"(?:[a-z_$][a-z0-9_$]*|[A-Z_][A-Z0-9_]*|[a-z]+(?:[A-Z][a-z0-9]+)+)"
_DOTTED_NAME = re.compile(rf"^{_NAME_PART}(?:\.{_NAME_PART})+$")
"""`settings.db_password`, `process.env.API_KEY`, `config.clientSecret`: code naming a value."""
_WORDS = re.compile(r"^[a-z]+(?:[-_. ][a-z]+)*$")
_WORD = re.compile(r"^[A-Z]?[a-z]+$")
"""`Welcome`, `required`: a word, not a password (`eeRDoizbbL` is one)."""
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_PRINTF = re.compile(r"^%(?:\(|s$|[A-Za-z_]+%$)")


_BASE64 = re.compile(r"^[A-Za-z0-9+/]{40,}={0,2}$")


def _base64_blob(value: str) -> bool:
    """Base64 of random bytes (`/Sadl0Fs1Smb…==`), which may start with a `/` that no path has: long,
    no `.`, `_` or `-`, and letters of both cases with digits."""
    return bool(_BASE64.match(value)) and _classes(value.rstrip("=").replace("/", "").replace("+", "")) >= 3


def _classes(value: str) -> int:
    """How many of lower case, upper case, digits and other characters `value` uses."""
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )


def _placeholder_word(value: str) -> bool:
    """`YOUR_API_KEY`, `your-key-here`, `Example`: a placeholder word in one case. Mixed-case matches
    (`tODO` inside `4LYdjMt0sLuKOkk5PfE33YtODObdap…`) are random characters, not words."""
    return any(
        form in value for word in _PLACEHOLDER_WORDS for form in (word, word.upper(), word.capitalize())
    )


def _placeholder(value: str, *, names: bool = True) -> bool:
    """A documentation or template value: `YOUR_API_KEY`, `<token>`, `${DB_PASSWORD}`, `xxxx`, `$TOKEN`;
    with `names`, also what an assignment names instead of a value: `os.environ[...]`,
    `settings.db_password`, an env variable's name, a path, a URL."""
    simple = (
        is_templated_secret(value)
        or value[0] in "${[(<"
        or bool(_PRINTF.match(value))
        or _placeholder_word(value)
        or value.lower() in _STOPWORDS
        or "{{" in value
        or len(set(value)) <= 3
        or is_sequential_string(value)
    )
    return simple or (
        names
        and (
            "(" in value
            or bool(_ENV_NAME.match(value))
            or bool(_DOTTED_NAME.match(value))
            or (value.startswith(("/", "./", "~/", "../")) and not _base64_blob(value))
            or "://" in value
        )
    )


def token(entropy: Entropy, value: str) -> bool:
    """A provider token: random, so never sequential, repetitive or a documentation value
    (`AKIAIOSFODNN7EXAMPLE`, `ghp_xxxx…`)."""
    return (
        not is_sequential_string(value)
        and len(set(value)) > 6
        and not _placeholder_word(value)
        and entropy(value) >= 3.0
    )


def mixed_case_token(entropy: Entropy, value: str) -> bool:
    """A token whose prefix is short or common (`pa-`, `sk-`, `hf_`): random letters of both cases,
    which kebab-case names (`pa-payments-reconciler-7f9c8d6b5d-x2x9k`) never have."""
    return (
        token(entropy, value)
        and any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and entropy(value) >= 3.5
    )


def bearer(entropy: Entropy, value: str) -> bool:
    """An opaque bearer token: letters and digits (hex ones included), not a word or a variable."""
    if _placeholder(value) or not token(entropy, value) or _WORDS.match(value):
        return False
    has_digit = any(c.isdigit() for c in value)
    mixed_case = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return any(c.isalpha() for c in value) and (has_digit or (mixed_case and len(value) >= 24))


def aws_secret(entropy: Entropy, value: str) -> bool:
    """40 base64 characters of mixed case; a hex run of the same length is a SHA-1."""
    return (
        not _HEX.match(value)
        and any(c.islower() for c in value)
        and any(c.isupper() for c in value)
        and not _placeholder(value, names=False)
        and entropy(value) >= 3.5
    )


def jwt(entropy: Entropy, value: str) -> bool:
    return value.count(".") >= 2 and bool(JwtTokenDetector.is_formally_valid(value))


_DOC_PASSWORDS = frozenset({"password", "pass", "passwd", "pwd", "secret"})


def url_password(entropy: Entropy, value: str) -> bool:
    """Any password in a URL but the documentation ones (`user:password@`, `:<pass>@`, `:****@`)."""
    return value.lower() not in _DOC_PASSWORDS and not _placeholder(value, names=False)


def password(entropy: Entropy, value: str) -> bool:
    """A `password=`/`password is` value: short ones count, but not words (`is rotated weekly`)."""
    return (
        len(value) >= 6
        and not _placeholder(value)
        and not value.isdigit()
        and _classes(value) >= 2
        and not _WORDS.match(value)
        and not _WORD.match(value)
        and entropy(value) >= 2.5
    )


def secret(entropy: Entropy, value: str) -> bool:
    """An `api_key=`/`token:`/`secret:` value: long and random, unlike names, numbers and paths."""
    if len(value) < 10 or _placeholder(value) or _WORDS.match(value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    long_random = len(value) >= 24 and entropy(value) >= 4.0
    return has_alpha and (has_digit or long_random) and _classes(value) >= 2 and entropy(value) >= 3.0


def always(entropy: Entropy, value: str) -> bool:
    return True


def npm_auth_token(entropy: Entropy, value: str) -> bool:
    """An `.npmrc` `_authToken=` value: a token, unless it names one (`${NPM_TOKEN}`)."""
    return not _placeholder(value) and token(entropy, value)


_PASSPHRASE = re.compile(r"^[A-Za-z]{2,}(?:[ \-_.][A-Za-z]{2,}){3,}$")
"""`correct horse battery staple`: four or more words, what a passphrase is made of."""


def _passphrase(value: str) -> bool:
    return len(value) >= 16 and bool(_PASSPHRASE.match(value)) and not _placeholder(value, names=False)


def password_in_prose(entropy: Entropy, value: str) -> bool:
    """A password that prose names (`admin / Tr0ub4dor&3`): a `password`, or a passphrase; not a
    command-line flag (`--help`)."""
    return not value.startswith("-") and (password(entropy, value) or _passphrase(value))


def strong_password(entropy: Entropy, value: str) -> bool:
    """A value after `password`/`passphrase` with no `=`, `:` or `is` between (`passphrase Zq7!mvK2`):
    prose uses the word that way too (`password reset123 link`), so it takes three kinds of
    character, or a passphrase."""
    return password_in_prose(entropy, value) and (_classes(value) >= 3 or _passphrase(value))


_IDENTIFIER = re.compile(r"^(?:[A-Z][a-z]{2,}|[A-Z]{2,5}(?=[A-Z][a-z])|[a-z]{2,}|[0-9]{1,6}|_)+$")
"""`TokenRefreshHandler2024Impl`, `HTTPClientV2`: words run together, a class or function name."""


def token_in_prose(entropy: Entropy, value: str) -> bool:
    """A value right after `token`/`api key`/`secret` with no `=`, `:` or `is` (`the vercel token
    NGpu…`): prose puts hashes, ids and names there too (`the cache key d41d8cd9…`, `token
    rotation`), so only a long random run of upper and lower case letters and digits counts."""
    core = value.rstrip(".,;:)]}")
    return (
        len(core) >= 20
        and not _placeholder(core)
        and not _IDENTIFIER.match(core)
        and any(c.isupper() for c in core)
        and any(c.islower() for c in core)
        and any(c.isdigit() for c in core)
        and token(entropy, core)
        and entropy(core) >= 4.0
    )


def basic_auth(entropy: Entropy, value: str) -> bool:
    """An `Authorization: Basic` value: base64 of `user:password`; one that does not decode that way
    still counts when it looks like a token (a header a client sends is never prose)."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), altchars=b"-_", validate=False)
        text = decoded.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        text = ""
    if ":" in text and text.isprintable():
        _, secret_part = text.split(":", 1)
        return bool(secret_part) and url_password(entropy, secret_part)
    return bearer(entropy, value)


def catalog_value(entropy: Entropy, value: str) -> bool:
    """What a maintained catalog rule matched (app/secrets/catalog.py): its rule judged the format and
    context; only documentation values are refused (`AKIAIOSFODNN7EXAMPLE`, `xxxx…`, `${TOKEN}`,
    `user:password@`)."""
    return value.lower() not in _DOC_PASSWORDS and not _placeholder(value, names=False)
