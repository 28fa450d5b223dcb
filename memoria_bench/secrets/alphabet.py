"""What the credential generators and the look-alikes share: the alphabets credentials are written
in, the hosts, users and services their sentences name, and `Case`, one memory of the corpus."""

from __future__ import annotations

import random
import string
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
UPPER_ALNUM = string.ascii_uppercase + string.digits
BASE32 = string.ascii_uppercase + "234567"
HEX = "0123456789abcdef"
PASSWORD_CHARS = ALNUM + "!#%&*@^-_+=?"
URL_PASSWORD_CHARS = ALNUM + "-_.~"

HOSTS = ("db.internal", "pg-staging.corp", "10.0.3.17", "postgres.prod.svc", "cache.internal")
USERS = ("app", "deploy", "ci", "admin", "svc_memoria", "readonly")
SERVICES = ("billing", "search", "ingest", "auth", "payments", "reports", "notifier")


@dataclass(frozen=True, slots=True)
class Case:
    """One memory: `text`; for a credential, its kind and where it is (`text[start:end]`)."""

    text: str
    kind: str | None = None
    start: int = 0
    end: int = 0
    family: str = ""
    """The look-alike family of a negative (`commit-sha`, `uuid`, …); the kind of a positive."""

    @property
    def secret(self) -> str:
        return self.text[self.start : self.end]


def pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))
