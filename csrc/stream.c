/* stream.c: tp_stream, one parse: a VM feeding an event builder. */
#include "stream.h"

#include "alloc.h"
#include "emit.h"
#include "vm.h"

struct tp_stream {
    tp_emitter *emitter;
    tp_vm *vm;
    int finished;
    int special; /* special-token markers are on */
    tp_buf tokens; /* the bytes of the token ids being fed */
    void *allocation; /* what to free: where its aligned storage begins (NULL: placed) */
    tp_pool *pool;    /* where its block came from (NULL: the heap) */
    void *block;
    tp_allocator alloc;
};

/* The stream's structs, each in place where it fits (place may be NULL: the heap). */
static tp_status build(const tp_allocator *alloc, const tp_program *program, uint32_t address,
                       const tp_tools *tools, uint32_t flags, tp_place *place, tp_stream **out) {
    void *allocation;
    tp_stream *s = (tp_stream *)tp_place_take(alloc, place, sizeof *s, &allocation);
    tp_status st;
    if (!s) return TP_ERR_NOMEM;
    s->allocation = allocation;
    s->alloc = *alloc;
    s->tokens.alloc = &s->alloc;
    st = tp_emitter_new(alloc, tools, (flags & TP_STREAM_REPAIR) != 0, place, &s->emitter);
    if (st == TP_OK) st = tp_vm_new(alloc, program, address, s->emitter, place, &s->vm);
    if (st != TP_OK) {
        tp_stream_free(s);
        return st;
    }
    *out = s;
    return TP_OK;
}

tp_status tp_stream_new(const tp_program *program, const char *entry, size_t entry_len,
                        const tp_tools *tools, uint32_t flags, tp_stream **out) {
    return tp_stream_new_with(NULL, program, entry, entry_len, tools, flags, NULL, out);
}

tp_status tp_stream_new_in(const tp_program *program, const char *entry, size_t entry_len,
                           const tp_tools *tools, uint32_t flags, tp_pool *pool, tp_stream **out) {
    return tp_stream_new_with(NULL, program, entry, entry_len, tools, flags, pool, out);
}

tp_status tp_stream_new_with(const tp_allocator *alloc, const tp_program *program,
                             const char *entry, size_t entry_len, const tp_tools *tools,
                             uint32_t flags, tp_pool *pool, tp_stream **out) {
    tp_place place = {NULL, NULL, 0};
    tp_allocator a;
    int64_t address;
    tp_status st;
    void *block;
    if (!program || !entry || !out) return TP_ERR_ARG;
    *out = NULL;
    TP_TRY(tp_allocator_init(&a, alloc));
    address = tp_program_entry(program, entry, entry_len);
    if (address < 0) return TP_ERR_ARG;
    if (!pool) return build(&a, program, (uint32_t)address, tools, flags, NULL, out);
    if (!tp_pool_block_size(pool)) { /* the pool's first stream: measure what one needs */
        tp_stream *probe;
        TP_TRY(build(&a, program, (uint32_t)address, tools, flags, &place, &probe));
        tp_stream_free(probe);
        tp_pool_learn(pool, place.wanted);
        place.wanted = 0;
    }
    /* without a block (no memory for a slab, or a block too small for this program), the
     * structs that do not fit come from the heap */
    block = tp_pool_take(pool);
    if (block) {
        place.next = (uint8_t *)block;
        place.end = place.next + tp_pool_block_size(pool);
    }
    st = build(&a, program, (uint32_t)address, tools, flags, &place, out);
    if (st != TP_OK) {
        tp_pool_give_back(pool, block);
        return st;
    }
    (*out)->pool = pool;
    (*out)->block = block;
    return TP_OK;
}

void tp_stream_free(tp_stream *s) {
    tp_allocator a;
    tp_pool *pool;
    void *block;
    if (!s) return;
    pool = s->pool;
    block = s->block;
    a = s->alloc;
    tp_vm_free(s->vm);
    tp_emitter_free(s->emitter);
    tp_buf_free(&s->tokens);
    tp_free(&a, s->allocation);
    if (block) tp_pool_give_back(pool, block); /* the stream itself sits in it */
}

void tp_stream_reset(tp_stream *s) {
    tp_vm_reset(s->vm);
    tp_emitter_reset(s->emitter);
    s->finished = 0;
}

tp_status tp_stream_feed(tp_stream *s, const uint8_t *buf, size_t len) {
    tp_emitter_clear_events(s->emitter);
    if (s->finished) return TP_ERR_STATE;
    return tp_vm_feed(s->vm, buf, len);
}

tp_status tp_stream_finish(tp_stream *s, int cut_short) {
    tp_status st;
    tp_emitter_clear_events(s->emitter);
    if (s->finished) return TP_ERR_STATE;
    s->finished = 1;
    st = tp_vm_finish(s->vm, cut_short);
    if (st == TP_OK) st = tp_emitter_abort(s->emitter, 0);
    return st;
}

static tp_status feed_many_tokens(tp_stream *s, const tp_vocab *vocab, const uint32_t *ids,
                                  size_t n, uint32_t *bad_id);

tp_status tp_stream_feed_tokens(tp_stream *s, const tp_vocab *vocab, const uint32_t *ids, size_t n,
                                uint32_t *bad_id) {
    uint32_t len;
    const uint8_t *bytes;
    tp_emitter_clear_events(s->emitter);
    if (s->finished) return TP_ERR_STATE;
    if (n != 1) return feed_many_tokens(s, vocab, ids, n, bad_id);
    bytes = tp_vocab_token(vocab, ids[0], &len); /* one decode step: no copy */
    if (!bytes) {
        if (bad_id) *bad_id = ids[0];
        return TP_ERR_ARG;
    }
    if (s->special && tp_vocab_is_special(vocab, ids[0]))
        TP_TRY(tp_vm_mark_special(s->vm, tp_vm_fed(s->vm)));
    return tp_vm_feed(s->vm, bytes, len);
}

/* tp_stream_feed_tokens of other than one id: their bytes joined, fed as one piece. */
static TP_NOINLINE tp_status feed_many_tokens(tp_stream *s, const tp_vocab *vocab,
                                              const uint32_t *ids, size_t n, uint32_t *bad_id) {
    size_t k;
    uint32_t len;
    const uint8_t *bytes;
    for (k = 0; k < n; k++) { /* every id first: nothing is fed when one is bad */
        if (!tp_vocab_token(vocab, ids[k], &len)) {
            ids += k;
            goto bad;
        }
    }
    s->tokens.len = 0;
    for (k = 0; k < n; k++) {
        bytes = tp_vocab_token(vocab, ids[k], &len);
        if (s->special && tp_vocab_is_special(vocab, ids[k]))
            TP_TRY(tp_vm_mark_special(s->vm, tp_vm_fed(s->vm) + s->tokens.len));
        if (tp_buf_append(&s->tokens, bytes, len) != TP_OK) return TP_ERR_NOMEM;
    }
    return tp_vm_feed(s->vm, s->tokens.data, s->tokens.len);
bad:
    if (bad_id) *bad_id = ids[0];
    return TP_ERR_ARG;
}

tp_status tp_stream_set_special(tp_stream *s, const uint8_t *flags, uint32_t n_strings) {
    s->special = flags != NULL;
    return tp_vm_set_special(s->vm, flags, n_strings);
}

const tp_event *tp_stream_events(const tp_stream *s, size_t *count, const uint8_t **arena) {
    *arena = tp_emitter_arena(s->emitter);
    return tp_emitter_events(s->emitter, count);
}

int tp_stream_is_finished(const tp_stream *s) { return s->finished; }

void tp_limits_default(tp_limits *limits) {
    limits->max_depth = TP_DEFAULT_MAX_DEPTH;
    limits->max_argument_bytes = TP_DEFAULT_MAX_ARGUMENT_BYTES;
    limits->max_pending_bytes = TP_DEFAULT_MAX_PENDING_BYTES;
    limits->max_tool_calls = TP_DEFAULT_MAX_TOOL_CALLS;
    limits->max_stream_bytes = 0;
}

tp_status tp_stream_set_limits(tp_stream *s, const tp_limits *limits) {
    if (!limits) return TP_ERR_ARG;
    if (s->finished || tp_vm_fed(s->vm) > 0) return TP_ERR_STATE;
    if (limits->max_argument_bytes < 1 || limits->max_tool_calls < 1) return TP_ERR_ARG;
    TP_TRY(tp_vm_set_limits(s->vm, limits->max_depth, limits->max_pending_bytes,
                            limits->max_stream_bytes));
    return tp_emitter_set_limits(s->emitter, limits->max_depth, limits->max_argument_bytes,
                                 limits->max_tool_calls);
}

size_t tp_stream_held_bytes(const tp_stream *s) {
    return tp_vm_held_bytes(s->vm) + tp_emitter_held_bytes(s->emitter);
}

size_t tp_stream_arena_length(const tp_stream *s) { return tp_emitter_arena_length(s->emitter); }

void tp_stream_prefetch(const tp_stream *s) {
    const char *emitter = (const char *)s->emitter;
    TP_PREFETCH(s->vm); /* the line a feed at rest needs; tp_vm_prefetch asks for more */
    TP_PREFETCH(emitter); /* content */
    TP_PREFETCH(emitter + TP_CACHE_LINE); /* arguments */
}

void tp_stream_set_output(tp_stream *s, tp_event_out *out) {
    tp_emitter_set_output(s->emitter, out);
}

void tp_stream_prefetch_state(const tp_stream *s) {
    tp_vm_prefetch(s->vm);
    tp_emitter_prefetch(s->emitter);
}

tp_status tp_stream_content(tp_stream *s, const uint8_t **data, size_t *len) {
    const tp_buf *b = tp_emitter_content(s->emitter);
    tp_status st = tp_emitter_unstage(s->emitter);
    *data = b->data;
    *len = b->len;
    return st;
}

tp_status tp_stream_reasoning(tp_stream *s, const uint8_t **data, size_t *len, int *present) {
    const tp_buf *b = tp_emitter_reasoning(s->emitter);
    tp_status st = tp_emitter_unstage(s->emitter);
    *data = b->data;
    *len = b->len;
    *present = tp_emitter_any_reasoning(s->emitter);
    return st;
}
