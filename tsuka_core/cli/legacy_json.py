"""``compare --json FILE``, the old form, read as ``--json-file FILE`` for one more release, with a warning.

``--json`` is now a flag (JSON on stdout) on every command, and ``--json-file
FILE`` writes a file. A value after ``--json`` is the old form's FILE only when
A and B are both given elsewhere: ``compare 1 2 --json cmp.json`` is the old
form, ``compare --json 1 2`` is the flag before A and B.
"""

from __future__ import annotations

import click

__all__ = ["DEPRECATED_JSON_FILE", "LegacyJsonFileCommand"]

DEPRECATED_JSON_FILE = (
    "tsuka: warning: 'compare --json FILE' is deprecated since tsuka 0.2.0 and removed in 0.4.0: "
    "use --json-file FILE ('--json' alone prints the JSON on stdout)"
)


class LegacyJsonFileCommand(click.Command):
    """A command whose ``--json FILE`` (old form) is rewritten to ``--json-file FILE`` before parsing."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """The arguments with an old-form ``--json FILE`` (or ``--json=FILE``) rewritten, and a warning said."""
        rewritten = _rewrite(args, self._valued_options(), self._positional_count())
        if rewritten != args:
            click.echo(DEPRECATED_JSON_FILE, err=True)
        return super().parse_args(ctx, rewritten)

    def _valued_options(self) -> frozenset[str]:
        """The option names that take a value (whose next word is not an argument)."""
        names: set[str] = set()
        for param in self.params:
            if isinstance(param, click.Option) and not param.is_flag and not param.count:
                names.update(param.opts)
        return frozenset(names)

    def _positional_count(self) -> int:
        return sum(1 for param in self.params if isinstance(param, click.Argument))


def _rewrite(args: list[str], valued: frozenset[str], wanted: int) -> list[str]:
    out = list(args)
    for index, word in enumerate(out):
        if word == "--":
            break
        if word.startswith("--json="):
            out[index] = "--json-file=" + word.removeprefix("--json=")
            return out
        if word == "--json" and index + 1 < len(out) and not out[index + 1].startswith("-"):
            others = [w for i, w in enumerate(out) if i != index + 1]
            if _positionals(others, valued) >= wanted:
                out[index] = "--json-file"
                return out
    return out


def _positionals(args: list[str], valued: frozenset[str]) -> int:
    """How many words of ``args`` are arguments, not options or their values."""
    count, skip = 0, False
    for index, word in enumerate(args):
        if skip:
            skip = False
        elif word == "--":
            return count + len(args) - index - 1
        elif word in valued:
            skip = True
        elif not word.startswith("-") or word == "-":
            count += 1
    return count
