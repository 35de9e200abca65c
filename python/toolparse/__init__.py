"""toolparse: a streaming parser for LLM output, tool calls and reasoning.

The native classes come from the compiled core; ``toolparse.reference`` holds their
pure-Python twins.  If the extension fails to import, this import fails too: the
reference engines are used only on explicit request, never as a silent fallback.
"""

from ._core import JsonScanner, MarkerMatcher, MarkerTrie

__version__ = "0.1.0"

__all__ = ["JsonScanner", "MarkerMatcher", "MarkerTrie", "__version__"]
