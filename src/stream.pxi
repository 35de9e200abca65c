# The native stream: a compiled program and tool table shared by streams, and one
# tp_stream per response whose C events become the event objects of events.pxi.
from cpython.buffer cimport (PyBUF_C_CONTIGUOUS, PyBUF_FORMAT, PyBuffer_Release,
                             PyObject_CheckBuffer, PyObject_GetBuffer)
from cpython.unicode cimport PyUnicode_DecodeUTF8
import array as _array


cdef uint32_t _STREAM_REPAIR = 1  # TP_STREAM_REPAIR



cdef inline str _text(const uint8_t *arena, uint32_t off, uint32_t n):
    return PyUnicode_DecodeUTF8(<const char *>arena + off, n, "replace")


# The per-token events are made without the Python-level constructor call: the type's
# tp_new (with its freelist) and a field store.
cdef inline tuple _marked_repairs(uint32_t code):
    """The repairs an end event's code marks (csrc/event.h), in toolparse.repair's order."""
    if not code & 10:
        return ()
    if code & 10 == 10:
        return (_MISSING_OPENER, _MISSING_CLOSER)
    return (_MISSING_OPENER,) if code & 2 else (_MISSING_CLOSER,)


cdef inline ContentDelta _content(str text):
    cdef ContentDelta event = ContentDelta.__new__(ContentDelta)
    event.text = text
    return event


cdef inline ReasoningDelta _reasoning(str text):
    cdef ReasoningDelta event = ReasoningDelta.__new__(ReasoningDelta)
    event.text = text
    return event


cdef inline ToolCallArgsDelta _args_delta(Py_ssize_t index, str text):
    cdef ToolCallArgsDelta event = ToolCallArgsDelta.__new__(ToolCallArgsDelta)
    event.index = index
    event.text = text
    return event


cdef class NativeProgram:
    """A compiled format program loaded into the C core; share it between streams."""

    cdef tp_program *_c

    def __cinit__(self, bytes blob not None):
        cdef const char *where = NULL
        cdef tp_status status = tp_program_new(<const uint8_t *>PyBytes_AS_STRING(blob),
                                               <size_t>PyBytes_GET_SIZE(blob), &self._c, &where)
        if status == TP_ERR_ARG:
            detail = where.decode() if where != NULL else "malformed"
            raise ValueError(f"not a valid toolparse program: {detail}")
        _check(status)

    def __dealloc__(self):
        tp_program_free(self._c)

    def has_entry(self, str entry not None):
        data = entry.encode()
        return tp_program_entry(self._c, data, len(data)) >= 0


cdef class NativeTools:
    """The tool table (names and parameter types) in the C core."""

    cdef tp_tools *_c

    def __cinit__(self, bytes blob not None):
        _check(tp_tools_new(<const uint8_t *>PyBytes_AS_STRING(blob),
                            <size_t>PyBytes_GET_SIZE(blob), &self._c))

    def __dealloc__(self):
        tp_tools_free(self._c)


cdef class NativeVocab:
    """A tokenizer's tokens as bytes in the C core (toolparse.Vocab builds it); share it
    between streams and threads."""

    cdef tp_vocab *_c
    cdef readonly uint32_t size

    def __cinit__(self, bytes table not None, offsets not None, bytes special=None):
        cdef const uint32_t[::1] ends = _u32(offsets)
        if ends.shape[0] < 1:
            raise ValueError("offsets needs one entry more than there are tokens")
        if special is not None and len(special) != ends.shape[0] - 1:
            raise ValueError("special needs one flag per token")
        status = tp_vocab_new(<const uint8_t *>PyBytes_AS_STRING(table),
                              <size_t>PyBytes_GET_SIZE(table), &ends[0],
                              <const uint8_t *>PyBytes_AS_STRING(special)
                              if special is not None else NULL,
                              <uint32_t>(ends.shape[0] - 1), &self._c)
        if status == TP_ERR_ARG:
            raise ValueError("offsets must not decrease nor pass the end of the table")
        _check(status)
        self.size = tp_vocab_size(self._c)

    def __dealloc__(self):
        tp_vocab_free(self._c)


cdef bint _is_u32(const Py_buffer *view):
    cdef const char *f = view.format
    if view.itemsize != 4 or view.ndim != 1 or f == NULL:
        return False
    if f[0] == b'=' or f[0] == b'<' or f[0] == b'@':  # the core runs little-endian
        f += 1
    return (f[0] == b'I' or f[0] == b'L') and f[1] == 0


cdef int _ids_buffer(object ids, Py_buffer *view) except -1:
    """A C-contiguous uint32 buffer of ids: their own when they are one (array('I'),
    numpy uint32), else a converted copy.  The caller releases it (PyBuffer_Release).
    Cheaper than a typed memoryview, which matters once per decode step."""
    if PyObject_CheckBuffer(ids):
        try:
            PyObject_GetBuffer(ids, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT)
        except (BufferError, ValueError):
            pass  # not contiguous (numpy says ValueError): converted below
        else:
            if _is_u32(view):
                return 0
            PyBuffer_Release(view)
    PyObject_GetBuffer(_u32(ids), view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT)
    return 0


cdef object _u32(object ids):
    """ids (an int, a sequence of ints or a buffer of integers, e.g. a numpy array) as a
    contiguous buffer of uint32; a uint32 buffer is used as it is."""
    if isinstance(ids, int):
        ids = (ids,)
    try:
        view = memoryview(ids)
    except TypeError:
        view = None
    if view is not None and view.format in ("I", "=I", "<I") and view.itemsize == 4 \
            and view.c_contiguous and view.ndim == 1:
        return view
    values = view.tolist() if view is not None else ids
    try:
        return _array.array("I", values)
    except (OverflowError, TypeError) as error:
        raise ValueError(f"token ids must be integers from 0 to 2**32 - 1 ({error})") from None


cdef class NativePool:
    """Storage for many streams' fixed state, a block each on huge pages where the system
    has them (csrc/pool.h): the streams of a batch.  A stream made in it keeps it alive."""

    cdef tp_pool *_c
    cdef PyThread_type_lock _lock  # the C pool is not thread-safe; streams die in any thread

    def __cinit__(self):
        self._lock = PyThread_allocate_lock()
        if self._lock == NULL:
            raise MemoryError()
        _check(tp_pool_new(&self._c))

    def __dealloc__(self):
        tp_pool_free(self._c)
        if self._lock != NULL:
            PyThread_free_lock(self._lock)

    @property
    def block_size(self):
        """Bytes of one stream's block (0 before the first stream)."""
        return tp_pool_block_size(self._c)

    @property
    def live(self):
        """Streams holding a block."""
        return tp_pool_live(self._c)


cdef _replace_args_delta(list out, int index, str arguments_json):
    """The held arguments of a call, just sent in one delta, sent as coerced instead."""
    cdef Py_ssize_t k
    for k in range(len(out) - 1, -1, -1):
        if type(out[k]) is ToolCallArgsDelta and out[k].index == index:
            out[k] = _args_delta(index, arguments_json)
            return


# (no_gc_clear: a stream in a pool frees its block in __dealloc__, so its reference to the
# pool must still be there when a cycle holding the stream is collected)
@cython.no_gc_clear
cdef class NativeStream:
    """One response parsed by the C VM: feed/finish return event objects."""

    cdef tp_stream *_c
    cdef readonly NativeProgram program
    cdef readonly object tools
    cdef readonly NativePool pool
    cdef object id_factory
    cdef dict ids
    cdef readonly list tool_calls
    cdef readonly list errors
    cdef readonly object limits
    # repair mode: a call's arguments (as read) with its values coerced to the tool's types
    # and their JSON, or None (toolparse.repair.coerce_call)
    cdef public object coerce

    def __cinit__(self, NativeProgram program not None, str entry not None, NativeTools tools,
                  id_factory not None, bint repair=False, limits=None, NativePool pool=None):
        cdef tp_status status
        _require_configured()
        data = entry.encode()
        self.program = program
        self.tools = tools
        self.id_factory = id_factory
        self.limits = _DEFAULT_LIMITS if limits is None else limits
        self.pool = pool
        if pool is None:
            status = tp_stream_new(program._c, data, len(data),
                                   tools._c if tools is not None else NULL,
                                   _STREAM_REPAIR if repair else 0, &self._c)
        else:
            PyThread_acquire_lock(pool._lock, WAIT_LOCK)
            status = tp_stream_new_in(program._c, data, len(data),
                                      tools._c if tools is not None else NULL,
                                      _STREAM_REPAIR if repair else 0, pool._c, &self._c)
            PyThread_release_lock(pool._lock)
        _check(status)
        self._set_limits()
        self.ids = {}
        self.tool_calls = []
        self.errors = []

    def __dealloc__(self):
        if self.pool is None:
            tp_stream_free(self._c)
        else:
            PyThread_acquire_lock(self.pool._lock, WAIT_LOCK)
            tp_stream_free(self._c)
            PyThread_release_lock(self.pool._lock)

    cdef _set_limits(self):
        cdef tp_limits c
        limits = self.limits
        c.max_depth = limits.max_depth
        c.max_argument_bytes = limits.max_argument_bytes
        c.max_pending_bytes = limits.max_pending_bytes
        c.max_tool_calls = limits.max_tool_calls
        c.max_stream_bytes = limits.max_stream_bytes or 0
        _check(tp_stream_set_limits(self._c, &c))

    def held_bytes(self):
        """Bytes held for undecided input and the open call (what the limits bound)."""
        return tp_stream_held_bytes(self._c)

    def reset(self):
        tp_stream_reset(self._c)
        self.ids = {}
        self.tool_calls = []
        self.errors = []

    def feed(self, data):
        cdef Py_ssize_t size
        data = _coerce(data)
        cdef const uint8_t *p = _pointer(data, &size)
        cdef tp_status status
        if size >= NOGIL_THRESHOLD:
            with nogil:
                status = tp_stream_feed(self._c, p, <size_t>size)
        else:
            status = tp_stream_feed(self._c, p, <size_t>size)
        if status == TP_ERR_STATE:
            raise ValueError("feed() after finish(); call reset() for the next response")
        _check(status)
        return self._events()

    def set_special(self, bytes flags):
        """Special-token markers: flags[i] != 0 when program string i is a special
        token's text (it then matches only where that token was fed); None: off."""
        if flags is None:
            _check(tp_stream_set_special(self._c, NULL, 0))
        else:
            _check(tp_stream_set_special(self._c, <const uint8_t *>PyBytes_AS_STRING(flags),
                                         <uint32_t>PyBytes_GET_SIZE(flags)))

    def feed_tokens(self, NativeVocab vocab not None, ids):
        """Feeds the bytes of these token ids (an int, a sequence or a buffer of ints)."""
        cdef uint32_t one, bad = 0
        cdef Py_buffer many
        cdef const uint32_t *p
        cdef size_t n
        cdef tp_status status
        if isinstance(ids, int) and 0 <= ids <= 0xFFFFFFFF:
            one = ids
            status = tp_stream_feed_tokens(self._c, vocab._c, &one, 1, &bad)
        else:
            _ids_buffer(ids, &many)
            p, n = <const uint32_t *>many.buf, <size_t>many.shape[0]
            try:
                if n == 0:
                    return []
                if n >= NOGIL_THRESHOLD:
                    with nogil:
                        status = tp_stream_feed_tokens(self._c, vocab._c, p, n, &bad)
                else:
                    status = tp_stream_feed_tokens(self._c, vocab._c, p, n, &bad)
            finally:
                PyBuffer_Release(&many)
        if status == TP_ERR_ARG:
            raise ValueError(f"token id {bad} is not in the vocab (size {vocab.size})")
        if status == TP_ERR_STATE:
            raise ValueError("feed() after finish(); call reset() for the next response")
        _check(status)
        return self._events()

    def finish(self, bint cut_short=False):
        cdef tp_status status = tp_stream_finish(self._c, cut_short)
        if status == TP_ERR_STATE:
            raise ValueError("finish() was already called; call reset() for the next response")
        _check(status)
        return self._events()

    cdef list _events(self):
        cdef size_t n
        cdef const uint8_t *arena
        cdef const tp_event *events = tp_stream_events(self._c, &n, &arena)
        return self._convert(events, n, arena)

    cdef list _convert(self, const tp_event *events, size_t n, const uint8_t *arena):
        """This stream's events as objects; call starts, ends and errors also update the
        stream's ids, calls and errors, so each C event is converted once."""
        cdef size_t k
        cdef const tp_event *ev
        cdef list out = []
        for k in range(n):
            ev = &events[k]
            if ev.kind == TP_EV_CONTENT:
                out.append(_content(_text(arena, ev.text_off, ev.text_len)))
            elif ev.kind == TP_EV_ARGS:
                out.append(_args_delta(ev.index, _text(arena, ev.text_off, ev.text_len)))
            elif ev.kind == TP_EV_REASONING:
                out.append(_reasoning(_text(arena, ev.text_off, ev.text_len)))
            elif ev.kind == TP_EV_CALL_START:
                carried = _text(arena, ev.aux_off, ev.aux_len)
                call_id = carried or self.id_factory()
                self.ids[ev.index] = call_id
                out.append(ToolCallStart(ev.index, call_id,
                                         _text(arena, ev.text_off, ev.text_len)))
            elif ev.kind == TP_EV_CALL_END:
                self._call_end(ev, _text(arena, ev.text_off, ev.text_len), arena, out,
                               _marked_repairs(ev.code))
            elif ev.kind == TP_EV_CALL_REPAIR:
                self._repaired_call(ev, arena, out)
            else:
                if ev.msg >= <uint32_t>_FIRST_LIMIT_MESSAGE:
                    message = self.limits.message(_LIMIT_NAMES[ev.msg - _FIRST_LIMIT_MESSAGE])
                else:
                    message = _ERROR_MESSAGES[ev.msg]
                if message is None:
                    message = _detailed_message(ev.msg,
                                                _text(arena, ev.text_off, ev.text_len))
                self._error(_ERROR_KINDS[ev.code], message, ev, out)
        return out

    cdef _call_end(self, const tp_event *ev, str arguments_json, const uint8_t *arena,
                   list out, tuple repairs):
        """The call, or an error where its arguments do not read whole (toolparse.arguments)."""
        try:
            arguments = _load_arguments(arguments_json)
        except ValueError as exc:
            self._error("invalid_arguments", str(exc), ev, out)
            return
        name = _text(arena, ev.aux_off, ev.aux_len)
        if ev.code & 4 and self.coerce is None:  # (no stated type to convert it to)
            self._error("invalid_arguments", _ERROR_MESSAGES[TP_MSG_INVALID_ARGUMENTS], ev, out)
            return
        if self.coerce is not None:  # repair mode: the arguments just went out whole
            try:
                coerced = self.coerce(name, arguments, _CLOSED_AT_END in repairs, ev.code & 4 != 0)
            except ValueError as exc:  # a value written as text that converts to no type
                self._error("invalid_arguments", str(exc), ev, out)
                return
            if coerced is not None:
                (arguments, arguments_json), repairs = coerced, repairs + (_COERCED_VALUES,)
                _replace_args_delta(out, ev.index, arguments_json)
        call = _ToolCall(ev.index, self.ids[ev.index], name, arguments, arguments_json,
                         bool(repairs), repairs)
        self.tool_calls.append(call)
        out.append(ToolCallEnd(ev.index, call))

    cdef _repaired_call(self, const tp_event *ev, const uint8_t *arena, list out):
        """A call the repair opt-in may salvage: repaired arguments, or an error."""
        try:
            repaired = _repair_arguments(_text(arena, ev.text_off, ev.text_len),
                                         ev.code & 1 != 0)
        except _NothingLeft:
            self._error("incomplete", _ERROR_MESSAGES[TP_MSG_ENDED_INSIDE_CALL], ev, out)
            return
        except ValueError as exc:
            self._error("invalid_arguments", str(exc), ev, out)
            return
        if repaired is None:
            self._error("invalid_arguments", _ERROR_MESSAGES[TP_MSG_NOT_AN_OBJECT], ev, out)
            return
        arguments_json, repairs = repaired
        repairs = _marked_repairs(ev.code) + repairs
        out.append(_args_delta(ev.index, arguments_json))
        self._call_end(ev, arguments_json, arena, out, repairs)

    cdef _error(self, str kind, str message, const tp_event *ev, list out):
        """A parse error, for the event's call if it has one."""
        error = _ParseError(kind, message, None if ev.index < 0 else ev.index, ev.offset)
        self.errors.append(error)
        out.append(error)

    def content(self):
        cdef size_t n
        cdef const uint8_t *p
        _check(tp_stream_content(self._c, &p, &n))
        return PyUnicode_DecodeUTF8(<const char *>p, n, "replace") if n else ""

    def reasoning(self):
        cdef size_t n
        cdef int present
        cdef const uint8_t *p
        _check(tp_stream_reasoning(self._c, &p, &n, &present))
        if not present:
            return None
        return PyUnicode_DecodeUTF8(<const char *>p, n, "replace") if n else ""
