"""Formats derived rather than written: from a model's chat template (detect_format renders
it on probe conversations and reads the call shape back) and from a Hugging Face
``response_template`` / ``response_schema`` (from_response_template)."""

from __future__ import annotations

from .response_template import from_response_template
from .templates import Detection, detect_format

__all__ = ["Detection", "detect_format", "from_response_template"]
