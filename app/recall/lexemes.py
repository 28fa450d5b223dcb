"""Common lexemes, read from the planner's statistics on `memories.search_vector`.

ANALYZE keeps the most common lexemes of a tsvector column and the share of rows holding each
(`pg_stats.most_common_elems` / `most_common_elem_freqs`). A lexeme in more than a small share of
the table says little about relevance but makes an OR match fetch thousands of rows, so the recall
statement leaves such lexemes out when it picks OR-tier candidates (they still count in the rank).
"""

from __future__ import annotations

import math
import time

import asyncpg

# most_common_elem_freqs carries three extra entries (min, max, null share): unnest pads the
# lexeme side with NULL for them.
_COMMON_LEXEMES_SQL = """
SELECT coalesce(array_agg(x.lexeme ORDER BY x.freq DESC), '{}'::text[])
FROM pg_stats s,
     unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS x (lexeme, freq)
WHERE s.schemaname = current_schema() AND s.tablename = 'memories' AND s.attname = 'search_vector'
  AND x.lexeme IS NOT NULL AND x.freq > $1
"""


class CommonLexemes:
    """The lexemes above `fraction` of all memories, re-read at most every `ttl_s` seconds.

    Reading pg_stats costs about a millisecond, too much for every recall and pointless: the
    statistics only change when (auto)ANALYZE runs. Empty until the table has been analysed.
    """

    def __init__(self, fraction: float, ttl_s: float) -> None:
        self._fraction = fraction
        self._ttl_s = ttl_s
        self._lexemes: list[str] = []
        self._read_at = -math.inf

    async def get(self, conn: asyncpg.Connection) -> list[str]:
        if self._fraction <= 0:
            return []
        now = time.monotonic()
        if now - self._read_at > self._ttl_s:
            self._lexemes = list(await conn.fetchval(_COMMON_LEXEMES_SQL, self._fraction))
            self._read_at = now
        return self._lexemes
