"""Fixtures for the infrastructure structure tests (helpers live in hcl_model.py)."""

from __future__ import annotations

import pytest

from .hcl_model import TERRAFORM_DIR, TerraformProject


@pytest.fixture(scope="session")
def tf() -> TerraformProject:
    assert TERRAFORM_DIR.is_dir(), f"{TERRAFORM_DIR} is missing"
    return TerraformProject(TERRAFORM_DIR)
