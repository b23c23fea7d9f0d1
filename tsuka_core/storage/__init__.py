"""Persistence only: the profile store, the run history and its recorder, the response cache, safe files.

Its face: :class:`~tsuka_core.storage.store.ProfileStore`, the history's ``connect``/``load_run``
(``history``, ``history_query``), :class:`~tsuka_core.storage.recorder.RunRecorder` and the cache wrapper.
It imports nothing above the engine's result types.
"""
