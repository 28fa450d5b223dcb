"""The `client` of the Claude Code hook tests: conftest.py's app with the test's `hook_settings`.

A module imports both fixtures (and lists them in `__all__`, so the import reads as used); a test
changes the hook settings with `@pytest.mark.parametrize("hook_settings", [HookSettings(...)])`,
and a module that wants other defaults defines its own `hook_settings` fixture, which wins.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.settings import HookSettings, Settings

#: Tests not about the time budget get a generous one, so a busy machine cannot make them race it.
ROOMY = 10_000


@pytest.fixture
def hook_settings() -> HookSettings:
    return HookSettings(budget_ms=ROOMY)


@pytest.fixture
async def client(
    settings: Settings, embedder: LocalEmbedder, hook_settings: HookSettings
) -> AsyncIterator[AsyncTestClient[Litestar]]:
    app = create_app(settings.model_copy(update={"hooks": hook_settings}), embedder=embedder)
    async with AsyncTestClient(app=app) as test_client:
        yield test_client
