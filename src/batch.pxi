# One decode step of many streams: a tp_batch of borrowed tp_streams, fed in one call with
# the GIL released, whose events stay in C buffers (BatchEvents) until they are read.

cdef tuple _BATCH_FAULTS = (
    None,
    "no stream in slot {slot}",
    "slot {slot} is given twice in one step",
    "token id {token} is not in the vocab (size {size})",
    "the stream in slot {slot} was already finished",
)


cdef list _text_events(const tp_event *events, size_t n, const uint8_t *arena):
    """Text pieces (content, reasoning, arguments) as event objects: they need no stream."""
    cdef size_t k
    cdef list out = []
    for k in range(n):
        ev = &events[k]
        if ev.kind == TP_EV_CONTENT:
            out.append(_content(_text(arena, ev.text_off, ev.text_len)))
        elif ev.kind == TP_EV_ARGS:
            out.append(_args_delta(ev.index, _text(arena, ev.text_off, ev.text_len)))
        else:
            out.append(_reasoning(_text(arena, ev.text_off, ev.text_len)))
    return out


cdef class NativeBatch:
    """Streams by slot, fed one token id each per step (see BatchParser)."""

    cdef tp_batch *_c
    cdef list _streams  # NativeStream by slot: the batch keeps them alive
    cdef tp_batch_events *_spare  # the buffers of a step's events, handed back for reuse
    cdef bint _busy

    def __cinit__(self):
        _check(tp_batch_new(&self._c))
        self._streams = []

    def __dealloc__(self):
        tp_batch_free(self._c)
        tp_batch_events_free(self._spare)

    cdef int _idle(self) except -1:
        if self._busy:
            raise RuntimeError("the batch is being fed in another thread")
        return 0

    def set(self, uint32_t slot, NativeStream stream):
        """Puts a stream in a slot (None empties it)."""
        self._idle()
        _check(tp_batch_set(self._c, slot, stream._c if stream is not None else NULL))
        while len(self._streams) <= slot:
            self._streams.append(None)
        self._streams[slot] = stream

    def feed(self, NativeVocab vocab not None, slots, tokens, keys=None):
        """Feeds the stream in slots[k] the token tokens[k] (each slot at most once).
        Returns the step's BatchEvents, which name a stream by keys[k] (or its slot)."""
        cdef Py_buffer at, ids
        self._idle()
        _ids_buffer(slots, &at)
        try:
            _ids_buffer(tokens, &ids)
            try:
                return self._step(vocab, <const uint32_t *>at.buf, <const uint32_t *>ids.buf,
                                  <size_t>at.shape[0], <size_t>ids.shape[0], keys)
            finally:
                PyBuffer_Release(&ids)
        finally:
            PyBuffer_Release(&at)

    cdef BatchEvents _step(self, NativeVocab vocab, const uint32_t *at, const uint32_t *ids,
                           size_t n, size_t n_ids, keys):
        cdef size_t failed = 0, k, groups_n, events_n
        cdef tp_batch_fault fault = TP_BATCH_NO_FAULT
        cdef tp_status status
        cdef tp_batch_events *out
        cdef BatchEvents result
        cdef const tp_batch_group *groups
        cdef const tp_event *events
        cdef const uint8_t *arena
        if n_ids != n:
            raise ValueError(f"{n} slots but {n_ids} tokens")
        if keys is not None and <size_t>len(keys) != n:
            raise ValueError(f"{n} slots but {len(keys)} keys")
        out, self._spare = self._spare, NULL
        if out == NULL:
            _check(tp_batch_events_new(&out))
        result = BatchEvents.__new__(BatchEvents)
        result._c = out
        result._owner = self
        result._keys = keys
        self._busy = True
        with nogil:
            status = tp_batch_feed(self._c, vocab._c, at, ids, n, out, &fault, &failed)
        self._busy = False
        if status == TP_ERR_ARG and fault != TP_BATCH_NO_FAULT:
            raise ValueError(_BATCH_FAULTS[fault].format(
                slot=at[failed], token=ids[failed], size=vocab.size))
        _check(status)
        # call starts, ends and errors update their stream now, read or not
        groups = tp_batch_events_groups(out, &groups_n)
        events = tp_batch_events_list(out, &events_n, &arena)
        for k in range(groups_n):
            if groups[k].stateful:
                if result._made is None:
                    result._made = {}
                stream = <NativeStream>self._streams[groups[k].slot]
                result._made[k] = stream._convert(events + groups[k].first, groups[k].count,
                                                  arena)
        return result


cdef class BatchEvents:
    """The events of one step: (stream, events) for each stream that produced any, in the
    order the step named them.  The events stay in C buffers until read; reading makes
    the event objects (text pieces anew on each read, the rest once, at the step)."""

    cdef tp_batch_events *_c
    cdef NativeBatch _owner
    cdef object _keys
    cdef dict _made  # group -> events converted at the step (those that change a stream)

    def __dealloc__(self):
        if self._owner is not None and self._owner._spare == NULL:
            self._owner._spare = self._c  # the next step reuses the buffers
        else:
            tp_batch_events_free(self._c)

    def __len__(self):
        cdef size_t n
        tp_batch_events_groups(self._c, &n)
        return n

    def __getitem__(self, Py_ssize_t j):
        cdef size_t n, events_n
        cdef const tp_batch_group *groups = tp_batch_events_groups(self._c, &n)
        cdef const tp_event *events
        cdef const uint8_t *arena
        if j < 0:
            j += n
        if j < 0 or <size_t>j >= n:
            raise IndexError("no such stream in this step's events")
        group = &groups[j]
        key = group.slot if self._keys is None else self._keys[group.position]
        if self._made is not None and j in self._made:
            return key, self._made[j]
        events = tp_batch_events_list(self._c, &events_n, &arena)
        return key, _text_events(events + group.first, group.count, arena)

    def __iter__(self):
        cdef Py_ssize_t j
        for j in range(len(self)):
            yield self[j]

    def __repr__(self):
        return f"<BatchEvents: {len(self)} streams with events>"

    @property
    def positions(self):
        """Where the streams with events were in the step's input, as array('I')."""
        cdef size_t n, j
        cdef const tp_batch_group *groups = tp_batch_events_groups(self._c, &n)
        out = _array.array("I", bytes(4 * n))
        cdef uint32_t[::1] view = out
        for j in range(n):
            view[j] = groups[j].position
        return out
