"""Judging an answer: the answer's normalised form, the check-type base class, JSON and pattern tools, scores.

Its face: :class:`~tsuka_core.judge.answer.Answer`, :class:`~tsuka_core.judge.checks.CheckType` with its
params, :class:`~tsuka_core.judge.outcome.Outcome`, and the scoring rules of ``scoring``.
"""
