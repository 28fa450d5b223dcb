"""One HTTP/1.1 POST on its own connection, on bare `socket`, for the command hook.

Not `http.client`, because it imports the email package and `ssl`: most of what the hook process
spent importing (`python -X importtime`), on every prompt. What the hook needs is small:
send one request with `Connection: close`, read a status and a body framed by Content-Length,
chunked transfer coding, or the close. `ssl` loads only for https. Standard library only.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from socket import socket

MAX_ANSWER_BYTES = 1024 * 1024
_MAX_HEADER_BYTES = 64 * 1024
_READ = 65536


class InvalidResponse(Exception):
    """The server's answer is not HTTP we can read, or is larger than we accept."""


def route_target(base_url: str, route: str, namespace: str | None) -> tuple[str, str, int | None, str]:
    """(scheme, host, port, path+query) of the API `route` under `base_url` (which may have a path),
    `?namespace=` added when one is given; ValueError for a URL that is not http(s)."""
    from urllib.parse import quote, urlsplit

    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {base_url!r}")
    path = parts.path.rstrip("/") + route
    if namespace:
        path += "?namespace=" + quote(namespace, safe="")
    return parts.scheme, parts.hostname, parts.port, path


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
    import socket

    default_port = 443 if scheme == "https" else 80
    # typeshed says str, but `getaddrinfo` (which gets it) takes bytes too: see `_address`
    address = (_address(host), port or default_port)
    sock = socket.create_connection(address, timeout=timeout)  # type: ignore[arg-type]
    try:
        if scheme == "https":
            import ssl

            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
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
