"""A usage scenario: sessions of scripted Claude Code turns, with the facts they state labelled.

A scenario is one JSON file (the format is documented in docs/benchmarks/index.md, "Usage"):

- `projects`: the repositories the sessions run in (each becomes a git checkout, so the installed
  hooks give each its own `repo:<name>` namespace);
- `facts`: each fact's versions in the order they become true, each with a `key`, a phrase that
  appears in every text stating that version and in no other (how an injected memory is matched to
  a fact, deterministically);
- `sessions`, in the order they happen: each runs in a project, may continue an earlier one
  (`continues`: Claude Code's `--resume`, same session id) and holds `turns`: a prompt and the
  assistant's scripted reply, with optional tool calls, an API error, a refused tool or an
  interruption instead of a reply, a `/compact` before the turn, and labels: `says` (the fact
  versions the turn states), `asks` (a question whose answer is a fact's version, the newest said
  so far unless named) and `unrelated` (a prompt no memory should be injected into).

`load_scenario` refuses a file that breaks these rules with a `ScenarioError` naming the file, the
place and what is wrong, so a held-out scenario written the same way fails loudly, never silently.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,60}")
_LABEL = re.compile(r"(?P<fact>[^@\s]+)(?:@(?P<version>\d+))?")
TOOL_FIELDS = frozenset({"tool", "input", "result", "is_error"})
TURN_FIELDS = frozenset(
    {
        "user",
        "assistant",
        "tools",
        "api_error",
        "refused",
        "interrupted",
        "compact",
        "says",
        "asks",
        "unrelated",
    }
)
SESSION_FIELDS = frozenset({"id", "project", "continues", "turns", "note"})
SCENARIO_FIELDS = frozenset({"name", "description", "projects", "facts", "sessions"})


class ScenarioError(ValueError):
    """A scenario file that cannot be replayed; the message names the file, the place and the fault."""


@dataclass(frozen=True, slots=True)
class FactVersion:
    fact: str
    version: int
    key: str

    @property
    def label(self) -> str:
        return f"{self.fact}@{self.version}"


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool call of a turn: Claude Code's tool name, its input and what it returned."""

    name: str
    input: dict[str, Any]
    result: str
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class Turn:
    """One prompt and what followed it. `reply` is the assistant's final text (empty when the turn
    ended in an API error, a refusal or an interruption)."""

    user: str
    reply: str = ""
    tools: tuple[Tool, ...] = ()
    api_error: str | None = None
    refused: Tool | None = None
    interrupted: bool = False
    compact_before: bool = False
    says: tuple[FactVersion, ...] = ()
    asks: FactVersion | None = None
    unrelated: bool = False


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    project: str
    turns: tuple[Turn, ...]
    continues: str | None = None


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    path: Path
    projects: tuple[str, ...]
    facts: dict[str, tuple[FactVersion, ...]]
    sessions: tuple[Session, ...]
    description: str = ""
    questions: int = field(default=0)
    unrelated: int = field(default=0)

    def versions(self) -> list[FactVersion]:
        return [version for versions in self.facts.values() for version in versions]


def normalised(text: str) -> str:
    """Lower case, whitespace collapsed: how keys and texts are compared."""
    return " ".join(text.split()).lower()


class _Reader:
    """Reads one file's JSON into the model, naming the place of every fault."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, what: str) -> ScenarioError:
        return ScenarioError(f"{self.path}: {where}: {what}")

    def obj(self, value: Any, where: str, allowed: frozenset[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, "must be an object")
        unknown = sorted(set(value) - allowed)
        if unknown:
            raise self.fail(
                where, f"unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}"
            )
        return value

    def text(self, value: Any, where: str, *, empty: bool = False) -> str:
        if not isinstance(value, str) or (not empty and not value.strip()):
            raise self.fail(where, "must be a non-empty string")
        return value

    def name(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not _NAME.fullmatch(value):
            raise self.fail(where, f"must be a name of letters, digits, '.', '_' or '-', got {value!r}")
        return value

    def tool(self, value: Any, where: str) -> Tool:
        raw = self.obj(value, where, TOOL_FIELDS)
        tool_input = raw.get("input", {})
        if not isinstance(tool_input, dict):
            raise self.fail(f"{where}.input", "must be an object")
        is_error = raw.get("is_error", False)
        if not isinstance(is_error, bool):
            raise self.fail(f"{where}.is_error", "must be true or false")
        return Tool(
            name=self.text(raw.get("tool"), f"{where}.tool"),
            input=tool_input,
            result=self.text(raw.get("result", ""), f"{where}.result", empty=True),
            is_error=is_error,
        )

    def label(
        self, value: Any, where: str, facts: dict[str, tuple[FactVersion, ...]]
    ) -> tuple[str, int | None]:
        match = _LABEL.fullmatch(value) if isinstance(value, str) else None
        if match is None:
            raise self.fail(where, f"must be a fact label 'fact' or 'fact@version', got {value!r}")
        fact, version = match["fact"], match["version"]
        if fact not in facts:
            raise self.fail(where, f"names no declared fact: {fact!r}")
        number = int(version) if version is not None else None
        if number is not None and not 1 <= number <= len(facts[fact]):
            raise self.fail(where, f"{fact} has versions 1 to {len(facts[fact])}, not {number}")
        return fact, number


def _facts(reader: _Reader, raw: Any) -> dict[str, tuple[FactVersion, ...]]:
    if not isinstance(raw, dict) or not raw:
        raise reader.fail("facts", "must be a non-empty object of fact id -> {versions: [...]}")
    facts: dict[str, tuple[FactVersion, ...]] = {}
    for fact, spec in raw.items():
        where = f"facts.{fact}"
        reader.name(fact, where)
        body = reader.obj(spec, where, frozenset({"versions", "about"}))
        versions = body.get("versions")
        if not isinstance(versions, list) or not versions:
            raise reader.fail(f"{where}.versions", "must be a non-empty list of {key: ...}")
        facts[fact] = tuple(
            FactVersion(
                fact,
                number,
                reader.text(
                    reader.obj(version, f"{where}.versions[{number - 1}]", frozenset({"key"})).get("key"),
                    f"{where}.versions[{number - 1}].key",
                ),
            )
            for number, version in enumerate(versions, start=1)
        )
    keys: dict[str, str] = {}
    for version in (v for versions in facts.values() for v in versions):
        key = normalised(version.key)
        for other_key, other in keys.items():
            if key in other_key or other_key in key:
                raise reader.fail(
                    f"facts.{version.fact}",
                    f"key {version.key!r} of {version.label} overlaps the key of {other}",
                )
        keys[key] = version.label
    return facts


@dataclass(slots=True)
class _Said:
    """What the turns read so far have said: each fact's newest version, and the project it lives
    in (the hooks of another project's sessions recall from another namespace)."""

    versions: dict[str, int] = field(default_factory=dict)
    projects: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Scope:
    """Where a turn is read: the scenario's facts, what was said before it, its session's project."""

    facts: dict[str, tuple[FactVersion, ...]]
    said: _Said
    project: str


def _says(reader: _Reader, body: dict[str, Any], where: str, scope: _Scope, spoken: str) -> list[FactVersion]:
    """The versions the turn states: each labelled `fact@N`, its key in the turn, said in order and
    in the fact's project."""
    labels = body.get("says", [])
    if not isinstance(labels, list):
        raise reader.fail(f"{where}.says", "must be a list of 'fact@version' labels")
    said_here: list[FactVersion] = []
    for i, label in enumerate(labels):
        place = f"{where}.says[{i}]"
        fact, number = reader.label(label, place, scope.facts)
        if number is None:
            raise reader.fail(place, "names the version it states: 'fact@version'")
        version = scope.facts[fact][number - 1]
        if normalised(version.key) not in spoken:
            raise reader.fail(place, f"the turn does not contain {version.label}'s key {version.key!r}")
        newest = scope.said.versions.get(fact, 0)
        if number > newest + 1:
            raise reader.fail(place, f"{version.label} is said before {fact}@{newest + 1}")
        home = scope.said.projects.setdefault(fact, scope.project)
        if home != scope.project:
            raise reader.fail(place, f"{fact} lives in project {home}, not {scope.project}")
        said_here.append(version)
    return said_here


def _asks(reader: _Reader, body: dict[str, Any], where: str, scope: _Scope) -> FactVersion | None:
    """The version a question expects: the newest said so far, in this project."""
    if "asks" not in body:
        return None
    place = f"{where}.asks"
    fact, number = reader.label(body["asks"], place, scope.facts)
    newest = scope.said.versions.get(fact, 0)
    if newest == 0:
        raise reader.fail(place, f"asks about {fact}, which no earlier turn says")
    if scope.said.projects[fact] != scope.project:
        raise reader.fail(
            place, f"asks about {fact} in {scope.project}, but it is said in {scope.said.projects[fact]}"
        )
    if number is not None and number != newest:
        raise reader.fail(place, f"expects {fact}@{number} but the newest said so far is @{newest}")
    return scope.facts[fact][newest - 1]


def _ending(reader: _Reader, body: dict[str, Any], where: str) -> tuple[str, str | None, Tool | None, bool]:
    """(reply, api_error, refused tool, interrupted): a turn ends with a reply or one of the others."""
    api_error = body.get("api_error")
    if api_error is not None:
        api_error = reader.text(api_error, f"{where}.api_error")
    refused = reader.tool(body["refused"], f"{where}.refused") if "refused" in body else None
    interrupted = body.get("interrupted", False)
    endings = [
        name
        for name, on in (("api_error", api_error), ("refused", refused), ("interrupted", interrupted))
        if on
    ]
    if len(endings) > 1:
        raise reader.fail(where, f"a turn ends one way only, not {' and '.join(endings)}")
    reply = body.get("assistant", "")
    if endings:
        if reply:
            raise reader.fail(f"{where}.assistant", f"a turn that ends with {endings[0]} has no reply")
    else:
        reply = reader.text(reply, f"{where}.assistant")
    return reply, api_error, refused, bool(interrupted)


def _turn(reader: _Reader, raw: Any, where: str, scope: _Scope) -> Turn:
    body = reader.obj(raw, where, TURN_FIELDS)
    user = reader.text(body.get("user"), f"{where}.user")
    for flag in ("interrupted", "unrelated", "compact"):
        if not isinstance(body.get(flag, False), bool):
            raise reader.fail(f"{where}.{flag}", "must be true or false")
    reply, api_error, refused, interrupted = _ending(reader, body, where)
    tools = body.get("tools", [])
    if not isinstance(tools, list):
        raise reader.fail(f"{where}.tools", "must be a list")
    said_here = _says(reader, body, where, scope, normalised(f"{user}\n{reply}"))
    asks = _asks(reader, body, where, scope)
    unrelated = bool(body.get("unrelated", False))
    if asks is not None and unrelated:
        raise reader.fail(where, "a prompt is a question (asks) or unrelated, not both")
    for version in said_here:
        scope.said.versions[version.fact] = max(scope.said.versions.get(version.fact, 0), version.version)
    return Turn(
        user=user,
        reply=reply,
        tools=tuple(reader.tool(tool, f"{where}.tools[{i}]") for i, tool in enumerate(tools)),
        api_error=api_error,
        refused=refused,
        interrupted=interrupted,
        compact_before=bool(body.get("compact", False)),
        says=tuple(said_here),
        asks=asks,
        unrelated=unrelated,
    )


def load_scenario(path: Path) -> Scenario:
    """The scenario in `path`; ScenarioError when it is not one (unreadable, not JSON, or a rule broken)."""
    reader = _Reader(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise ScenarioError(f"{path}: not JSON: {exc}") from exc
    body = reader.obj(raw, "scenario", SCENARIO_FIELDS)
    name = reader.name(body.get("name", path.stem), "name")
    projects = body.get("projects")
    if not isinstance(projects, list) or not projects:
        raise reader.fail("projects", "must be a non-empty list of project names")
    project_names = tuple(reader.name(p, f"projects[{i}]") for i, p in enumerate(projects))
    if len(set(project_names)) != len(project_names):
        raise reader.fail("projects", "names a project twice")
    facts = _facts(reader, body.get("facts"))
    raw_sessions = body.get("sessions")
    if not isinstance(raw_sessions, list) or not raw_sessions:
        raise reader.fail("sessions", "must be a non-empty list")
    sessions: list[Session] = []
    said = _Said()
    projects_of: dict[str, str] = {}
    for i, raw_session in enumerate(raw_sessions):
        session = reader.obj(raw_session, f"sessions[{i}]", SESSION_FIELDS)
        sid = reader.name(session.get("id"), f"sessions[{i}].id")
        where = f"sessions[{i}] ({sid})"
        if sid in projects_of:
            raise reader.fail(where, "repeats a session id (continue a session with `continues`)")
        project = session.get("project")
        if project not in project_names:
            raise reader.fail(
                f"{where}.project", f"must be one of {', '.join(project_names)}, got {project!r}"
            )
        continues = session.get("continues")
        if continues is not None:
            if continues not in projects_of:
                raise reader.fail(f"{where}.continues", f"names no earlier session: {continues!r}")
            if projects_of[continues] != project:
                raise reader.fail(f"{where}.continues", "a resumed session stays in its project")
        turns = session.get("turns")
        if not isinstance(turns, list) or not turns:
            raise reader.fail(f"{where}.turns", "must be a non-empty list")
        parsed = tuple(
            _turn(reader, turn, f"{where}.turns[{t}]", _Scope(facts, said, project))
            for t, turn in enumerate(turns)
        )
        projects_of[sid] = project
        sessions.append(Session(sid, project, parsed, continues))
    unsaid = [
        versions[-1].label
        for versions in facts.values()
        if said.versions.get(versions[0].fact, 0) < len(versions)
    ]
    if unsaid:
        raise reader.fail("facts", f"versions no turn says: {', '.join(unsaid)}")
    all_turns = [turn for session in sessions for turn in session.turns]
    return Scenario(
        name=name,
        path=path,
        projects=project_names,
        facts=facts,
        sessions=tuple(sessions),
        description=str(body.get("description", "")),
        questions=sum(turn.asks is not None for turn in all_turns),
        unrelated=sum(turn.unrelated for turn in all_turns),
    )
