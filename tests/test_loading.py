"""A command's loading phase runs with the cyclic garbage collector paused, then freezes what it made."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from tsuka_core.cli.loading import collector_paused


@pytest.fixture
def collector() -> Iterator[None]:
    """Leave the collector as the test found it, and nothing frozen by the test."""
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()
    else:
        gc.disable()


@pytest.mark.usefixtures("collector")
def test_the_collector_is_paused_while_loading_and_what_was_made_is_frozen() -> None:
    gc.enable()
    before = gc.get_freeze_count()
    with collector_paused():
        assert not gc.isenabled()
        made = [[n] for n in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= before + len(made)


@pytest.mark.usefixtures("collector")
def test_a_failed_load_restores_the_collector() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("bad suite")
    assert gc.isenabled()


@pytest.mark.usefixtures("collector")
def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()
