/* batch.c: one decode step of many streams (see batch.h). */
#include "batch.h"

#include <string.h>

#include "alloc.h"
#include "buffer.h"
#include "emit.h"

/* How many streams ahead of the one being fed to fetch its parts (check_step has read
 * every stream's own struct already), and of the one being checked to fetch its struct
 * (checking one takes a few nanoseconds, a fetch from memory a hundred). */
enum { PREFETCH_STREAM = 8, PREFETCH_STATE = 4, PREFETCH_CHECK = 32 };

struct tp_batch {
    tp_vec streams; /* tp_stream * by slot; NULL where empty */
    tp_vec marks;   /* uint64_t by slot: the step that last named it (no slot twice a step) */
    uint32_t cap;   /* slots in both */
    uint64_t step;
    tp_allocator alloc;
};

struct tp_batch_events {
    tp_buf groups;   /* tp_batch_group records */
    tp_event_out out; /* every stream's events, written there by its emitter */
    tp_allocator alloc;
};

tp_status tp_batch_new(tp_batch **out) { return tp_batch_new_with(NULL, out); }

tp_status tp_batch_new_with(const tp_allocator *alloc, tp_batch **out) {
    tp_allocator a;
    tp_batch *b;
    if (!out) return TP_ERR_ARG;
    *out = NULL;
    TP_TRY(tp_allocator_init(&a, alloc));
    b = (tp_batch *)tp_alloc_zeroed(&a, sizeof *b);
    if (!b) return TP_ERR_NOMEM;
    b->alloc = a;
    b->streams.alloc = b->marks.alloc = &b->alloc;
    *out = b;
    return TP_OK;
}

void tp_batch_free(tp_batch *b) {
    tp_allocator a;
    if (!b) return;
    tp_vec_free(&b->streams);
    tp_vec_free(&b->marks);
    a = b->alloc;
    tp_free(&a, b);
}

/* Slot s's stream and mark. */
#define STREAM_AT(b, s) TP_VEC_AT((b)->streams, tp_stream *, s)
#define MARK_AT(b, s) TP_VEC_AT((b)->marks, uint64_t, s)

tp_status tp_batch_set(tp_batch *b, uint32_t slot, tp_stream *s) {
    if (slot >= b->cap) { /* the new slots empty, never named */
        size_t more = (size_t)slot + 1 - b->cap;
        if (slot > UINT32_MAX / 2) return TP_ERR_NOMEM; /* a table of 2**31 slots or more */
        TP_TRY(tp_vec_reserve(&b->streams, sizeof(tp_stream *), more));
        TP_TRY(tp_vec_reserve(&b->marks, sizeof(uint64_t), more));
        for (; b->cap <= slot; b->cap++) {
            STREAM_AT(b, b->cap) = NULL;
            MARK_AT(b, b->cap) = 0;
        }
        b->streams.len = b->marks.len = b->cap;
    }
    STREAM_AT(b, slot) = s;
    return TP_OK;
}

tp_status tp_batch_events_new(tp_batch_events **out) { return tp_batch_events_new_with(NULL, out); }

tp_status tp_batch_events_new_with(const tp_allocator *alloc, tp_batch_events **out) {
    tp_allocator a;
    tp_batch_events *e;
    if (!out) return TP_ERR_ARG;
    *out = NULL;
    TP_TRY(tp_allocator_init(&a, alloc));
    e = (tp_batch_events *)tp_alloc_zeroed(&a, sizeof *e);
    if (!e) return TP_ERR_NOMEM;
    e->alloc = a;
    e->groups.alloc = e->out.events.alloc = e->out.arena.alloc = &e->alloc;
    *out = e;
    return TP_OK;
}

void tp_batch_events_free(tp_batch_events *e) {
    tp_allocator a;
    if (!e) return;
    tp_buf_free(&e->groups);
    tp_buf_free(&e->out.events);
    tp_buf_free(&e->out.arena);
    a = e->alloc;
    tp_free(&a, e);
}

/* Every slot, id and stream of the step is usable, and no slot comes twice. */
static tp_status check_step(tp_batch *b, const tp_vocab *vocab, const uint32_t *slots,
                            const uint32_t *ids, size_t n, tp_batch_fault *fault, size_t *failed) {
    uint32_t size = tp_vocab_size(vocab);
    size_t k;
    b->step++;
    for (k = 0; k < n; k++) {
        uint32_t slot = slots[k];
        tp_batch_fault why = TP_BATCH_NO_FAULT;
        if (slot >= b->cap || !STREAM_AT(b, slot))
            why = TP_BATCH_NO_STREAM;
        else if (MARK_AT(b, slot) == b->step)
            why = TP_BATCH_TWICE;
        else if (ids[k] >= size)
            why = TP_BATCH_BAD_TOKEN;
        else if (tp_stream_is_finished(STREAM_AT(b, slot)))
            why = TP_BATCH_FINISHED;
        /* the streams are read again in the feed: fetch them while checking */
        if (k + PREFETCH_CHECK < n && slots[k + PREFETCH_CHECK] < b->cap)
            TP_PREFETCH(STREAM_AT(b, slots[k + PREFETCH_CHECK]));
        if (why != TP_BATCH_NO_FAULT) {
            *fault = why;
            *failed = k;
            return TP_ERR_ARG;
        }
        MARK_AT(b, slot) = b->step;
    }
    return TP_OK;
}

/* Records the events one stream's feed added (from the first) as its group. */
static tp_status group(tp_batch_events *out, uint32_t position, uint32_t slot, size_t first) {
    const tp_event *events = (const tp_event *)(const void *)out->out.events.data;
    size_t end = out->out.events.len / sizeof(tp_event), j;
    tp_batch_group *g;
    if (first == end) return TP_OK;
    if (end > UINT32_MAX || tp_buf_reserve(&out->groups, sizeof *g) != TP_OK) return TP_ERR_NOMEM;
    g = (tp_batch_group *)(void *)(out->groups.data + out->groups.len);
    out->groups.len += sizeof *g;
    g->position = position;
    g->slot = slot;
    g->first = (uint32_t)first;
    g->count = (uint32_t)(end - first);
    g->stateful = 0;
    for (j = first; j < end; j++) { /* most often one text piece */
        uint32_t kind = events[j].kind;
        if (kind != TP_EV_CONTENT && kind != TP_EV_REASONING && kind != TP_EV_ARGS) {
            g->stateful = 1;
            break;
        }
    }
    return TP_OK;
}

tp_status tp_batch_feed(tp_batch *b, const tp_vocab *vocab, const uint32_t *slots,
                        const uint32_t *ids, size_t n, tp_batch_events *out, tp_batch_fault *fault,
                        size_t *failed) {
    size_t k;
    *fault = TP_BATCH_NO_FAULT;
    *failed = 0;
    out->groups.len = out->out.events.len = out->out.arena.len = 0;
    if (n > UINT32_MAX) return TP_ERR_ARG;
    if (check_step(b, vocab, slots, ids, n, fault, failed) != TP_OK) return TP_ERR_ARG;
    for (k = 0; k < n; k++) {
        tp_stream *s = STREAM_AT(b, slots[k]);
        size_t first = out->out.events.len / sizeof(tp_event);
        tp_status st;
        /* many streams do not fit the cache: fetch the next ones' state ahead */
        if (k + PREFETCH_STATE < n) {
            tp_stream_prefetch_state(STREAM_AT(b, slots[k + PREFETCH_STATE]));
            tp_vocab_prefetch_bytes(vocab, ids[k + PREFETCH_STATE]);
        }
        if (k + PREFETCH_STREAM < n) {
            tp_stream_prefetch(STREAM_AT(b, slots[k + PREFETCH_STREAM]));
            tp_vocab_prefetch_entry(vocab, ids[k + PREFETCH_STREAM]);
        }
        tp_stream_set_output(s, &out->out);
        st = tp_stream_feed_tokens(s, vocab, &ids[k], 1, NULL);
        tp_stream_set_output(s, NULL);
        if (st == TP_OK) st = group(out, (uint32_t)k, slots[k], first);
        if (st != TP_OK) {
            *failed = k;
            return st;
        }
    }
    return TP_OK;
}

const tp_batch_group *tp_batch_events_groups(const tp_batch_events *e, size_t *count) {
    *count = e->groups.len / sizeof(tp_batch_group);
    return (const tp_batch_group *)(const void *)e->groups.data;
}

const tp_event *tp_batch_events_list(const tp_batch_events *e, size_t *count,
                                     const uint8_t **arena) {
    *count = e->out.events.len / sizeof(tp_event);
    *arena = e->out.arena.data;
    return (const tp_event *)(const void *)e->out.events.data;
}

size_t tp_batch_events_arena_length(const tp_batch_events *e) { return e->out.arena.len; }
