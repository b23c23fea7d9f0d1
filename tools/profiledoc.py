"""Render the field table of a profile (``docs/profiles.md``, "A profile") from the level record itself.

Each row is one field of :class:`tsuka_core.record.LevelRecord`, in the order it
is written: its stored name, its JSON type (from the field's JSON Schema) and its
meaning (the field's docstring). Rewrite the table in place with::

    python tools/profiledoc.py --write
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from tsuka_core.record import TSUKA_FIELDS, LevelRecord

__all__ = ["BEGIN", "END", "PAGE", "REGENERATE", "field_table", "main", "rewritten"]

PAGE = Path(__file__).resolve().parent.parent / "docs" / "profiles.md"
BEGIN = "<!-- profile fields: written by tools/profiledoc.py -->"
END = "<!-- end of profile fields -->"
REGENERATE = "python tools/profiledoc.py --write"
"""The command that rewrites the table in ``docs/profiles.md``."""


def _kinds(schema: dict[str, Any]) -> list[str]:
    """Every JSON type a property's schema admits, ``null`` left out, nested ``anyOf`` opened."""
    if "anyOf" in schema:
        return [k for part in schema["anyOf"] for k in _kinds(part)]
    if "$ref" in schema:
        return ["object"]
    kind = schema.get("type")
    return [str(kind)] if kind not in (None, "null") else []


def _json_type(schema: dict[str, Any]) -> str:
    """``string``, ``number``, ``integer``, ``boolean``, ``object`` or ``array`` for one property's schema."""
    if "jsonType" in schema:
        return str(schema["jsonType"])
    kinds = list(dict.fromkeys(_kinds(schema)))
    return "number" if kinds == ["integer", "number"] else kinds[0]


def _meaning(doc: str, stored: str) -> str:
    """The docstring as one Markdown cell: ``code`` in single backticks, tsuka's own fields said to be."""
    text = " ".join(doc.split()).replace("``", "`").rstrip(".")
    text = text[0].lower() + text[1:] if not text.startswith("`") else text
    if stored in TSUKA_FIELDS:
        return text
    return "tsuka's own, " + text if text.startswith("present") or text.startswith("with ") else "tsuka's own: " + text


def field_table() -> str:
    """The Markdown table of every field of the record, in the order written."""
    schema = LevelRecord.model_json_schema(by_alias=True, mode="serialization")["properties"]
    rows = ["| field | JSON type | meaning |", "|---|---|---|"]
    for info in LevelRecord.model_fields.values():
        stored = str(info.alias)
        rows.append(f"| `{stored}` | {_json_type(schema[stored])} | {_meaning(info.description or '', stored)} |")
    return "\n".join(rows) + "\n"


def rewritten(page: str) -> str:
    """``page`` with the text between :data:`BEGIN` and :data:`END` replaced by :func:`field_table`."""
    pattern = re.compile(re.escape(BEGIN) + r"\n.*?" + re.escape(END), re.DOTALL)
    if not pattern.search(page):
        raise ValueError(f"the page has no {BEGIN!r} ... {END!r} section")
    return pattern.sub(lambda _: f"{BEGIN}\n{field_table()}{END}", page)


def main(argv: list[str]) -> int:
    """Print the table, or with ``--write`` rewrite it in ``docs/profiles.md``."""
    if argv == ["--write"]:
        PAGE.write_text(rewritten(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
        return 0
    sys.stdout.write(field_table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
