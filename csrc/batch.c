/* batch.c: one decode step of many streams (see batch.h). */
#include "batch.h"

#include <stdlib.h>
#include <string.h>

#include "buffer.h"

/* How many streams ahead of the one being fed to fetch its parts (check_step has read
 * every stream's own struct already). */
enum { PREFETCH_STREAM = 8, PREFETCH_STATE = 4 };

struct tp_batch {
    tp_stream **streams; /* by slot; NULL where empty */
    uint64_t *marks;     /* by slot: the step that last named it (no slot twice a step) */
    uint32_t cap;
    uint64_t step;
};

struct tp_batch_events {
    tp_buf groups; /* tp_batch_group records */
    tp_buf events; /* tp_event records, offsets into arena */
    tp_buf arena;
};

tp_status tp_batch_new(tp_batch **out) {
    if (!out) return TP_ERR_ARG;
    *out = (tp_batch *)calloc(1, sizeof **out);
    return *out ? TP_OK : TP_ERR_NOMEM;
}

void tp_batch_free(tp_batch *b) {
    if (!b) return;
    free(b->streams);
    free(b->marks);
    free(b);
}

tp_status tp_batch_set(tp_batch *b, uint32_t slot, tp_stream *s) {
    if (slot >= b->cap) {
        uint32_t cap = b->cap ? b->cap : 16, k;
        tp_stream **streams;
        uint64_t *marks;
        while (cap <= slot) {
            if (cap > UINT32_MAX / 2) return TP_ERR_NOMEM;
            cap *= 2;
        }
        streams = (tp_stream **)realloc(b->streams, cap * sizeof *streams);
        if (!streams) return TP_ERR_NOMEM;
        b->streams = streams;
        marks = (uint64_t *)realloc(b->marks, cap * sizeof *marks);
        if (!marks) return TP_ERR_NOMEM;
        b->marks = marks;
        for (k = b->cap; k < cap; k++) {
            streams[k] = NULL;
            marks[k] = 0;
        }
        b->cap = cap;
    }
    b->streams[slot] = s;
    return TP_OK;
}

tp_status tp_batch_events_new(tp_batch_events **out) {
    if (!out) return TP_ERR_ARG;
    *out = (tp_batch_events *)calloc(1, sizeof **out);
    return *out ? TP_OK : TP_ERR_NOMEM;
}

void tp_batch_events_free(tp_batch_events *e) {
    if (!e) return;
    tp_buf_free(&e->groups);
    tp_buf_free(&e->events);
    tp_buf_free(&e->arena);
    free(e);
}

/* Every slot, id and stream of the step is usable, and no slot comes twice. */
static tp_status check_step(tp_batch *b, const tp_vocab *vocab, const uint32_t *slots,
                            const uint32_t *ids, size_t n, tp_batch_fault *fault,
                            size_t *failed) {
    uint32_t size = tp_vocab_size(vocab);
    size_t k;
    b->step++;
    for (k = 0; k < n; k++) {
        uint32_t slot = slots[k];
        tp_batch_fault why = TP_BATCH_NO_FAULT;
        if (slot >= b->cap || !b->streams[slot]) why = TP_BATCH_NO_STREAM;
        else if (b->marks[slot] == b->step) why = TP_BATCH_TWICE;
        else if (ids[k] >= size) why = TP_BATCH_BAD_TOKEN;
        else if (tp_stream_is_finished(b->streams[slot])) why = TP_BATCH_FINISHED;
        if (why != TP_BATCH_NO_FAULT) {
            *fault = why;
            *failed = k;
            return TP_ERR_ARG;
        }
        b->marks[slot] = b->step;
    }
    return TP_OK;
}

/* Copies one stream's events and their text into out as a group. */
static tp_status gather(tp_batch_events *out, uint32_t position, uint32_t slot,
                        const tp_stream *s) {
    size_t count, j, first, base;
    const uint8_t *arena;
    const tp_event *events = tp_stream_events(s, &count, &arena);
    size_t arena_len = tp_stream_arena_length(s);
    tp_batch_group group;
    tp_event *copied;
    if (!count) return TP_OK;
    first = out->events.len / sizeof(tp_event);
    base = out->arena.len;
    if (base + arena_len > UINT32_MAX || first + count > UINT32_MAX) return TP_ERR_NOMEM;
    if (tp_buf_append(&out->events, events, count * sizeof(tp_event)) != TP_OK ||
        tp_buf_append(&out->arena, arena, arena_len) != TP_OK)
        return TP_ERR_NOMEM;
    group.position = position;
    group.slot = slot;
    group.first = (uint32_t)first;
    group.count = (uint32_t)count;
    group.stateful = 0;
    copied = (tp_event *)(void *)out->events.data + first;
    for (j = 0; j < count; j++) { /* offsets into out's arena */
        copied[j].text_off += (uint32_t)base;
        copied[j].aux_off += (uint32_t)base;
        if (copied[j].kind != TP_EV_CONTENT && copied[j].kind != TP_EV_REASONING &&
            copied[j].kind != TP_EV_ARGS)
            group.stateful = 1;
    }
    return tp_buf_append(&out->groups, &group, sizeof group);
}

tp_status tp_batch_feed(tp_batch *b, const tp_vocab *vocab, const uint32_t *slots,
                        const uint32_t *ids, size_t n, tp_batch_events *out,
                        tp_batch_fault *fault, size_t *failed) {
    size_t k;
    *fault = TP_BATCH_NO_FAULT;
    *failed = 0;
    out->groups.len = out->events.len = out->arena.len = 0;
    if (n > UINT32_MAX) return TP_ERR_ARG;
    if (check_step(b, vocab, slots, ids, n, fault, failed) != TP_OK) return TP_ERR_ARG;
    for (k = 0; k < n; k++) {
        tp_stream *s = b->streams[slots[k]];
        tp_status st;
        /* many streams do not fit the cache: fetch the next ones' state ahead */
        if (k + PREFETCH_STATE < n) tp_stream_prefetch_state(b->streams[slots[k + PREFETCH_STATE]]);
        if (k + PREFETCH_STREAM < n) tp_stream_prefetch(b->streams[slots[k + PREFETCH_STREAM]]);
        st = tp_stream_feed_tokens(s, vocab, &ids[k], 1, NULL);
        if (st == TP_OK) st = gather(out, (uint32_t)k, slots[k], s);
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
    *count = e->events.len / sizeof(tp_event);
    *arena = e->arena.data;
    return (const tp_event *)(const void *)e->events.data;
}
