"""The mutation-testing script: each survivor's reason is one of three kinds, and mutants fall in their area."""

from __future__ import annotations

from devtools import mutation


def test_every_reason_says_which_kind_of_survivor_it_is() -> None:
    known = mutation.reasons()
    assert known, "tools/mutation_survivors.toml lists no survivor"
    for pattern, why in known:
        assert why.split(":", 1)[0] in ("equivalent", "wording", "gap", "killed"), (pattern, why)
        assert not pattern.startswith("tsuka_core."), pattern  # names are matched without the package


def test_mutants_fall_in_their_area_scoring_before_the_rest_of_the_judge() -> None:
    assert mutation.area_of("tsuka_core.gating.toolcap.x__shown__mutmut_3") == "gate"
    assert mutation.area_of("tsuka_core.judge.scoring.x_tier_for__mutmut_1") == "scoring"
    assert mutation.area_of("tsuka_core.judge.jsontools.x_extract_json__mutmut_2") == "judge"
    assert mutation.area_of("tsuka_core.engine.confidence.x_interval__mutmut_9") == "confidence"
    assert mutation.area_of("tsuka_core.record.level.xǁLevelRecordǁstored__mutmut_1") == "record"


def test_a_survivor_is_explained_by_the_first_pattern_that_matches_its_short_name() -> None:
    known = [("gating.toolcap.x__shown__mutmut_*", "wording: quoted value"), ("gating.*", "gap: any")]
    assert mutation.explained("tsuka_core.gating.toolcap.x__shown__mutmut_12", known) == "wording: quoted value"
    assert mutation.explained("tsuka_core.gating.tiermap.x_tool_name__mutmut_1", known) == "gap: any"
    assert mutation.explained("tsuka_core.judge.answer.x_f__mutmut_1", known) is None
