"""The agent boundary after parsing: validate a call against its tool's schema
(validate), decide whether it may run (guard), and record what was parsed and decided
(audit)."""

from __future__ import annotations

from .guard import Decision, Guard, GuardPolicy, TurnReview
from .validate import CallValidation, ToolValidator, ValidationIssue, ValidationReport

__all__ = [
    "CallValidation",
    "Decision",
    "Guard",
    "GuardPolicy",
    "ToolValidator",
    "TurnReview",
    "ValidationIssue",
    "ValidationReport",
]
