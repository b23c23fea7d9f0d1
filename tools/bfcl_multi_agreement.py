"""How often tsuka's verdict on a multi-turn trajectory is BFCL's: crafted trajectories through `tsuka run`.

Needs BFCL's data, classes and checker: ``pip install --no-deps bfcl-eval`` and
``pip install mpmath``. For each entry of BFCL's four multi-turn categories
(the registered ``bfcl-multi-turn-*`` suites) it crafts trajectories, a list of
steps per turn, each step the calls the model makes: the ground truth (all of a
turn's calls in one step, and one call per step), and near-misses of it: a
dropped call, a wrong value, two state-changing calls swapped, an extra call,
text instead of calls, an unknown function, arguments that do not parse, a
held-back function called before it is revealed, a turn's work done a turn
early, calls in a turn whose ground truth is empty, and seeded random edits.
A loopback server plays each kind of trajectory as one model of a real
``tsuka run`` of the suite (streamed and not), answering each request with the
step the conversation has reached; tsuka executes the calls in BFCL's classes
and records its verdict in the run's history. BFCL's multi-turn checker then
judges the very trajectory tsuka recorded (each turn's steps as its
function-calling handler decodes them, then ``multi_turn_checker``), and the
script prints the agreement per category, then every disagreement.

    python tools/bfcl_multi_agreement.py [--limit N] [--category NAME] [--stream both|on|off]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agreement_report import print_disagreeing_kinds, print_disagreements
from answer_server import AnswerServer, Crafted

from tsuka_checks_builtin.bfcl import MULTI_TURN, Category, bfcl_data, rows
from tsuka_checks_builtin.bfcl.environment import reference_call
from tsuka_checks_builtin.bfcl.multi import REVEAL_PROMPT

Call = tuple[str, str]
"""A call as the model writes it: a name and its arguments as text."""
Step = list[Call]
Trajectory = list[list[Step]]
"""Per turn, the steps: each step the calls of one answer (the turn then ends with a text answer)."""
DONE = "Done."


# --- crafting trajectories ------------------------------------------------------------------------------------------


def _truth(entry: Mapping[str, Any], answer: Mapping[str, Any]) -> list[list[tuple[str, dict[str, Any]]]]:
    classes = list(entry["involved_classes"])
    return [[reference_call(classes, c) for c in turn] for turn in answer["ground_truth"]]


def _written(call: tuple[str, dict[str, Any]]) -> Call:
    return call[0], json.dumps(call[1])


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + "_x"
    if isinstance(value, list):
        return [*value, value[0]] if value else ["x"]
    return value


def crafted(entry: Mapping[str, Any], answer: Mapping[str, Any], seed: int) -> dict[str, Trajectory]:  # noqa: PLR0912, PLR0915
    """Every kind of trajectory for one entry, by kind."""
    truth = _truth(entry, answer)
    busy = [i for i, turn in enumerate(truth) if turn]
    first = busy[0] if busy else 0
    kinds: dict[str, Trajectory] = {
        "ground_truth": [[[_written(c) for c in turn]] if turn else [] for turn in truth],
        "one_call_per_step": [[[_written(c)] for c in turn] for turn in truth],
    }

    def edited(edit: Any) -> Trajectory:
        calls = copy.deepcopy(truth)
        edit(calls)
        return [[[_written(c) for c in turn]] if turn else [] for turn in calls]

    if busy:
        kinds["dropped_call"] = edited(lambda t: t[first].pop())
        with_arguments = [(i, j) for i in busy for j, c in enumerate(truth[i]) if c[1]]
        if with_arguments:
            i, j = with_arguments[0]
            key = sorted(truth[i][j][1])[0]
            kinds["wrong_value"] = edited(lambda t: t[i][j][1].__setitem__(key, _changed(t[i][j][1][key])))
        pairs = [i for i in busy if len(truth[i]) > 1]
        if pairs:
            kinds["swapped"] = edited(lambda t: t[pairs[0]].__setitem__(slice(0, 2), t[pairs[0]][1::-1]))
        kinds["extra_call"] = edited(lambda t: t[first].append(t[first][-1]))
        kinds["text_instead"] = edited(lambda t: t[first].clear())
        kinds["unknown_function"] = edited(lambda t: t[first].insert(0, ("open_the_pod_bay_doors", {"now": True})))
        broken = [[[_written(c) for c in turn]] if turn else [] for turn in truth]
        broken[first] = [[(truth[first][0][0], '{"' + "x" * 3)]]
        kinds["arguments_not_json"] = broken
        if len(busy) > 1:
            early = [[[_written(c) for c in turn]] if turn else [] for turn in truth]
            early[busy[0]] = [[_written(c) for c in truth[busy[0]] + truth[busy[1]]]]
            kinds["next_turn_early"] = early
    empty = [i for i, turn in enumerate(truth) if not turn]
    if empty and busy:
        acting = [[[_written(c) for c in turn]] if turn else [] for turn in truth]
        acting[empty[0]] = [[_written(truth[busy[-1]][0])]]
        kinds["acts_when_it_should_ask"] = acting
    held = entry.get("missed_function") or {}
    if held and busy:
        turn_at, names = next(iter(held.items()))
        calls_held = [c for c in truth[int(turn_at)] if c[0] in names] if int(turn_at) < len(truth) else []
        if calls_held and int(turn_at) > 0:
            before = [[[_written(c) for c in turn]] if turn else [] for turn in truth]
            before[int(turn_at) - 1] = [*before[int(turn_at) - 1], [_written(calls_held[0])]]
            kinds["held_function_early"] = before
    chance = random.Random(f"{entry['id']}:{seed}")
    for n in range(2):
        calls = copy.deepcopy(truth)
        for turn in calls:
            for index in range(len(turn)):
                roll = chance.random()
                if roll < 0.15 and turn[index][1]:
                    key = chance.choice(sorted(turn[index][1]))
                    turn[index][1][key] = _changed(turn[index][1][key])
                elif roll < 0.25:
                    turn[index] = turn[max(0, index - 1)]
            if len(turn) > 1 and chance.random() < 0.2:
                chance.shuffle(turn)
        kinds[f"random_{n}"] = [[[_written(c) for c in turn]] if turn else [] for turn in calls]
    return kinds


# --- through tsuka run ----------------------------------------------------------------------------------------------


def _position(messages: Sequence[Mapping[str, Any]]) -> tuple[str, int, int]:
    """(the first user message that is not BFCL's reveal prompt, the turn, the step) a request has reached."""
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    step = sum(1 for m in messages[users[-1] + 1 :] if m.get("role") == "assistant")
    asked = [str(messages[i]["content"]) for i in users if messages[i]["content"] != REVEAL_PROMPT]
    return (asked[0] if asked else ""), len(users) - 1, step


def _first_question(entry: Mapping[str, Any]) -> str:
    return next((str(turn[0]["content"]) for turn in entry["question"] if turn), "")


def through_run(category: Category, entries: list[dict[str, Any]], plays: Mapping[str, dict[str, Trajectory]],
                stream: bool) -> dict[tuple[str, str], tuple[bool, str, list[list[Any]]]]:  # fmt: skip
    """tsuka's verdict on every (entry, kind), and each turn's steps as tsuka recorded them."""
    kinds = sorted({k for played in plays.values() for k in played})
    by_first = {_first_question(e): e["id"] for e in entries}
    if len(by_first) < len(entries):
        raise RuntimeError(f"{category.suite}: two of the entries open with the same question")

    def choose(model: str, body: dict[str, Any]) -> Crafted:
        first, turn, step = _position(body["messages"])
        trajectory = plays[by_first[first]].get(model.removeprefix("k-")) if first in by_first else None
        if trajectory is None or turn >= len(trajectory) or step >= len(trajectory[turn]):
            return Crafted(model, (), DONE)
        return Crafted(model, tuple(trajectory[turn][step]))

    with tempfile.TemporaryDirectory() as folder, AnswerServer(choose, [f"k-{k}" for k in kinds]) as server:
        history = Path(folder) / "h.sqlite"
        command = [sys.executable, "-m", "tsuka_core", "run", *[f"k-{k}" for k in kinds], "--suite", category.suite,
                   "--base-url", server.base_url, "-e", "none", "-j", "8", "--retries", "2", "--no-resume",
                   "--profiles", str(Path(folder) / "p.json"), "--history-db", str(history)]  # fmt: skip
        command += [arg for e in entries for arg in ("--test", e["id"])]
        if not stream:
            command += ["--option", "stream=off"]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TSUKA_PROFILES", "TSUKA_HISTORY"))}
        done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
        if done.returncode not in (0, 1) or server.errors:
            raise RuntimeError(f"tsuka run of {category.suite} failed ({done.returncode}): {done.stderr[-2000:]}"
                               f"{server.errors[:3]}")  # fmt: skip
        return _recorded(history)


def _recorded(history: Path) -> dict[tuple[str, str], tuple[bool, str, list[list[Any]]]]:
    from tsuka_core.storage.history_query import load_run

    found: dict[tuple[str, str], tuple[bool, str, list[list[Any]]]] = {}
    for level in load_run(history, "last").levels:
        kind = level.model.removeprefix("k-")
        for test in level.tests:
            failed = [f"turn {s.index}: {c.detail}" for s in test.steps for c in s.checks if c.status != "passed"]
            ok = test.status == "ok" and not failed
            why = test.error or "; ".join(failed)[:400] or "passed"
            found[(test.name, kind)] = (ok, why, [_turn_steps(s) for s in test.steps if s.sent])
    return found


def _turn_steps(step: Any) -> list[Any]:
    """One turn's model outputs as BFCL's handler keeps them: a list of ``{name: arguments}`` per step with calls,
    the text of a step without."""
    messages = list(step.messages)
    last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    outputs: list[Any] = []
    for message in messages[last_user + 1 :]:
        if message.get("role") != "assistant":
            continue
        calls = message.get("tool_calls") or []
        if calls:
            outputs.append([{c["function"]["name"]: c["function"]["arguments"]} for c in calls])
        else:
            outputs.append(message.get("content") or "")
    response = step.response
    if response is not None:
        if response.tool_calls:
            outputs.append([{c.name: c.raw_arguments or json.dumps(c.arguments)} for c in response.tool_calls])
        else:
            outputs.append(response.content if response.content is not None else response.text)
    return outputs


# --- BFCL's side ----------------------------------------------------------------------------------------------------


def bfcl_verdict(entry: Mapping[str, Any], answer: Mapping[str, Any], turns: list[list[Any]], model: str,
                 category: Category) -> tuple[bool, str]:  # fmt: skip
    """BFCL's verdict on the trajectory: each step decoded as its function-calling handler does, then its checker."""
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import is_empty_execute_response

    truth = answer["ground_truth"]
    if len(turns) != len(truth):
        return False, f"force-terminated: {len(turns)} turns of {len(truth)}"
    decoded: list[list[list[str]]] = []
    for turn in turns:
        steps = []
        for output in turn:
            try:
                calls = _decoded(output)
            except Exception:
                continue
            if not is_empty_execute_response(calls):
                steps.append(calls)
        decoded.append(steps)
    result = multi_turn_checker(decoded, truth, dict(entry), category.name, model)
    return bool(result["valid"]), str(result.get("error_message", "valid"))[:300]


def _decoded(output: Any) -> list[str]:
    """A step's output as BFCL's function-calling handler decodes it for execution (``convert_to_function_call``
    in ``bfcl_eval/model_handler/utils.py``, which cannot be imported without tree_sitter and tenacity): each
    ``{name: arguments}`` becomes ``name(key=repr(value), ...)``, arguments given as text read as JSON; a text
    output (no calls) raises, as there."""
    items = [output] if isinstance(output, dict) else output
    found = []
    for item in items:
        for name, arguments in item.items():  # a text has no .items(): AttributeError, as in BFCL
            values = json.loads(arguments) if isinstance(arguments, str) else arguments
            found.append(f"{name}({','.join(f'{k}={v!r}' for k, v in values.items())})")
    return found


# --- the table ------------------------------------------------------------------------------------------------------


@dataclass
class Tally:
    """One category's verdicts."""

    verdicts: Counter[bool] = field(default_factory=Counter)
    passed: int = 0
    """Trajectories BFCL passes (the rest it fails): the table shows both kinds were judged."""
    kinds: Counter[tuple[str, bool]] = field(default_factory=Counter)
    lines: list[str] = field(default_factory=list)


def main(argv: list[str]) -> int:
    """Play every crafted trajectory through tsuka run, judge each with BFCL's checker, print the agreement."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="entries per category (0: all)")
    parser.add_argument("--category", action="append", help="a suite name (bfcl-multi-turn-base...); default: all")
    parser.add_argument("--stream", choices=["both", "on", "off"], default="both", help="how tsuka asks the server")
    parser.add_argument("--show", type=int, default=20, help="disagreements to print (all are counted)")
    args = parser.parse_args(argv)
    data = bfcl_data()
    if data is None:
        print("bfcl-eval is not installed: pip install --no-deps bfcl-eval mpmath", file=sys.stderr)
        return 2
    modes = {"both": [True, False], "on": [True], "off": [False]}[args.stream]
    tallies: dict[str, Tally] = {}
    for category in [c for c in MULTI_TURN if not args.category or c.suite in args.category]:
        name = f"BFCL_v4_{category.name}.json"
        answers = {r["id"]: r for r in rows(data / "possible_answer" / name)}
        entries = list(rows(data / name))[: args.limit or None]
        plays = {e["id"]: crafted(e, answers[e["id"]], 0) for e in entries}
        tally = tallies.setdefault(category.suite, Tally())
        for stream in modes:
            served = through_run(category, entries, plays, stream)
            for entry in entries:
                for kind in plays[entry["id"]]:
                    ours, why, turns = served[(entry["id"], kind)]
                    model = f"agree_{kind}_{int(stream)}"
                    theirs, their_why = bfcl_verdict(entry, answers[entry["id"]], turns, model, category)
                    tally.verdicts[ours == theirs] += 1
                    tally.passed += theirs
                    tally.kinds[(kind, ours == theirs)] += 1
                    if ours != theirs:
                        tally.lines.append(f"{entry['id']} {kind} {'streamed' if stream else 'not streamed'}: "
                                           f"tsuka {'passes' if ours else 'fails'} ({why}); BFCL "
                                           f"{'passes' if theirs else 'fails'} ({their_why})")  # fmt: skip
        print(f"{category.suite}: {sum(tally.verdicts.values())} trajectories judged", file=sys.stderr)
    _print(tallies, args.show)
    return 0


def _print(tallies: Mapping[str, Tally], show: int) -> None:
    print(f"{'category':<32} {'trajectories':>12} {'BFCL passes':>12} {'agree':>7} {'agreement':>10}")
    for suite, tally in tallies.items():
        total = sum(tally.verdicts.values())
        share = tally.verdicts[True] / total if total else 1.0
        print(f"{suite:<32} {total:>12} {tally.passed:>12} {tally.verdicts[True]:>7} {share:>10.2%}")
    print_disagreeing_kinds(tallies, 32, "trajectory")
    print_disagreements([line for tally in tallies.values() for line in tally.lines], show)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
