# Event types: small immutable values, cheap to create from the native engine (a freelist,
# no __dict__, and no garbage-collector tracking for those that hold only str and int),
# pattern-matchable, comparable.  Both engines produce these same types.
cimport cython


cdef inline bint _same(object a, object b):
    return type(a) is type(b)


@cython.freelist(64)
@cython.no_gc
cdef class ReasoningDelta:
    """Reasoning text, in order; whole UTF-8 characters."""

    cdef readonly str text
    __match_args__ = ("text",)
    type = "reasoning.delta"

    def __init__(self, str text not None):
        self.text = text

    def __repr__(self):
        return f"ReasoningDelta(text={self.text!r})"

    def __eq__(self, other):
        if not _same(self, other):
            return NotImplemented
        return self.text == (<ReasoningDelta>other).text

    def __hash__(self):
        return hash((ReasoningDelta, self.text))


@cython.freelist(64)
@cython.no_gc
cdef class ContentDelta:
    """Visible text, in order; whole UTF-8 characters; never part of a marker."""

    cdef readonly str text
    __match_args__ = ("text",)
    type = "content.delta"

    def __init__(self, str text not None):
        self.text = text

    def __repr__(self):
        return f"ContentDelta(text={self.text!r})"

    def __eq__(self, other):
        if not _same(self, other):
            return NotImplemented
        return self.text == (<ContentDelta>other).text

    def __hash__(self):
        return hash((ContentDelta, self.text))


@cython.no_gc
cdef class ToolCallStart:
    """A call's name is complete: the call has an index and an id from here on."""

    cdef readonly Py_ssize_t index
    cdef readonly str id
    cdef readonly str name
    __match_args__ = ("index", "id", "name")
    type = "tool_call.start"

    def __init__(self, Py_ssize_t index, str id not None, str name not None):
        self.index = index
        self.id = id
        self.name = name

    def __repr__(self):
        return f"ToolCallStart(index={self.index}, id={self.id!r}, name={self.name!r})"

    def __eq__(self, other):
        if not _same(self, other):
            return NotImplemented
        cdef ToolCallStart o = <ToolCallStart>other
        return self.index == o.index and self.id == o.id and self.name == o.name

    def __hash__(self):
        return hash((ToolCallStart, self.index, self.id, self.name))


@cython.freelist(64)
@cython.no_gc
cdef class ToolCallArgsDelta:
    """The next piece of a call's arguments as JSON text."""

    cdef readonly Py_ssize_t index
    cdef readonly str text
    __match_args__ = ("index", "text")
    type = "tool_call.arguments.delta"

    def __init__(self, Py_ssize_t index, str text not None):
        self.index = index
        self.text = text

    def __repr__(self):
        return f"ToolCallArgsDelta(index={self.index}, text={self.text!r})"

    def __eq__(self, other):
        if not _same(self, other):
            return NotImplemented
        cdef ToolCallArgsDelta o = <ToolCallArgsDelta>other
        return self.index == o.index and self.text == o.text

    def __hash__(self):
        return hash((ToolCallArgsDelta, self.index, self.text))


cdef class ToolCallEnd:
    """The call is complete and its arguments are valid: the only event to act on."""

    cdef readonly Py_ssize_t index
    cdef readonly object call
    __match_args__ = ("index", "call")
    type = "tool_call.end"

    def __init__(self, Py_ssize_t index, call not None):
        self.index = index
        self.call = call

    def __repr__(self):
        return f"ToolCallEnd(index={self.index}, call={self.call!r})"

    def __eq__(self, other):
        if not _same(self, other):
            return NotImplemented
        cdef ToolCallEnd o = <ToolCallEnd>other
        return self.index == o.index and self.call == o.call

    def __hash__(self):
        return hash((ToolCallEnd, self.index))


cdef class End:
    """The stream is finished: the last event of finish()."""

    cdef readonly str finish_reason
    cdef readonly object message
    __match_args__ = ("finish_reason", "message")
    type = "end"

    def __init__(self, str finish_reason not None, message not None):
        self.finish_reason = finish_reason
        self.message = message

    def __repr__(self):
        return f"End(finish_reason={self.finish_reason!r}, message={self.message!r})"

    def __eq__(self, other):
        if not _same(self, other):
            return NotImplemented
        cdef End o = <End>other
        return self.finish_reason == o.finish_reason and self.message == o.message

    def __hash__(self):
        return hash((End, self.finish_reason))
