"""`/schema/openapi.json` that tells the truth: schemas from msgspec, every status a route answers.

Litestar's generator gives the skeleton (paths, operations, parameter names, summaries, tags), but
its schemas drift from what the app does: integer bounds become floats (`le=2**63 - 1` was written
as 9.223372036854776e18, which refused valid ids), a bound of 0 is dropped, constraints on list
items are lost, and every error is documented as its own `application/json` shape under 400 while
the app answers `application/problem+json` with 401, 404, 409, 413, 422 and 503.

So every schema in the document is msgspec's own JSON Schema of the type the handler declares: what
`ApiRequest` decodes strictly (app/http.py) and what responses encode. Every operation lists the
statuses it answers: its success status, the ones its route declares (`responses=`, e.g. a 404 made
with `app.errors.problem`), and those the app answers for any route of its kind (`_app_answers`).

The Swagger UI page (`LocalSwaggerUI`) loads its scripts, stylesheet and icon from this server, out
of the `swagger-ui-py` package, never from a public CDN: a CDN that served altered code would run it
in the page where an operator types an API key.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any, Union, get_args, get_origin

import msgspec
from litestar import Litestar, MediaType, Request, Response, Router, get
from litestar.datastructures import CacheControlHeader
from litestar.exceptions import NotFoundException
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.plugins import JsonRenderPlugin, SwaggerRenderPlugin
from litestar.params import FromPath
from litestar.response import File
from litestar.routes import HTTPRoute
from litestar.typing import FieldDefinition

from app.errors import PROBLEM_MEDIA_TYPE, Problem
from app.http import declared_type

REF_TEMPLATE = "#/components/schemas/{name}"
PROBLEM_REF = REF_TEMPLATE.format(name="Problem")


def _app_answers(operation: dict[str, Any], handler: HTTPRouteHandler) -> dict[int, str]:
    """The problem statuses the app itself answers for an operation, from its shape."""
    answers: dict[int, str] = {}
    security = operation.get("security") or []
    # `{}` among the schemes: the key is optional (the Claude Code hooks, which answer every refusal,
    # a missing key included, with 200 `{}` and never a 401, 403, 429 or 503)
    if security and {} not in security:  # the API-key middleware, which reads the database
        answers[401] = "Missing, unknown, revoked or expired API key"
        answers[403] = "The API key lacks the scope this route needs; `required_scope` names it"
        answers[429] = "Rate limited (the key's requests, or the address's failed authentications)"
        answers[503] = "The database is unreachable; retry later"
    if "requestBody" in operation:
        answers[400] = "The body is not a JSON document: malformed, not UTF-8, empty or nested too deeply"
        answers[413] = "The body is larger than MEMORIA_SERVER__MAX_BODY_BYTES"
    if "requestBody" in operation or operation.get("parameters"):
        answers[422] = "A parameter or the body does not validate; `errors` names each field"
    return answers


def _schema_hook(target: Any) -> dict[str, Any]:
    """Types that read their own text (app/http.py `TYPE_DECODERS`) give their own schema."""
    json_schema = getattr(target, "json_schema", None)
    if callable(json_schema):
        schema: dict[str, Any] = json_schema()
        return schema
    raise NotImplementedError


def _struct_arms(target: Any) -> tuple[Any, ...] | None:
    """The arms of a union of several structs, which msgspec describes only when they are tagged
    (`StoreResult | StoreBatchResult` is told apart by its fields, and encoded as either)."""
    if get_origin(target) in (Union, types.UnionType):
        arms = get_args(target)
        if sum(isinstance(arm, type) and issubclass(arm, msgspec.Struct) for arm in arms) > 1:
            return arms
    return None


Finish = Callable[[dict[str, Any]], dict[str, Any]]


class _Schemas:
    """Collects (place, type) pairs, then fills every place with one msgspec schema-components run,
    so all places share one set of named components."""

    def __init__(self) -> None:
        self._types: list[Any] = []
        self._places: list[tuple[Any, Any, Finish]] = []

    def put(self, holder: Any, key: Any, target: Any, finish: Finish = lambda schema: schema) -> None:
        """`holder[key]` will be `finish(schema of target)`."""
        if (arms := _struct_arms(target)) is not None:
            any_of: list[Any] = [None] * len(arms)
            holder[key] = finish({"anyOf": any_of})
            for index, arm in enumerate(arms):
                self.put(any_of, index, arm)
            return
        self._types.append(target)
        self._places.append((holder, key, finish))

    def fill(self) -> dict[str, Any]:
        """Write every schema into its place; return the named components."""
        # Problem last: the problem responses refer to it by name, so it must be a component.
        (*schemas, _), components = msgspec.json.schema_components(
            [*self._types, Problem], schema_hook=_schema_hook, ref_template=REF_TEMPLATE
        )
        for (holder, key, finish), schema in zip(self._places, schemas, strict=True):
            holder[key] = finish(schema)
        return components


def _parameter_schema(default: Any) -> Finish:
    """A parameter that may be absent is optional, not nullable (a query string has no null); its
    default is the handler's."""

    def finish(schema: dict[str, Any]) -> dict[str, Any]:
        arms = schema.get("anyOf")
        if isinstance(arms, list):
            kept = [arm for arm in arms if arm != {"type": "null"}]
            if len(kept) == 1:
                schema = {**{k: v for k, v in schema.items() if k != "anyOf"}, **kept[0]}
        return schema if default is None else {**schema, "default": default}

    return finish


def _media_type(media_type: Any) -> str:
    """`MediaType.JSON` as the string it stands for; a handler returning a `Response` has none."""
    return str(getattr(media_type, "value", media_type)) or MediaType.JSON.value


def _success_type(handler: HTTPRouteHandler) -> Any:
    returned = handler.parsed_fn_signature.return_type
    if returned.is_subclass_of(Response):
        return returned.inner_types[0].annotation if returned.inner_types else Any
    return returned.annotation


def _document(operation: dict[str, Any], handler: HTTPRouteHandler, schemas: _Schemas) -> None:
    fields: dict[str, FieldDefinition] = handler.parsed_fn_signature.parameters
    for parameter in operation.get("parameters", []):
        field = fields[parameter["name"]]
        default = field.default if field.has_default else None
        schemas.put(parameter, "schema", declared_type(field), _parameter_schema(default))

    if (data := handler.parsed_data_field) is not None:
        for body in operation["requestBody"]["content"].values():
            schemas.put(body, "schema", declared_type(data))

    documented = operation.get("responses", {})
    responses: dict[str, Any] = {}
    status = str(handler.status_code)
    success: dict[str, Any] = {"description": documented.get(status, {}).get("description", "OK")}
    success_type = _success_type(handler)
    if success_type not in (None, type(None)):
        media: dict[str, Any] = {}
        success["content"] = {_media_type(handler.media_type): media}
        schemas.put(media, "schema", success_type)
    responses[status] = success
    for code, spec in (handler.responses or {}).items():
        content: dict[str, Any] = {}
        responses[str(code)] = {
            "description": spec.description,
            "content": {_media_type(spec.media_type): content},
        }
        schemas.put(content, "schema", spec.data_container)
    for code, description in _app_answers(operation, handler).items():
        responses.setdefault(
            str(code),
            {"description": description, "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": PROBLEM_REF}}}},
        )
    operation["responses"] = dict(sorted(responses.items()))


def truthful_openapi(app: Litestar, generated: dict[str, Any]) -> dict[str, Any]:
    """Litestar's document for `app` with every schema and every operation's responses rewritten."""
    spec: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(generated))  # a private copy
    schemas = _Schemas()
    for route in app.routes:
        if not isinstance(route, HTTPRoute) or (path_item := spec["paths"].get(route.path_format)) is None:
            continue
        for method, (handler, _) in route.route_handler_map.items():
            if (operation := path_item.get(method.lower())) is not None:
                _document(operation, handler, schemas)
    spec.setdefault("components", {})["schemas"] = schemas.fill()
    return spec


class OpenAPIJsonPlugin(JsonRenderPlugin):
    """Serves `truthful_openapi` at `/schema/openapi.json` (the Swagger UI reads it from there)."""

    def __init__(self) -> None:
        super().__init__()
        self._spec: dict[str, Any] | None = None

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        if self._spec is None:
            self._spec = truthful_openapi(request.app, openapi_schema)
        return self.render_json(request, self._spec)


SWAGGER_UI_PACKAGE = "swagger_ui"  # the import name of the `swagger-ui-py` distribution
SWAGGER_UI_ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui-standalone-preset.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon-32x32.png": "image/png",
}
"""The files the page loads: the package holds more (the Swagger Editor), which are not served."""


def _swagger_ui_static() -> Path:
    """The package's `static` directory, found without importing the package (its `__init__` sets up
    integrations with other web frameworks that this app does not use)."""
    spec = importlib.util.find_spec(SWAGGER_UI_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the Swagger UI assets are missing: install the `swagger-ui-py` package")
    return Path(next(iter(spec.submodule_search_locations))) / "static"


class LocalSwaggerUI(SwaggerRenderPlugin):
    """Litestar's Swagger UI page with every asset served by the app itself.

    The assets live under `<docs path>/swagger-ui/<package version>/`: a new package version is a new
    URL, so a browser may keep each file for a year without ever running a stale bundle.
    """

    def __init__(self) -> None:
        super().__init__()
        self._static = _swagger_ui_static()
        self._version = importlib.metadata.version("swagger-ui-py")

    def receive_router(self, router: Router) -> None:
        """Point the page at the assets under the docs router's path, and serve them there."""
        super().receive_router(router)  # the OAuth2 redirect page
        base = f"/swagger-ui/{self._version}"
        public = f"{router.path.rstrip('/')}{base}"
        self.js_url = f"{public}/swagger-ui-bundle.js"
        self.standalone_preset_js_url = f"{public}/swagger-ui-standalone-preset.js"
        self.css_url = f"{public}/swagger-ui.css"
        self.favicon = f"<link rel='icon' type='image/png' href='{public}/favicon-32x32.png'>"
        static = self._static

        @get(
            f"{base}/{{name:str}}",
            include_in_schema=False,
            cache_control=CacheControlHeader(public=True, max_age=365 * 24 * 3600),
        )
        async def swagger_ui_asset(name: FromPath[str]) -> File:
            media_type = SWAGGER_UI_ASSETS.get(name)
            if media_type is None:
                raise NotFoundException(f"no Swagger UI asset named {name!r}")
            return File(static / name, media_type=media_type, content_disposition_type="inline")

        router.register(swagger_ui_asset)
