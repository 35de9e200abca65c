# Declarations only, one to one with csrc/toolparse.h (common.h, trie.h, json.h).
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t


cdef extern from "toolparse.h" nogil:
    ctypedef enum tp_status:
        TP_OK
        TP_ERR_NOMEM
        TP_ERR_ARG
        TP_ERR_STATE
        TP_ERR_NOSPACE

    # trie.h
    int TP_TRIE_MAX_MARKERS
    int TP_TRIE_MAX_MARKER_LEN

    ctypedef struct tp_trie:
        pass
    ctypedef struct tp_matcher:
        pass
    ctypedef struct tp_match:
        uint32_t id
        uint64_t start
        uint64_t end

    tp_status tp_trie_new(const uint8_t *const *markers, const size_t *lens, size_t n,
                          tp_trie **out, size_t *bad_index)
    void tp_trie_free(tp_trie *trie)
    size_t tp_trie_count(const tp_trie *trie)
    size_t tp_trie_max_length(const tp_trie *trie)
    const uint8_t *tp_trie_marker(const tp_trie *trie, size_t id, size_t *len)

    tp_status tp_matcher_new(const tp_trie *trie, tp_matcher **out)
    void tp_matcher_free(tp_matcher *m)
    void tp_matcher_reset(tp_matcher *m)
    size_t tp_matcher_feed(tp_matcher *m, const uint8_t *buf, size_t len,
                           tp_match *out, size_t cap, size_t *n_out)
    tp_status tp_matcher_finish(tp_matcher *m, tp_match *out, size_t cap, size_t *n_out)
    int tp_matcher_finished(const tp_matcher *m)
    uint64_t tp_matcher_position(const tp_matcher *m)
    size_t tp_matcher_holdback(const tp_matcher *m)

    # json.h
    int TP_JSON_DEFAULT_MAX_DEPTH
    int TP_JSON_MAX_DEPTH_CEILING
    int TP_JSON_RELAXATION_COUNT

    ctypedef struct tp_json:
        pass
    ctypedef enum tp_json_dialect:
        TP_JSON_STRICT
        TP_JSON_LENIENT
        TP_JSON_PYTHON
    ctypedef enum tp_json_verdict:
        TP_JSON_NEED_MORE
        TP_JSON_COMPLETE
        TP_JSON_ERROR
        TP_JSON_INCOMPLETE
    ctypedef enum tp_json_reason:
        TP_JSON_OK

    tp_status tp_json_new(tp_json_dialect dialect, uint32_t max_depth, tp_json **out)
    void tp_json_free(tp_json *s)
    void tp_json_reset(tp_json *s)
    tp_json_verdict tp_json_feed(tp_json *s, const uint8_t *buf, size_t len, size_t *consumed)
    tp_json_verdict tp_json_finish(tp_json *s)
    tp_json_verdict tp_json_verdict_of(const tp_json *s)
    int tp_json_finished(const tp_json *s)
    uint64_t tp_json_position(const tp_json *s)
    int64_t tp_json_end(const tp_json *s)
    uint32_t tp_json_depth(const tp_json *s)
    uint32_t tp_json_relaxations(const tp_json *s)
    tp_json_reason tp_json_error(const tp_json *s, uint64_t *offset)
    const char *tp_json_reason_name(tp_json_reason reason)
    const char *tp_json_relaxation_name(unsigned bit_index)
    tp_status tp_json_closing(const tp_json *s, char *buf, size_t cap, size_t *len)

    # program.h
    ctypedef struct tp_program:
        pass
    tp_status tp_program_new(const uint8_t *blob, size_t len, tp_program **out,
                             const char **where)
    void tp_program_free(tp_program *p)
    int64_t tp_program_entry(const tp_program *p, const char *name, size_t name_len)

    # stream.h
    ctypedef struct tp_event:
        uint32_t kind
        int32_t index
        uint32_t text_off, text_len
        uint32_t aux_off, aux_len
        uint32_t code, msg
        uint64_t offset
    ctypedef enum tp_event_kind:
        TP_EV_REASONING
        TP_EV_CONTENT
        TP_EV_CALL_START
        TP_EV_ARGS
        TP_EV_CALL_END
        TP_EV_ERROR
        TP_EV_CALL_REPAIR
    ctypedef enum tp_error_message:
        TP_MSG_ENDED_INSIDE_CALL
        TP_MSG_NOT_AN_OBJECT
        TP_MSG_INVALID_ARGUMENTS
    ctypedef struct tp_tools:
        pass
    tp_status tp_tools_new(const uint8_t *blob, size_t len, tp_tools **out)
    void tp_tools_free(tp_tools *t)
    ctypedef struct tp_vocab:
        pass
    tp_status tp_vocab_new(const uint8_t *bytes, size_t n_bytes, const uint32_t *offsets,
                           const uint8_t *special, uint32_t n_tokens, tp_vocab **out)
    void tp_vocab_free(tp_vocab *v)
    uint32_t tp_vocab_size(const tp_vocab *v)
    ctypedef struct tp_stream:
        pass
    tp_status tp_stream_new(const tp_program *program, const char *entry, size_t entry_len,
                            const tp_tools *tools, uint32_t flags, tp_stream **out)
    void tp_stream_free(tp_stream *s)
    ctypedef struct tp_pool:
        pass
    tp_status tp_pool_new(tp_pool **out)
    void tp_pool_free(tp_pool *pool)
    size_t tp_pool_block_size(const tp_pool *pool)
    size_t tp_pool_live(const tp_pool *pool)
    tp_status tp_stream_new_in(const tp_program *program, const char *entry, size_t entry_len,
                               const tp_tools *tools, uint32_t flags, tp_pool *pool,
                               tp_stream **out)
    void tp_stream_reset(tp_stream *s)
    tp_status tp_stream_feed(tp_stream *s, const uint8_t *buf, size_t len)
    tp_status tp_stream_feed_tokens(tp_stream *s, const tp_vocab *vocab, const uint32_t *ids,
                                    size_t n, uint32_t *bad_id)
    tp_status tp_stream_finish(tp_stream *s, int cut_short)
    tp_status tp_stream_set_special(tp_stream *s, const uint8_t *flags, uint32_t n_strings)
    const tp_event *tp_stream_events(const tp_stream *s, size_t *count, const uint8_t **arena)
    tp_status tp_stream_content(tp_stream *s, const uint8_t **data, size_t *len)
    tp_status tp_stream_reasoning(tp_stream *s, const uint8_t **data, size_t *len,
                                  int *present)
    int tp_stream_is_finished(const tp_stream *s)
    ctypedef struct tp_limits:
        uint32_t max_depth
        uint64_t max_argument_bytes
        uint64_t max_pending_bytes
        uint64_t max_tool_calls
        uint64_t max_stream_bytes
    void tp_limits_default(tp_limits *limits)
    tp_status tp_stream_set_limits(tp_stream *s, const tp_limits *limits)
    size_t tp_stream_held_bytes(const tp_stream *s)

    # batch.h
    ctypedef struct tp_batch:
        pass
    ctypedef struct tp_batch_events:
        pass
    ctypedef struct tp_batch_group:
        uint32_t position
        uint32_t slot
        uint32_t first
        uint32_t count
        uint32_t stateful
    ctypedef enum tp_batch_fault:
        TP_BATCH_NO_FAULT
        TP_BATCH_NO_STREAM
        TP_BATCH_TWICE
        TP_BATCH_BAD_TOKEN
        TP_BATCH_FINISHED
    tp_status tp_batch_new(tp_batch **out)
    void tp_batch_free(tp_batch *b)
    tp_status tp_batch_set(tp_batch *b, uint32_t slot, tp_stream *s)
    tp_status tp_batch_events_new(tp_batch_events **out)
    void tp_batch_events_free(tp_batch_events *e)
    tp_status tp_batch_feed(tp_batch *b, const tp_vocab *vocab, const uint32_t *slots,
                            const uint32_t *ids, size_t n, tp_batch_events *out,
                            tp_batch_fault *fault, size_t *failed)
    const tp_batch_group *tp_batch_events_groups(const tp_batch_events *e, size_t *count)
    const tp_event *tp_batch_events_list(const tp_batch_events *e, size_t *count,
                                         const uint8_t **arena)
