"""SQL of request authentication and its rate limits.

A bucket row holds `tokens` as of `updated_at`; it refills at a rate up to a burst, and a missing
row is a full bucket. Every request takes one token by storing `refilled - 1`: when that is
negative the request was refused, and the row reads back as `tokens + 1` (a refusal costs
nothing, and the sign tells the caller the outcome in the row `RETURNING` gives back, which is the
only row an upsert can return). `now()` of a transaction that started earlier than the last
writer's may lie before `updated_at`: elapsed time is never negative and `updated_at` never moves
back, so no interval is counted twice.
"""

from __future__ import annotations


def _refilled(rate: str, burst: str, row: str = "") -> str:
    """SQL: the tokens of a bucket row now, refilled at `rate` per second up to `burst`."""
    tokens, updated_at = f"{row}tokens", f"{row}updated_at"
    held = f"CASE WHEN {tokens} < 0 THEN {tokens} + 1 ELSE {tokens} END"
    return f"least({burst}, {held} + {rate} * greatest(0, extract(epoch FROM now() - {updated_at})))"


def _take(bucket: str, rate: str, burst: str, when: str) -> str:
    """An upsert taking one token from `bucket` when `when` holds; RETURNING the stored tokens."""
    return f"""
    INSERT INTO rate_limits AS b (bucket, tokens, updated_at)
    SELECT {bucket}, {burst} - 1, now() {when}
    ON CONFLICT (bucket) DO UPDATE
    SET tokens = {_refilled(rate, burst, "b.")} - 1, updated_at = greatest(b.updated_at, now())
    RETURNING b.tokens
    """


KEY_BUCKET_PREFIX = "key:"
ADDRESS_BUCKET_PREFIX = "addr:"

# One round trip per request: is the address locked out, whose key is this (live, unexpired), take
# a token from the key's bucket, note the key's use (at most once per `$7` seconds: the row lock
# and WAL of an UPDATE are paid once a minute, not per request), or count a failure against the
# address. A locked-out address's key is not even looked up.
#   $1 key hash, $2 the address's bucket, $3/$4 key rate per second and burst (NULL rate: no limit),
#   $5/$6 failure rate per second and burst (NULL rate: no limit), $7 last-use resolution in seconds
AUTHENTICATE = f"""
WITH address AS (
    SELECT {_refilled("$5::float8", "$6::float8")} AS tokens
    FROM rate_limits WHERE bucket = $2::text AND $5::float8 IS NOT NULL
),
locked_out AS (
    SELECT tokens FROM address WHERE tokens < 1
),
found AS (
    SELECT u.id AS user_id, u.name, k.id AS key_id, k.scopes,
           extract(epoch FROM k.expires_at - now())::float8 AS expires_in_s
    FROM api_keys k JOIN users u ON u.id = k.user_id
    WHERE k.key_hash = $1::bytea
      AND k.revoked_at IS NULL
      AND (k.expires_at IS NULL OR k.expires_at > now())
      AND NOT EXISTS (SELECT FROM locked_out)
),
used AS (
    UPDATE api_keys SET last_used_at = now()
    WHERE id = (SELECT key_id FROM found)
      AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => $7::float8))
    RETURNING id
),
key_bucket AS ({
    _take(
        f"'{KEY_BUCKET_PREFIX}' || f.key_id",
        "$3::float8",
        "$4::float8",
        "FROM found f WHERE $3::float8 IS NOT NULL",
    )
}),
failure AS ({
    _take(
        "$2::text",
        "$5::float8",
        "$6::float8",
        "WHERE $5::float8 IS NOT NULL AND NOT EXISTS (SELECT FROM found) "
        "AND NOT EXISTS (SELECT FROM locked_out)",
    )
})
SELECT (SELECT tokens FROM locked_out) AS locked_out_tokens,
       f.user_id, f.name, f.key_id, f.scopes, f.expires_in_s,
       (SELECT tokens FROM key_bucket) AS key_tokens,
       (SELECT tokens FROM failure) AS failure_tokens
FROM (SELECT) AS one LEFT JOIN found f ON true
"""

# A key a replica has verified takes its next $4 requests from its bucket at once: the bucket then
# holds $4 fewer tokens, as if they had been made. No row when it holds fewer than $4 (or none, swept
# idle): the caller then authenticates afresh, which takes one token or refuses with the wait.
#   $1 the key's bucket, $2/$3 key rate per second and burst, $4 the lease
LEASE = f"""
UPDATE rate_limits AS b
SET tokens = {_refilled("$2::float8", "$3::float8", "b.")} - $4::float8,
    updated_at = greatest(b.updated_at, now())
WHERE b.bucket = $1::text AND {_refilled("$2::float8", "$3::float8", "b.")} >= $4::float8
RETURNING b.tokens
"""

# One request of a signed-in web UI session, from its key's bucket (its API requests take from the
# same one): the stored tokens, negative when the request is refused.
#   $1 the key's bucket, $2/$3 key rate per second and burst
TAKE = _take("$1::text", "$2::float8", "$3::float8", "")

# Bounded: at most $2 buckets idle for more than $1 seconds (full again, so the same as no row),
# oldest first, skipping any a request holds right now.
SWEEP = """
DELETE FROM rate_limits
WHERE bucket IN (
    SELECT bucket FROM rate_limits
    WHERE updated_at < now() - make_interval(secs => $1::float8)
    ORDER BY updated_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
"""

KEY_DETAILS = """
SELECT k.prefix, k.expires_at FROM api_keys k WHERE k.id = $1
"""
