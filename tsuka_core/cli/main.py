"""The root command group; it turns every TsukaError into one line and an exit code."""

from __future__ import annotations

import importlib
import os
import sys
from contextlib import suppress
from typing import Any

import click

from tsuka_core.cli.commands import COMMANDS
from tsuka_core.cli.exits import INTERRUPTED
from tsuka_core.cli.terminal import escaped_output
from tsuka_core.errors import SuiteError, TsukaError

__all__ = ["TsukaGroup", "cli", "click_error_line", "main"]


class TsukaGroup(click.Group):
    """A click group that prints a TsukaError as one line (a suite's problems one per line).

    Its commands are loaded lazily (click's "lazily loading subcommands" pattern): a
    command's module is imported when that command runs or shows its help, so
    ``tsuka --help`` imports none of them.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, sorted."""
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name``, its module imported now; None when there is no such command."""
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        lazy = COMMANDS.get(cmd_name)
        if lazy is None:
            return None
        command = getattr(importlib.import_module(f"tsuka_core.cli.{lazy.module}"), lazy.attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"tsuka_core.cli.{lazy.module}.{lazy.attribute} is not a click command")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``tsuka --help``, from the stored short helps: no command module is imported."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, _short_help(name, limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; a problem the user must fix exits 2, a failed run 1, never a traceback."""

        with escaped_output():
            return self._invoke(ctx)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Parse the group's own options; a bad one is one line too (``tsuka --bogus``)."""

        try:
            return super().parse_args(ctx, args)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.ClickException as exc:
            with escaped_output():
                click.echo(click_error_line(exc), err=True)
            ctx.exit(exc.exit_code)

    def _invoke(self, ctx: click.Context) -> Any:

        try:
            return super().invoke(ctx)
        except SuiteError as exc:
            for problem in exc.problems:
                click.echo(problem, err=True)
            click.echo(f"tsuka: {len(exc.problems)} problem(s) in the suite; nothing was run", err=True)
            ctx.exit(exc.exit_code)
        except TsukaError as exc:
            click.echo(f"tsuka: error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.ClickException as exc:  # a usage error: an unknown option, a bad value, a missing argument
            click.echo(click_error_line(exc), err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("tsuka: interrupted", err=True)
            ctx.exit(INTERRUPTED)


def click_error_line(exc: click.ClickException) -> str:
    """Click's error as one line, with where help is, in place of its usage block (the exit status is click's: 2)."""
    message = " ".join(exc.format_message().split())
    context = getattr(exc, "ctx", None)
    command = context.command_path if isinstance(context, click.Context) else "tsuka"
    hint = f" (see '{command} --help')" if isinstance(exc, click.UsageError) else ""
    return f"tsuka: error: {message}{hint}"


@click.group(cls=TsukaGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="tsuka", prog_name="tsuka")
def cli() -> None:
    """Measure what a language model can really do.

    tsuka runs a folder of declarative tests (instruction following, JSON
    output, tool calling) against a model at several reasoning-effort levels,
    scores each category, derives a capability tier (small / medium / large)
    and stores the result as a profile that goes stale when the tests change.

    \b
    Start here:
      tsuka run all                  measure every model the backend reaches
      tsuka run all --base-url http://127.0.0.1:8080/v1   ...of a server
      tsuka profiles                 what is stored, valid or stale
      tsuka runs / tsuka report      recorded runs, and a page to share
      tsuka compare last~1 last      what changed between two runs (or profiles)
      tsuka gate MODEL --tools F     which tools that model may be offered
      tsuka validate [SUITE]         check a suite and print its hash
      tsuka checks                   every check type a test may use
    """


def _short_help(name: str, limit: int) -> str:
    lazy = COMMANDS.get(name)
    return click.Command(name, help=lazy.short_help).get_short_help_str(limit) if lazy else ""


def main() -> None:
    """Run the ``tsuka`` command."""
    try:
        cli(prog_name="tsuka")
    except SystemExit as exc:
        _end_now_if_native_work_runs(exc.code)
        raise


def _end_now_if_native_work_runs(code: object) -> None:
    """Exit with ``code`` at once, without the interpreter's teardown, while llama.cpp still generates (Ctrl-C).

    Everything the command keeps is written by now; waiting would only let each
    generation reach its next token (seconds on a busy machine), and tearing the
    interpreter down under it is not safe.
    """
    calls = sys.modules.get("tsuka_core.backends.native_calls")
    if calls is None or not calls.running():
        return
    for stream in (sys.stdout, sys.stderr):
        with suppress(Exception):
            stream.flush()
    os._exit(code if isinstance(code, int) else (0 if code is None else 1))
