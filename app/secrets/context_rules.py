"""Hand-written rules for what no maintained rule source covers: credentials known by their context.

The maintained catalog (app/secrets/catalog.py) knows provider formats with a distinctive prefix;
these are the ones it does not: a password that is only a password because of the command or the
header it sits in, or because the prose around it says so, and a few provider formats its rules
miss or accept only next to the provider's name. Each is here because that catalog version does not
find it:

- `Authorization: Basic …` outside a curl command (the catalog knows it only inside `curl -H`);
- `curl -u user:pw` whose password holds punctuation (`!`, `#`, `%`: the catalog's pattern stops at
  them, leaving the credential whole);
- `mysql -pPW` (and mysqldump, mysqladmin): the password glued to the flag;
- `user / password` in prose (`ssh in as admin / Tr0ub4dor&3`);
- a Twilio auth token (32 hex characters: a hash unless a `twilio … token` says otherwise), a Mailgun
  `key-…` private key named without the word mailgun, a Telegram bot token without the word
  telegram, a Firebase Cloud Messaging server key (`AAAA…:APA91b…`);
- the `private_key_id` of a Google service account's JSON (the catalog marks the whole object);
- a session cookie in a `Cookie:`/`Set-Cookie:` header (its name says what it is, its value is
  opaque);
- Google OAuth access tokens (`ya29.…`), Notion's legacy `secret_…` integration tokens and Alibaba
  Cloud access key ids (`LTAI…`), which that catalog version has no rule for.
"""

from __future__ import annotations

import re

from app.secrets.accept import basic_auth, bearer, mixed_case_token, password_in_prose, token, url_password
from app.secrets.rule import VALUE, Rule

_QUOTED_OR_BARE = r"""(?:"(?P<dq>[^"\n]{1,256})"|'(?P<sq>[^'\n]{1,256})'|(?P<bare>[^\s"'`]{1,256}))"""

BEFORE_CATALOG: tuple[Rule, ...] = (
    Rule(
        "basic-auth",
        re.compile(
            r"""authorization["']?[ \t]*[:=][ \t]*["']?basic[ \t]+"""
            r"(?P<token>[A-Za-z0-9+/_\-]{4,1024}={0,2})",
            re.IGNORECASE,
        ),
        ("authorization",),
        basic_auth,
        group="token",
        anchored=True,
    ),
    Rule(
        "password",
        re.compile(
            r"""curl\b[^\n]{0,512}?[ \t](?:-u|--user)(?:[ \t]+|=)?"""
            r"""(?:"[^":\n]{0,128}:(?P<dq>[^"\n]{1,256})"|'[^':\n]{0,128}:(?P<sq>[^'\n]{1,256})'"""
            r"""|[^\s:"'`]{0,128}:(?P<bare>[^\s"'`]{1,256}))""",
            re.IGNORECASE,
        ),
        ("curl",),
        url_password,
        group=VALUE,
        anchored=True,
    ),
    Rule(
        "password",
        re.compile(
            r"""mysql(?:dump|admin|import|check|sh)?\b[^\n]{0,256}?[ \t]-p""" + _QUOTED_OR_BARE,
            re.IGNORECASE,
        ),
        ("mysql",),
        url_password,
        group=VALUE,
        anchored=True,
    ),
    Rule(
        "twilio-auth-token",
        re.compile(
            r"twilio[^\n]{0,80}?(?:token|secret|auth)[^\n]{0,40}?"
            r"(?<![0-9A-Za-z])(?P<token>[0-9a-fA-F]{32})(?![0-9A-Za-z])",
            re.IGNORECASE,
        ),
        ("twilio",),
        token,
        group="token",
        anchored=True,
    ),
    Rule("mailgun-key", re.compile(r"key-[0-9a-z]{32}"), ("key-",), token, bounded=True, anchored=True),
    Rule(
        "telegram-bot-token", re.compile(r"[0-9]{8,10}:AA[0-9A-Za-z_\-]{33}"), (":aa",), token, bounded=True
    ),
    Rule(
        "fcm-server-key",
        re.compile(r"AAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{100,1024}"),
        (":apa91b",),
        token,
        bounded=True,
    ),
    Rule(
        "session-cookie",
        re.compile(
            r"(?:set-)?cookie[ \t]*:[^\n]{0,256}?(?<![\w\-])"
            r"(?:[\w\-]*sess(?:ion)?[\w\-]*|sid|auth[\w\-]*|[\w\-]*token|connect\.sid|phpsessid)"
            r"=(?P<value>[^\s;,\"']{16,1024})",
            re.IGNORECASE,
        ),
        ("cookie",),
        bearer,
        group="value",
        anchored=True,
    ),
    Rule(
        "google-oauth-token",
        re.compile(r"ya29\.[0-9A-Za-z_\-]{20,2048}"),
        ("ya29.",),
        mixed_case_token,
        bounded=True,
        anchored=True,
    ),
    Rule(
        "notion-token",
        re.compile(r"secret_[0-9A-Za-z]{43}"),
        ("secret_",),
        mixed_case_token,
        bounded=True,
        anchored=True,
    ),
    Rule(
        "alibaba-access-key",
        re.compile(r"LTAI[0-9A-Za-z]{12,20}"),
        ("ltai",),
        token,
        bounded=True,
        anchored=True,
    ),
    Rule(
        "gcp-private-key-id",
        re.compile(r"""private_key_id["']?[ \t]*[:=][ \t]*["']?(?P<id>[0-9a-f]{40})(?![0-9A-Za-z])"""),
        ("private_key_id",),
        token,
        group="id",
        anchored=True,
    ),
)
"""Formats and commands: run before the catalog, so they keep their own kind where both find one."""

AFTER_CATALOG: tuple[Rule, ...] = (
    Rule(
        "password",
        re.compile(
            r"(?:login|log[ \t]in|sign[ \t]in|creds?|credentials|account|user(?:name)?|ssh|admin"
            r"|root|default)\b[^\n]{0,60}?"
            # `admin / pw`, or `admin/pw` standing alone as a word (not a piece of a path or of base64)
            r"(?:[ \t]/[ \t]*|(?:(?<=[\s(,])|(?<=^))[A-Za-z0-9_.\-]{2,32}/)"
            r"(?P<bare>[^\s\"'`/]{6,256})(?=[\s,;)]|[.!?]?$|[.!?]\s)",
            re.IGNORECASE,
        ),
        ("login", "log in", "sign in", "cred", "account", "user", "ssh", "admin", "root", "default"),
        password_in_prose,
        group=VALUE,
        word_start=True,
        anchored=True,
        after_catalog=True,
    ),
)
"""Prose: `log in as admin / Tr0ub4dor&3`; the value must look like a password, not a word."""
