# The native stream: a compiled program and tool table shared by streams, and one
# tp_stream per response whose C events become the event objects of events.pxi.
from cpython.unicode cimport PyUnicode_DecodeUTF8
import json as _json

from toolparse.message import ParseError as _ParseError, ToolCall as _ToolCall
from toolparse.repair import repair_arguments as _repair_arguments

cdef uint32_t _STREAM_REPAIR = 1  # TP_STREAM_REPAIR

cdef tuple _ERROR_KINDS = ("incomplete", "invalid_arguments", "unexpected", "unknown_tool",
                           "limit")
cdef tuple _ERROR_MESSAGES = (
    "the stream ended inside a tool call",
    "the tool call's arguments are not valid",
    "input the format does not accept here",
    "the call has two sets of arguments",
    "the call has two names",
    "the call has an empty name",
    None,  # unknown tool: built with the name
    "the call has no name",
    "the arguments are not a JSON object",
    "a resource limit was exceeded",
)


cdef inline str _text(const uint8_t *arena, uint32_t off, uint32_t n):
    return PyUnicode_DecodeUTF8(<const char *>arena + off, n, "replace")


# The per-token events are made without the Python-level constructor call: the type's
# tp_new (with its freelist) and a field store.
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


cdef class NativeStream:
    """One response parsed by the C VM: feed/finish return event objects."""

    cdef tp_stream *_c
    cdef readonly NativeProgram program
    cdef readonly object tools
    cdef object id_factory
    cdef dict ids
    cdef readonly list tool_calls
    cdef readonly list errors

    def __cinit__(self, NativeProgram program not None, str entry not None, NativeTools tools,
                  id_factory not None, bint repair=False):
        data = entry.encode()
        self.program = program
        self.tools = tools
        self.id_factory = id_factory
        _check(tp_stream_new(program._c, data, len(data),
                             tools._c if tools is not None else NULL,
                             _STREAM_REPAIR if repair else 0, &self._c))
        self.ids = {}
        self.tool_calls = []
        self.errors = []

    def __dealloc__(self):
        tp_stream_free(self._c)

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

    def finish(self, bint cut_short=False):
        cdef tp_status status = tp_stream_finish(self._c, cut_short)
        if status == TP_ERR_STATE:
            raise ValueError("finish() was already called; call reset() for the next response")
        _check(status)
        return self._events()

    cdef list _events(self):
        cdef size_t n, k
        cdef const uint8_t *arena
        cdef const tp_event *events = tp_stream_events(self._c, &n, &arena)
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
                arguments_json = _text(arena, ev.text_off, ev.text_len)
                call = _ToolCall(ev.index, self.ids[ev.index], _text(arena, ev.aux_off, ev.aux_len),
                                 _json.loads(arguments_json), arguments_json)
                self.tool_calls.append(call)
                out.append(ToolCallEnd(ev.index, call))
            elif ev.kind == TP_EV_CALL_REPAIR:
                self._repaired_call(ev, arena, out)
            else:
                message = _ERROR_MESSAGES[ev.msg]
                if message is None:
                    message = f"{_text(arena, ev.text_off, ev.text_len)!r} is not one of the given tools"
                error = _ParseError(_ERROR_KINDS[ev.code], message,
                                    None if ev.index < 0 else ev.index, ev.offset)
                self.errors.append(error)
                out.append(error)
        return out

    cdef _repaired_call(self, const tp_event *ev, const uint8_t *arena, list out):
        """A call the repair opt-in may salvage: repaired arguments, or an error."""
        arguments_json = _repair_arguments(_text(arena, ev.text_off, ev.text_len))
        if arguments_json is None:
            error = _ParseError("invalid_arguments", "the arguments are not a JSON object",
                                ev.index, ev.offset)
            self.errors.append(error)
            out.append(error)
            return
        out.append(_args_delta(ev.index, arguments_json))
        call = _ToolCall(ev.index, self.ids[ev.index], _text(arena, ev.aux_off, ev.aux_len),
                         _json.loads(arguments_json), arguments_json, True)
        self.tool_calls.append(call)
        out.append(ToolCallEnd(ev.index, call))

    def content(self):
        cdef size_t n
        cdef const uint8_t *p = tp_stream_content(self._c, &n)
        return PyUnicode_DecodeUTF8(<const char *>p, n, "replace") if n else ""

    def reasoning(self):
        cdef size_t n
        cdef int present
        cdef const uint8_t *p = tp_stream_reasoning(self._c, &n, &present)
        if not present:
            return None
        return PyUnicode_DecodeUTF8(<const char *>p, n, "replace") if n else ""
