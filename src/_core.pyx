# cython: language_level=3
"""Native core of toolparse: thin wrappers over csrc/ (see docs/primitives.md)."""

from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.pythread cimport (PyThread_acquire_lock, PyThread_allocate_lock,
                               PyThread_free_lock, PyThread_release_lock, PyThread_type_lock,
                               WAIT_LOCK)

from ctoolparse cimport *


cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object text, Py_ssize_t *size) except NULL


# Feeds at least this long release the GIL while the core runs.
cdef enum:
    NOGIL_THRESHOLD = 4096
    MATCH_BATCH = 64

cdef dict _DIALECTS = {"strict": TP_JSON_STRICT, "lenient": TP_JSON_LENIENT,
                       "python": TP_JSON_PYTHON}
cdef tuple _VERDICTS = ("need_more", "complete", "error", "incomplete")


# The package's own types and tables, handed over once by toolparse._native (configure()):
# the glue imports nothing from the package, which sits above it.
cdef object _raise_for_status = None
cdef object _marker_bytes = None
cdef object _ParseError = None
cdef object _ToolCall = None
cdef object _repair_arguments = None
cdef object _NothingLeft = None
cdef str _COERCED_VALUES = ""
cdef str _CLOSED_AT_END = ""
cdef str _MISSING_OPENER = ""
cdef str _MISSING_CLOSER = ""
cdef object _load_arguments = None
cdef object _detailed_message = None
cdef object _DEFAULT_LIMITS = None
cdef tuple _LIMIT_NAMES = ()
cdef tuple _ERROR_KINDS = ()
cdef tuple _ERROR_MESSAGES = ()
cdef int _FIRST_LIMIT_MESSAGE = 0


def configure(*, raise_for_status, marker_bytes, parse_error, tool_call, repair_arguments,
              nothing_left, str coerced_values, str closed_at_end, str missing_opener,
              str missing_closer,
              load_arguments,
              detailed_message, default_limits, tuple limit_names, tuple error_kinds,
              tuple messages, int first_limit_message):
    """Hands the glue the package's exception mapping, event types and message tables."""
    global _raise_for_status, _marker_bytes, _ParseError, _ToolCall, _repair_arguments
    global _load_arguments, _NothingLeft, _COERCED_VALUES, _CLOSED_AT_END, _MISSING_OPENER
    global _MISSING_CLOSER
    global _detailed_message, _DEFAULT_LIMITS, _LIMIT_NAMES, _ERROR_KINDS, _ERROR_MESSAGES
    global _FIRST_LIMIT_MESSAGE
    _raise_for_status, _marker_bytes = raise_for_status, marker_bytes
    _ParseError, _ToolCall, _repair_arguments = parse_error, tool_call, repair_arguments
    _load_arguments, _NothingLeft = load_arguments, nothing_left
    _COERCED_VALUES, _CLOSED_AT_END = coerced_values, closed_at_end
    _MISSING_OPENER, _MISSING_CLOSER = missing_opener, missing_closer
    _detailed_message, _DEFAULT_LIMITS = detailed_message, default_limits
    _LIMIT_NAMES = limit_names
    _ERROR_KINDS, _ERROR_MESSAGES = error_kinds, messages
    _FIRST_LIMIT_MESSAGE = first_limit_message


cdef int _require_configured() except -1:
    if _raise_for_status is None:
        raise RuntimeError("toolparse._core is set up by toolparse._native: import that first")
    return 0


cdef int _check(tp_status status) except -1:
    if status == TP_OK:
        return 0
    _require_configured()
    _raise_for_status(<int>status)
    return -1


cdef inline object _coerce(object data):
    """bytes or str pass through; other bytes-like objects are copied to bytes."""
    if type(data) is bytes or type(data) is str:
        return data
    if isinstance(data, (str, bytes, bytearray, memoryview)):
        return bytes(data) if not isinstance(data, str) else str(data)
    raise TypeError(f"expected str or bytes, not {type(data).__name__}")


cdef inline const uint8_t *_pointer(object data, Py_ssize_t *size) except? NULL:
    """Borrowed pointer to the UTF-8 bytes of data (bytes or str); valid while data lives."""
    if type(data) is bytes:
        size[0] = PyBytes_GET_SIZE(data)
        return <const uint8_t *>PyBytes_AS_STRING(data)
    return <const uint8_t *>PyUnicode_AsUTF8AndSize(data, size)


cdef class MarkerTrie:
    """An immutable marker automaton; make one matcher per stream with matcher()."""

    cdef tp_trie *_c
    cdef readonly tuple markers

    def __cinit__(self, markers):
        _require_configured()
        cdef list encoded = _marker_bytes(markers)
        cdef size_t n = len(encoded)
        cdef const uint8_t **ptrs = <const uint8_t **>malloc(n * sizeof(uint8_t *))
        cdef size_t *lens = <size_t *>malloc(n * sizeof(size_t))
        cdef size_t k, bad = 0
        cdef tp_status status
        try:
            if ptrs == NULL or lens == NULL:
                raise MemoryError()
            for k in range(n):
                ptrs[k] = <const uint8_t *>PyBytes_AS_STRING(encoded[k])
                lens[k] = <size_t>PyBytes_GET_SIZE(encoded[k])
            status = tp_trie_new(ptrs, lens, n, &self._c, &bad)
            _check(status)
        finally:
            free(ptrs)
            free(lens)
        self.markers = tuple(encoded)

    def __dealloc__(self):
        tp_trie_free(self._c)

    def __len__(self):
        return tp_trie_count(self._c)

    @property
    def max_length(self):
        return tp_trie_max_length(self._c)

    def matcher(self):
        return MarkerMatcher(self)

    def find_all(self, data):
        cdef MarkerMatcher m = MarkerMatcher(self)
        return m.feed(data) + m.finish()

    def __repr__(self):
        return f"MarkerTrie({[m for m in self.markers]!r})"


cdef class MarkerMatcher:
    """Streaming leftmost-longest matches of one trie's markers, with holdback."""

    cdef tp_matcher *_c
    cdef readonly MarkerTrie trie

    def __cinit__(self, MarkerTrie trie not None):
        self.trie = trie
        _check(tp_matcher_new(trie._c, &self._c))

    def __dealloc__(self):
        tp_matcher_free(self._c)

    def reset(self):
        tp_matcher_reset(self._c)

    @property
    def position(self):
        return tp_matcher_position(self._c)

    @property
    def holdback(self):
        return tp_matcher_holdback(self._c)

    @property
    def finished(self):
        return bool(tp_matcher_finished(self._c))

    def feed(self, data):
        """Feeds str or bytes; returns the (marker_id, start, end) matches now certain."""
        cdef tp_match found[MATCH_BATCH]
        cdef size_t n_found, k, used
        cdef Py_ssize_t size
        cdef list out = []
        if tp_matcher_finished(self._c):
            raise ValueError("feed() after finish(); call reset() to match again")
        data = _coerce(data)
        cdef const uint8_t *p = _pointer(data, &size)
        cdef size_t left = <size_t>size
        while True:
            if left >= NOGIL_THRESHOLD:
                with nogil:
                    used = tp_matcher_feed(self._c, p, left, found, MATCH_BATCH, &n_found)
            else:
                used = tp_matcher_feed(self._c, p, left, found, MATCH_BATCH, &n_found)
            p += used
            left -= used
            for k in range(n_found):
                out.append((found[k].id, found[k].start, found[k].end))
            if n_found < MATCH_BATCH:
                return out

    def finish(self):
        """Ends the input; returns the matches only the end could decide."""
        cdef tp_match found[MATCH_BATCH]
        cdef size_t n_found, k
        cdef tp_status status
        cdef list out = []
        while True:
            status = tp_matcher_finish(self._c, found, MATCH_BATCH, &n_found)
            for k in range(n_found):
                out.append((found[k].id, found[k].start, found[k].end))
            if status == TP_OK:
                return out


cdef class JsonScanner:
    """Scans one JSON value incrementally, in the strict, lenient or python dialect."""

    cdef tp_json *_c
    cdef readonly str dialect
    cdef readonly uint32_t max_depth

    def __cinit__(self, str dialect="strict", max_depth=TP_JSON_DEFAULT_MAX_DEPTH):
        if dialect not in _DIALECTS:
            raise ValueError(f"unknown JSON dialect {dialect!r}")
        if not isinstance(max_depth, int) or not 1 <= max_depth <= TP_JSON_MAX_DEPTH_CEILING:
            raise ValueError(f"max_depth must be 1..{TP_JSON_MAX_DEPTH_CEILING}")
        _check(tp_json_new(<tp_json_dialect>_DIALECTS[dialect], max_depth, &self._c))
        self.dialect = dialect
        self.max_depth = max_depth

    def __dealloc__(self):
        tp_json_free(self._c)

    def reset(self):
        tp_json_reset(self._c)

    def feed(self, data):
        """Scans str or bytes: "need_more", "complete" or "error"."""
        cdef Py_ssize_t size
        cdef tp_json_verdict verdict
        if tp_json_finished(self._c):
            raise ValueError("feed() after finish(); call reset() to scan again")
        data = _coerce(data)
        cdef const uint8_t *p = _pointer(data, &size)
        if size >= NOGIL_THRESHOLD:
            with nogil:
                verdict = tp_json_feed(self._c, p, <size_t>size, NULL)
        else:
            verdict = tp_json_feed(self._c, p, <size_t>size, NULL)
        return _VERDICTS[<int>verdict]

    def finish(self):
        """Ends the input: "complete", "incomplete" or "error"."""
        return _VERDICTS[<int>tp_json_finish(self._c)]

    @property
    def end(self):
        cdef int64_t end = tp_json_end(self._c)
        return None if end < 0 else end

    @property
    def error(self):
        cdef uint64_t offset
        cdef tp_json_reason reason = tp_json_error(self._c, &offset)
        if reason == TP_JSON_OK:
            return None
        return (offset, tp_json_reason_name(reason).decode("ascii"))

    @property
    def position(self):
        return tp_json_position(self._c)

    @property
    def depth(self):
        return tp_json_depth(self._c)

    @property
    def relaxations(self):
        cdef uint32_t bits = tp_json_relaxations(self._c)
        cdef unsigned k
        return tuple(tp_json_relaxation_name(k).decode("ascii")
                     for k in range(TP_JSON_RELAXATION_COUNT) if bits >> k & 1)

    @property
    def repaired(self):
        return tp_json_relaxations(self._c) != 0

    def closing_bytes(self):
        """The shortest suffix completing the value so far, or None after an error."""
        cdef size_t need = 0
        cdef tp_status status = tp_json_closing(self._c, NULL, 0, &need)
        if status == TP_ERR_STATE:
            return None
        if status == TP_OK:
            return b""
        cdef bytes out = PyBytes_FromStringAndSize(NULL, <Py_ssize_t>need)
        _check(tp_json_closing(self._c, PyBytes_AS_STRING(out), need, &need))
        return out

    def closing(self):
        """closing_bytes() as str (a partial UTF-8 character in surrogateescape form)."""
        suffix = self.closing_bytes()
        return None if suffix is None else suffix.decode("utf-8", "surrogateescape")


include "events.pxi"
include "stream.pxi"
include "batch.pxi"
