"""Tier gating: which tools a model may be offered, from its valid stored profile only.

Its face: :func:`~tsuka_core.gating.allowlist.allowed_tools` and ``gate_tools``; tier maps
(``tiermap``), the tool-list formats callers hold (``toolformats``) and the CI minimum-tier check
(``min_tier``) sit behind it.
"""
