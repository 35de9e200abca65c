"""Pure-Python reference engines: the specification the C core is checked against.

Same API and the same answers as the native classes in ``toolparse``; slow on purpose
of being obviously correct.  Nothing here imports the compiled extension.
"""

from .json import JsonScanner
from .trie import MarkerMatcher, MarkerTrie

__all__ = ["JsonScanner", "MarkerMatcher", "MarkerTrie"]
