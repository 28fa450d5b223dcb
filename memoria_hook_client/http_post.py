"""One HTTP/1.1 POST on its own connection, on bare sockets, for the command hook.

Not `http.client`, because it imports the email package and `ssl`: most of what the hook process
spent importing (`python -X importtime`), on every prompt. What the hook needs is small:
send one request with `Connection: close`, read a status and a body framed by Content-Length,
chunked transfer coding, or the close. `ssl` loads only for https. Standard library only.

For the same reason a plain http connection is made on `_socket`, the C module the `socket` module
wraps: importing `socket` builds its enums from every constant of `_socket` and imports `selectors`,
a good part of the start-up left; and the base URL is split here rather than by `urllib.parse`,
which imports `ipaddress`. Both were measured on every hook run (`memoria bench hook`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _socket import socket
    from collections.abc import Mapping

MAX_ANSWER_BYTES = 1024 * 1024
_MAX_HEADER_BYTES = 64 * 1024
_READ = 65536


class InvalidResponse(Exception):
    """The server's answer is not HTTP we can read, or is larger than we accept."""


#: The bytes a percent-encoded query value keeps as they are (RFC 3986's unreserved characters),
#: as `urllib.parse.quote(value, safe="")` does.
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def route_target(base_url: str, route: str, namespace: str | None) -> tuple[str, str, int | None, str]:
    """(scheme, host, port, path+query) of the API `route` under `base_url` (which may have a path),
    `?namespace=` added when one is given; ValueError for a URL that is not http(s). The URL is read
    as `urllib.parse.urlsplit` reads it (its scheme and host lower-cased, user info and the query
    left out, an IPv6 host without its brackets); tests/test_hook_client_url.py holds the two
    together."""
    scheme, separator, rest = base_url.strip().partition("://")
    scheme = scheme.lower()
    if not separator or scheme not in ("http", "https"):
        raise ValueError(f"not an http(s) URL: {base_url!r}")
    ends = [index for index in (rest.find(mark) for mark in "/?#") if index >= 0]
    authority, path = rest[: min(ends, default=len(rest))], rest[min(ends, default=len(rest)) :]
    path = path.partition("#")[0].partition("?")[0]
    host, port = _host_and_port(authority.rpartition("@")[2], base_url)
    path = path.rstrip("/") + route
    if namespace:
        path += "?namespace=" + "".join(
            chr(byte) if byte in _UNRESERVED else f"%{byte:02X}" for byte in namespace.encode("utf-8")
        )
    return scheme, host, port, path


def _host_and_port(host_port: str, base_url: str) -> tuple[str, int | None]:
    if host_port.startswith("["):
        host, bracket, after = host_port[1:].partition("]")
        if not bracket or (after and not after.startswith(":")):
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        port_text = after[1:]
    else:
        host, _, port_text = host_port.partition(":")
    if not host:
        raise ValueError(f"not an http(s) URL: {base_url!r}")
    if not port_text:
        return host.lower(), None
    if not (port_text.isascii() and port_text.isdigit()) or int(port_text) > 65535:
        raise ValueError(f"port out of range in {base_url!r}")
    return host.lower(), int(port_text)


def api_headers(key: str) -> dict[str, str]:
    """The header fields of a hook's JSON POST to the API with `key`."""
    return {
        "Authorization": f"Bearer {key}",
        "Content-Type": "application/json",
        "Accept": "application/json",
        "User-Agent": "memoria-hook",
    }


def http_post(
    scheme: str,
    host: str,
    port: int | None,
    path: str,
    headers: Mapping[str, str],
    body: bytes,
    timeout: float,
    answer_headers: dict[str, str] | None = None,
) -> tuple[int, bytes]:
    """(status, body) of one POST; OSError (TimeoutError included) when the connection fails. The
    answer's header fields (names lower-cased) go to `answer_headers` when one is given."""
    default_port = 443 if scheme == "https" else 80
    if scheme == "https":
        sock = _tls_connection(host, port or default_port, timeout)
    else:
        sock = _connection(host, port or default_port, timeout)
    try:
        authority = f"[{host}]" if ":" in host else host
        if port and port != default_port:
            authority += f":{port}"
        lines = [
            f"POST {path} HTTP/1.1",
            f"Host: {authority}",
            f"Content-Length: {len(body)}",
            "Connection: close",
        ]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        return read_response(sock, answer_headers)
    finally:
        sock.close()


def _connection(host: str, port: int, timeout: float) -> socket:
    """A TCP connection to the first of `host`'s addresses that takes one, as
    `socket.create_connection` makes it, on `_socket`; OSError (TimeoutError included) when none does."""
    import _socket

    failure: OSError | None = None
    for family, kind, protocol, _, address in _socket.getaddrinfo(
        _address(host), port, 0, _socket.SOCK_STREAM
    ):
        sock = _socket.socket(family, kind, protocol)
        try:
            sock.settimeout(timeout)
            sock.connect(address)
        except OSError as exc:
            sock.close()
            failure = exc
            continue
        return sock
    raise failure or OSError(f"no address found for {host}")


def _tls_connection(host: str, port: int, timeout: float) -> socket:
    """An https connection: `ssl` wraps a `socket.socket`, so this path imports both."""
    import socket as socket_module
    import ssl

    # typeshed says str, but `getaddrinfo` (which gets it) takes bytes too: see `_address`
    plain = socket_module.create_connection((_address(host), port), timeout=timeout)  # type: ignore[arg-type]
    return ssl.create_default_context().wrap_socket(plain, server_hostname=host)


def _address(host: str) -> str | bytes:
    """An ASCII host as bytes: `getaddrinfo` then skips the idna codec (an import saved on every run)."""
    try:
        return host.encode("ascii")
    except UnicodeEncodeError:
        return host


def read_response(sock: socket, answer_headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    """Status and body of the answer on `sock`: Content-Length, chunked, or read to the close."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(_READ)
        if not chunk or len(data) > _MAX_HEADER_BYTES:
            raise InvalidResponse("the server's answer has no complete HTTP header")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    version, _, rest_of_line = status_line.partition(" ")
    code = rest_of_line[:3]
    if not version.startswith("HTTP/") or not code.isdigit():
        raise InvalidResponse(f"not an HTTP answer: {status_line[:80]!r}")
    fields = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    if answer_headers is not None:
        answer_headers.update(fields)
    length = fields.get("content-length")
    if length is not None and length.isdigit() and int(length) > MAX_ANSWER_BYTES:
        raise InvalidResponse("answer is larger than 1 MiB")
    while length is None or len(rest) < int(length):
        if len(rest) > MAX_ANSWER_BYTES + _MAX_HEADER_BYTES:
            raise InvalidResponse("answer is larger than 1 MiB")
        chunk = sock.recv(_READ)
        if not chunk:
            if length is not None:
                raise InvalidResponse(f"answer cut short at {len(rest)} of {length} bytes")
            break
        rest += chunk
    if "chunked" in fields.get("transfer-encoding", "").lower():
        rest = dechunk(rest)
    elif length is not None:
        rest = rest[: int(length)]
    if len(rest) > MAX_ANSWER_BYTES:
        raise InvalidResponse("answer is larger than 1 MiB")
    return int(code), rest


def dechunk(data: bytes) -> bytes:
    """The body carried by a chunked transfer coding (extensions and trailers ignored)."""
    body = b""
    while True:
        size_line, sep, data = data.partition(b"\r\n")
        try:
            size = int(size_line.split(b";", 1)[0], 16)
        except ValueError:
            raise InvalidResponse("malformed chunked answer") from None
        if not sep or size == 0:
            return body
        if len(data) < size:
            raise InvalidResponse("chunked answer cut short")
        body, data = body + data[:size], data[size + 2 :]
