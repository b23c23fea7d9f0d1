"""The contract's vocabulary: categories, effort levels, tiers, and the environment variables that name files."""

from __future__ import annotations

from typing import Literal

__all__ = [
    "CATEGORIES",
    "EFFORTS",
    "HISTORY_ENV",
    "PROFILES_ENV",
    "TIERS",
    "Category",
    "Effort",
    "Tier",
]

Category = Literal["instruction", "json", "toolCalling"]
CATEGORIES: tuple[Category, ...] = ("instruction", "json", "toolCalling")
"""The three categories, in the order scores are reported."""

Effort = Literal["none", "low", "medium", "xhigh"]
EFFORTS: tuple[Effort, ...] = ("none", "low", "medium", "xhigh")
"""Reasoning-effort levels, cheapest first."""

Tier = Literal["small", "medium", "large"]
TIERS: tuple[Tier, ...] = ("small", "medium", "large")
"""Tiers from lowest to highest."""

PROFILES_ENV = "TSUKA_PROFILES"
"""Environment variable naming the profile store."""

HISTORY_ENV = "TSUKA_HISTORY"
"""Environment variable naming the run history."""
