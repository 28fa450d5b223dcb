"""How requests are read: strict JSON bodies, strict query types, and `OPTIONS` that lists every method.

Litestar converts every request value in msgspec's lax mode, which suits query strings (`limit=5`
must become 5) but not JSON, whose values carry their own types: lax mode accepted `"explain": 0` as
`false` and `"importance": "0.5"` as a number. `ApiRequest` therefore decodes a JSON body strictly,
straight into the handler's declared type, so the msgspec schema (which also writes the OpenAPI
document) is exactly what is accepted; what Litestar's own conversion then receives is already typed.
Bodies that cannot be decoded at all (not JSON, not UTF-8, nested deeper than the decoder's
recursion limit, empty) are 400 problems instead of the 500s they were, and so is a body with a key
twice in one object (`app.core.validation.duplicate_key`: a decoder would keep one silently).
"""

from __future__ import annotations

import functools
import re
from typing import Annotated, Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import ClientException, ValidationException
from litestar.params import KwargDefinition
from litestar.routes import HTTPRoute
from litestar.status_codes import HTTP_204_NO_CONTENT
from litestar.typing import FieldDefinition
from litestar.utils.typing import make_non_optional_union

from app.core.validation import duplicate_key

_AT_PATH = re.compile(r"^(?P<message>.*) - at `\$(?P<path>.*)`$", re.DOTALL)


def _parses_itself(target: Any) -> bool:
    return isinstance(target, type) and callable(getattr(target, "from_query", None))


def _parse_itself(target: Any, value: Any) -> Any:
    return target.from_query(value)


TYPE_DECODERS = [(_parses_itself, _parse_itself)]
"""Types that read their own text (`Type.from_query(text)`, raising ValueError when it is not one):
lax msgspec would read the query string `created_since=0.5` as a Unix time; `Timestamp` reads only
RFC 3339. Such a type also gives its OpenAPI schema as `Type.json_schema()` (app/openapi.py)."""


def _dec_hook(target: Any, value: Any) -> Any:
    if _parses_itself(target):
        return _parse_itself(target, value)
    raise NotImplementedError(f"cannot decode {target!r}")


@functools.lru_cache(maxsize=256)
def _decoder(target: Any) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(target, strict=True, dec_hook=_dec_hook)


def decode_json_body(body: bytes, target: Any) -> Any:
    """`body` decoded strictly as `target`; ClientException (400) or ValidationException (422) if not."""
    if not body.strip():
        raise ClientException("request body is empty: send a JSON document")
    try:
        decoded = _decoder(target).decode(body)
        if (twice := duplicate_key(body)) is not None:
            raise ClientException(
                f"request body is not valid: the key {twice[:80]!r} appears twice in one object"
            )
        return decoded
    except msgspec.ValidationError as exc:
        message, key = str(exc), None
        if located := _AT_PATH.match(message):
            message, key = located["message"], located["path"].removeprefix(".")
        error: dict[str, Any] = {"message": message, "source": "body"}
        if key:
            error["key"] = key
        raise ValidationException(detail="request body does not validate", extra=[error]) from exc
    except msgspec.DecodeError as exc:
        raise ClientException(f"request body is not valid JSON: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ClientException(f"request body is not valid JSON: it is not UTF-8 ({exc.reason})") from exc
    except RecursionError as exc:
        raise ClientException("request body is not valid JSON: it is nested too deeply") from exc


_CONSTRAINTS = {
    "gt": "gt",
    "ge": "ge",
    "lt": "lt",
    "le": "le",
    "multiple_of": "multiple_of",
    "pattern": "pattern",
    "min_length": "min_length",
    "max_length": "max_length",
    "min_items": "min_length",
    "max_items": "max_length",
}


def declared_type(field: FieldDefinition) -> Any:
    """The type a handler parameter declares, constraints included.

    Litestar takes the constraints out of an annotation (`PathParameter(ge=1)`, `Meta(le=200)`) into
    its own `kwarg_definition`; they are put back as a msgspec `Meta`, so decoding and the OpenAPI
    document (app/openapi.py) both see them.
    """
    meta: dict[str, Any] = {}
    if isinstance(kwarg := field.kwarg_definition, KwargDefinition):
        for name, meta_name in _CONSTRAINTS.items():
            if (value := getattr(kwarg, name, None)) is not None:
                meta[meta_name] = value
    if not meta:
        return field.annotation
    if field.is_optional:  # the constraints are on the value, as Litestar applies them
        return Annotated[make_non_optional_union(field.annotation), msgspec.Meta(**meta)] | None
    return Annotated[field.annotation, msgspec.Meta(**meta)]


class ApiRequest(Request[Any, Any, Any]):
    """The request class of the app: its JSON body is decoded strictly into the handler's `data` type."""

    async def json(self) -> Any:
        field = self.route_handler.parsed_data_field
        return decode_json_body(await self.body(), declared_type(field) if field is not None else Any)


async def before_request(request: Request[Any, Any, Any]) -> Response[None] | None:
    """Answers `OPTIONS` itself, and refuses an empty body where one is expected (400).

    Litestar builds its automatic OPTIONS handler with the first handler registered on a path and
    never updates its `Allow` when a later handler adds a method (`OPTIONS /v1/memories` said
    `GET, OPTIONS`, without POST), so the app answers it from the route, which knows them all. An
    empty body never reaches `ApiRequest.json`: Litestar reported it as the 422 "data: 'data'".
    """
    if request.method != "OPTIONS":
        if request.route_handler.parsed_data_field is not None and not await request.body():
            raise ClientException("request body is empty: send a JSON document")
        return None
    template = request.scope.get("path_template")
    for route in request.app.routes:
        if isinstance(route, HTTPRoute) and route.path_format == template:
            allow = ", ".join(sorted(route.methods))
            return Response(content=None, status_code=HTTP_204_NO_CONTENT, headers={"Allow": allow})
    return None
