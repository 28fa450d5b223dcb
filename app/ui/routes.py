"""The UI's router (pages, static files, HTML errors) and its template engine, for `create_app`."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from litestar import Router
from litestar.di import Provide
from litestar.exceptions import HTTPException
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.static_files import create_static_files_router
from litestar.template.config import TemplateConfig
from litestar.types import ControllerRouterHandler
from markupsafe import Markup

from app.middleware import UI_OPT
from app.ui.pages.concepts import concept_graph, concept_page, concepts_page
from app.ui.pages.links import add_link, undo_link
from app.ui.pages.memories import MemoryPages
from app.ui.pages.overview import health_page, namespaces_page
from app.ui.pages.recall import recall_page
from app.ui.pages.signin import home, signin, signin_page, signout
from app.ui.web import html_error, signed_in

HERE = Path(__file__).parent
STATIC_PATH = "/ui/static"
INSTALLED_ASSETS = Path(sys.prefix) / "share" / "memoria" / "ui"
"""Where an image keeps the vendored browser library (`vendor/`): the Dockerfile installs it into
the venv. A checkout has it in `static/vendor/` instead (`.ci/ui-assets.sh`, run by `make`)."""


def _when(value: datetime | None) -> str:
    """A timestamp in ISO 8601 UTC to the minute (`2026-11-24T13:31Z`), as the API and the CLI
    write them, never in the browser's locale; the `<time>` element carries it to the second."""
    if value is None:
        return "—"
    utc = value.astimezone(UTC)
    return Markup('<time datetime="{}">{}</time>').format(
        utc.isoformat(timespec="seconds").replace("+00:00", "Z"), utc.strftime("%Y-%m-%dT%H:%MZ")
    )


def template_config() -> TemplateConfig[JinjaTemplateEngine]:
    """Jinja with autoescaping for every template (what users stored is never markup) and strict
    undefined names (a template typo fails its test instead of rendering blank)."""
    environment = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["when"] = _when
    environment.globals["static"] = lambda name: f"{STATIC_PATH}/{name}"
    return TemplateConfig(engine=JinjaTemplateEngine.from_environment(environment))


def ui_router(services: dict[str, Provide]) -> Router:
    """Every UI route, given the providers of the domain services the pages use (`memories`,
    `recall`, `links`), as the API's router gets them."""
    handlers: list[ControllerRouterHandler] = [
        home,
        signin_page,
        signin,
        signout,
        namespaces_page,
        MemoryPages,
        add_link,
        undo_link,
        recall_page,
        concepts_page,
        concept_page,
        concept_graph,
        health_page,
    ]
    errors: dict[int | type[Exception], Any] = {HTTPException: html_error, Exception: html_error}
    static = create_static_files_router(
        path=STATIC_PATH,
        directories=[HERE / "static", *([INSTALLED_ASSETS] if INSTALLED_ASSETS.is_dir() else [])],
        opt={UI_OPT: "static"},
        include_in_schema=False,
        cache_control=None,
    )
    pages = Router(
        path="/",
        route_handlers=handlers,
        dependencies={"session": Provide(signed_in), **services},
        exception_handlers=errors,
        opt={UI_OPT: True},
        include_in_schema=False,
    )
    return Router(path="/", route_handlers=[pages, static])
