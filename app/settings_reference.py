"""The configuration reference page, rendered from `Settings` so it can never drift from the code.

Every setting appears once, as the environment variable that sets it (`MEMORIA_` prefix, `__` between
a section and its field), with its type, its default and its Field description. The rendered page is
committed as docs/configuration-reference.md; tests/test_docs_settings.py fails when it differs from a
fresh render. Regenerate it with:

    PYTHONPATH=. .venv/bin/python -m app.settings_reference --write
"""

from __future__ import annotations

import argparse
import enum
import json
import types
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from app.settings import Settings

PAGE = Path("docs/configuration-reference.md")
REGENERATE = "PYTHONPATH=. .venv/bin/python -m app.settings_reference --write"

_HEADER = f"""# Configuration reference

<!-- Generated from app.settings.Settings by app/settings_reference.py: do not edit by hand.
     Regenerate with `{REGENERATE}`. -->

Every setting Memoria reads, generated from the settings models. Set each as an environment
variable or in a `.env` file in the working directory; nested sections use `__`
(`MEMORIA_RECALL__LEG_DEPTH`). Lists and maps are JSON (`'["http://localhost:5173"]'`). Unknown
`MEMORIA_*` variables are refused at start. Paths under `~` are the running user's home.
How the settings fit together: [Configuration](configuration.md).
"""


class Row(typing.NamedTuple):
    variable: str
    type: str
    default: str
    description: str


def _section(annotation: Any) -> type[BaseModel] | None:
    """The section model a field holds (`Settings.recall` holds `RecallSettings`), else None."""
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _type_name(annotation: Any) -> str:
    """A type as a reader writes it: `int`, `str | None`, `"rrf" | "scores"`, `list[str]`."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Literal:
        return " | ".join(json.dumps(arg) for arg in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(arg) for arg in args)
    if origin is not None:
        return f"{origin.__name__}[{', '.join(_type_name(arg) for arg in args)}]"
    if annotation is type(None):
        return "None"
    if annotation is SecretStr:
        return "secret"
    return str(getattr(annotation, "__name__", annotation))


def _default(field: FieldInfo) -> str:
    """The default as it would be written in the environment; a path under the home shows `~`."""
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    if isinstance(value, Path):
        home = str(Path.home())
        text = str(value)
        return "~" + text[len(home) :] if text == home or text.startswith(home + "/") else text
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, list | dict):
        return json.dumps(value)
    return str(value) or '""'


def _cell(text: str) -> str:
    """Text for a table cell, on one line. A pipe outside a code span is escaped (it would end the
    cell); inside one the table parser already leaves it alone, and escaping it would show the `\\`."""
    parts = " ".join(text.split()).split("`")
    return "`".join(
        part if inside else part.replace("|", "\\|")
        for inside, part in zip([False, True] * len(parts), parts, strict=False)
    )


def _code(text: str) -> str:
    return f"`{_cell(text)}`" if text != "unset" else "unset"


def rows(model: type[BaseModel] = Settings, prefix: str = "MEMORIA_") -> list[Row]:
    """One row per setting, in the order the models declare them."""
    found: list[Row] = []
    for name, field in model.model_fields.items():
        variable = prefix + name.upper()
        section = _section(field.annotation)
        if section is not None:
            found.extend(rows(section, variable + "__"))
            continue
        found.append(
            Row(variable, _type_name(field.annotation), _default(field), (field.description or "").strip())
        )
    return found


def render() -> str:
    """The whole page: one table per section, in the order `Settings` composes them."""
    parts = [_HEADER]
    section = ""
    for row in rows():
        current = row.variable.removeprefix("MEMORIA_").split("__")[0]
        if current != section:
            section = current
            parts.append(
                f"\n## `{section.lower()}`\n\n| variable | type | default | description |\n|---|---|---|---|"
            )
        parts.append(
            f"| `{row.variable}` | {_code(row.type)} | {_code(row.default)} | {_cell(row.description)} |"
        )
    return "\n".join(parts) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--write", action="store_true", help=f"write {PAGE} instead of printing it")
    args = parser.parse_args()
    if args.write:
        PAGE.write_text(render(), encoding="utf-8")
    else:
        print(render(), end="")


if __name__ == "__main__":
    main()
