"""The hook client splits its server's URL itself (importing `urllib.parse` cost every hook run a
measurable part of its start-up): it reads every URL as `urllib.parse` does, and refuses the same
ones; the namespace is percent-encoded as `quote(namespace, safe="")` encodes it."""

from __future__ import annotations

from urllib.parse import quote, urlsplit

import pytest

from memoria_hook_client.http_post import route_target

URLS = [
    "http://127.0.0.1:8080",
    "http://127.0.0.1:8080/",
    "https://memoria.example.com",
    "HTTPS://Memoria.Example.COM:443/base/",
    "http://localhost:19500/prefix/api//",
    "http://user:secret@memoria.internal:9000/x",
    "http://[::1]:8080/",
    "http://[2001:db8::7]/memoria",
    "http://host:8080?debug=1",
    "http://host/path#frag",
    "http://host:/path",
    "  http://padded.example:81/p  ",
]
BAD_URLS = [
    "ftp://host/",
    "localhost:8080",
    "http://",
    "http://:8080/",
    "http://host:99999/",
    "http://host:80a/",
    "http://[::1/",
    "/v1/hooks",
]
NAMESPACES = ["repo:quokka-9", "a b/c?d&e=f", "Ünïcödé~space_.-", "100%", "github.com/org/repo", "#tag+x"]


REFUSED = r"not an http\(s\) URL|port out of range"


def _expected(url: str, route: str, namespace: str | None) -> tuple[str, str, int | None, str]:
    """What the client answered when it split URLs with `urllib.parse`."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url!r}")
    path = parts.path.rstrip("/") + route
    if namespace:
        path += "?namespace=" + quote(namespace, safe="")
    return parts.scheme, parts.hostname, parts.port, path


@pytest.mark.parametrize("url", URLS)
def test_a_server_url_is_read_as_urllib_reads_it(url: str) -> None:
    route = "/v1/hooks/codex/user-prompt-submit"
    assert route_target(url, route, None) == _expected(url, route, None)
    assert route_target(url, route, "repo:quokka-9") == _expected(url, route, "repo:quokka-9")


@pytest.mark.parametrize("url", BAD_URLS)
def test_a_url_that_is_not_http_with_a_host_and_a_valid_port_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match=REFUSED):
        route_target(url, "/v1/capture/codex", None)
    with pytest.raises(ValueError):  # noqa: PT011 - urllib's own messages vary
        _expected(url, "/v1/capture/codex", None)


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_the_namespace_is_percent_encoded_as_quote_with_nothing_safe_encodes_it(namespace: str) -> None:
    assert route_target("http://h", "/r", namespace)[3] == "/r?namespace=" + quote(namespace, safe="")
