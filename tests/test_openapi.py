"""The served OpenAPI document tells the truth about every route: each status it answers, with the
problem body errors really have, integer bounds as integers, and `OPTIONS`/405 naming every method.

`.ci/schemathesis.sh` checks the live answers against this document; these tests check the document
itself (and the method answers, which schemathesis only samples).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.hooks.hosts import HOSTS

Client = AsyncTestClient[Litestar]
Spec = dict[str, Any]

PROBLEM = "application/problem+json"
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
INT64_MAX = 2**63 - 1


@pytest.fixture
async def spec(client: Client) -> Spec:
    response = await client.get("/schema/openapi.json")
    assert response.status_code == 200
    document: Spec = response.json()
    return document


def _operations(spec: Spec) -> Iterator[tuple[str, str, Spec]]:
    for path, item in spec["paths"].items():
        for method in HTTP_METHODS:
            if method in item:
                yield path, method, item[method]


def _schemas(node: Any) -> Iterator[Spec]:
    """Every JSON object in the document (schemas included, at any depth)."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _schemas(value)
    elif isinstance(node, list):
        for value in node:
            yield from _schemas(value)


def _resolve(spec: Spec, schema: Spec) -> Spec:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    name = ref.removeprefix("#/components/schemas/")
    resolved: Spec = spec["components"]["schemas"][name]
    return resolved


async def test_every_error_status_is_documented_as_a_problem_body(spec: Spec) -> None:
    for path, method, operation in _operations(spec):
        for status, response in operation["responses"].items():
            if int(status) < 400 or (path == "/readyz" and status == "503"):  # readiness reports its checks
                continue
            content = response.get("content", {})
            assert list(content) == [PROBLEM], f"{method} {path} {status}: {list(content)}"
            schema = _resolve(spec, content[PROBLEM]["schema"])
            assert {"status", "title", "detail"} <= set(schema["required"]), (method, path, status)


async def test_every_operation_lists_the_statuses_the_app_answers_for_it(spec: Spec) -> None:
    for path, method, operation in _operations(spec):
        statuses = set(operation["responses"])
        where = f"{method.upper()} {path}"
        if path.startswith("/v1/"):
            assert operation.get("security"), f"{where} does not say it needs an API key"
            if {} in operation["security"]:  # the key is optional: an agent's hook answers `{}`
                assert path.startswith(tuple(f"/v1/hooks/{host}/" for host in HOSTS)), where
                assert not {"401", "403", "429", "503"} & statuses, where
            else:
                assert {"401", "503"} <= statuses, where  # the key middleware reads the database
        if "requestBody" in operation:
            assert {"400", "413", "422"} <= statuses, where
        if operation.get("parameters"):
            assert "422" in statuses, where
        if any(p["in"] == "path" for p in operation.get("parameters", [])):
            assert "404" in statuses, where


async def test_route_specific_statuses_are_documented(spec: Spec) -> None:
    paths = spec["paths"]
    assert "200" in paths["/v1/memories"]["post"]["responses"]  # a duplicate answers 200, not 201
    assert "404" in paths["/v1/memories"]["post"]["responses"]  # `supersedes` names no memory of yours
    assert "409" in paths["/v1/memories/{memory_id}"]["patch"]["responses"]
    assert "404" in paths["/v1/memories"]["get"]["responses"]  # a namespace filter you do not have
    assert "404" in paths["/v1/recall"]["post"]["responses"]
    assert "404" in paths["/v1/graph/neighbors"]["post"]["responses"]
    assert "503" in paths["/readyz"]["get"]["responses"]
    assert paths["/v1/memories/{memory_id}"]["delete"]["responses"]["204"].get("content") is None


async def test_writes_refused_through_a_read_only_share_say_so_in_their_403(spec: Spec) -> None:
    # every route with a key documents a 403 for a missing scope; these also answer it for a share
    paths = spec["paths"]
    for path, method in [
        ("/v1/memories/{memory_id}/links", "post"),
        ("/v1/memories/{memory_id}/links/{kind}/{target}", "delete"),
        ("/v1/capture/claude-code", "post"),
    ]:
        assert "read-only" in paths[path][method]["responses"]["403"]["description"], (method, path)


async def test_integer_bounds_are_integers(spec: Spec) -> None:
    for schema in _schemas(spec):
        if schema.get("type") != "integer":
            continue
        for bound in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
            if bound in schema:
                assert type(schema[bound]) is int, schema


async def test_ids_accept_the_whole_bigint_range_and_no_more(spec: Spec) -> None:
    paths = spec["paths"]
    for path, method in [
        ("/v1/memories/{memory_id}", "get"),
        ("/v1/graph/concepts/{concept_id}", "get"),
    ]:
        (parameter,) = [p for p in paths[path][method]["parameters"] if p["in"] == "path"]
        assert parameter["schema"]["minimum"] == 1
        assert parameter["schema"]["maximum"] == INT64_MAX
    neighbors = spec["components"]["schemas"]["NeighborsIn"]["properties"]["concept_ids"]
    assert neighbors["items"]["maximum"] == INT64_MAX
    assert spec["components"]["schemas"]["MergeIn"]["properties"]["into"]["maximum"] == INT64_MAX


async def test_declared_constraints_reach_the_document(spec: Spec) -> None:
    schemas = spec["components"]["schemas"]
    # bounds of 0 were dropped, constraints on list items lost, unknown fields not marked as refused
    assert schemas["MemoryPatch"]["properties"]["importance"]["minimum"] == 0
    assert schemas["LegWeights"]["properties"]["lexical"]["anyOf"][0]["minimum"] == 0
    assert schemas["NeighborsIn"]["properties"]["concept_ids"]["items"]["minimum"] == 1
    assert schemas["MemoryIn"]["additionalProperties"] is False
    listing = {p["name"]: p["schema"] for p in spec["paths"]["/v1/memories"]["get"]["parameters"]}
    assert listing["created_since"] == {"type": "string", "format": "date-time"}
    assert listing["limit"] == {"type": "integer", "minimum": 1, "maximum": 200, "default": 50}
    assert "pattern" in listing["category"] and "pattern" in listing["tags"]["items"]


async def test_options_lists_every_method_of_the_path(spec: Spec, client: Client) -> None:
    for path, item in spec["paths"].items():
        concrete = path.replace("{memory_id}", "1").replace("{concept_id}", "1")
        concrete = concrete.replace("{kind}", "see-also").replace("{target}", "2")
        documented = {m.upper() for m in HTTP_METHODS if m in item} | {"OPTIONS"}
        response = await client.options(concrete)
        assert response.status_code == 204, (path, response.text)
        assert set(response.headers["allow"].split(", ")) == documented, path


async def test_a_method_the_path_lacks_is_a_405_naming_the_allowed_ones(
    spec: Spec, client: Client, alice: dict[str, str]
) -> None:
    for path, item in spec["paths"].items():
        concrete = path.replace("{memory_id}", "1").replace("{concept_id}", "1")
        concrete = concrete.replace("{kind}", "see-also").replace("{target}", "2")
        documented = {m.upper() for m in HTTP_METHODS if m in item} | {"OPTIONS"}
        for method in ("TRACE", "PUT"):
            response = await client.request(method, concrete, headers=alice)
            assert response.status_code == 405, (method, path)
            assert response.headers["content-type"].startswith(PROBLEM)
            assert set(response.headers["allow"].split(", ")) == documented, (method, path)
