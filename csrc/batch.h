/* batch.h: one decode step of many streams in one call, and its events gathered in one
 * place (a serving loop feeds every running request one token id per step).
 *
 * A tp_batch is a table of borrowed streams by slot.  tp_batch_feed feeds the streams of
 * the given slots one token id each, and each stream writes the events it makes straight
 * into a tp_batch_events: its own event records and text arena, grouped by stream, so
 * the events stay readable after the streams are fed again.  The caller drives a batch from
 * one thread at a time; different batches and streams are independent. */
#ifndef TOOLPARSE_BATCH_H
#define TOOLPARSE_BATCH_H

#include "common.h"
#include "stream.h"
#include "vocab.h"

typedef struct tp_batch tp_batch;
typedef struct tp_batch_events tp_batch_events;

/* The streams of one step that produced events: position k in the step's input, its
 * slot, and its events [first, first + count) of tp_batch_events_list.  stateful says
 * one of them is not a text piece (a call's start or end, an error, a call to repair). */
typedef struct tp_batch_group {
    uint32_t position, slot, first, count, stateful;
} tp_batch_group;

/* Why tp_batch_feed refused a step (nothing was fed then). */
typedef enum tp_batch_fault {
    TP_BATCH_NO_FAULT = 0,
    TP_BATCH_NO_STREAM = 1, /* the slot holds no stream */
    TP_BATCH_TWICE = 2,     /* the slot is given twice in the step */
    TP_BATCH_BAD_TOKEN = 3, /* the token id is not in the vocab */
    TP_BATCH_FINISHED = 4   /* the stream was finished */
} tp_batch_fault;

tp_status tp_batch_new(tp_batch **out);
/* tp_batch_new with an allocator (common.h; NULL: the default). */
tp_status tp_batch_new_with(const tp_allocator *alloc, tp_batch **out);
void tp_batch_free(tp_batch *b); /* NULL-safe; the streams are not freed */
/* Puts a stream in a slot (NULL empties it); the table grows to hold the slot. */
tp_status tp_batch_set(tp_batch *b, uint32_t slot, tp_stream *s);

tp_status tp_batch_events_new(tp_batch_events **out);
/* tp_batch_events_new with an allocator (common.h; NULL: the default). */
tp_status tp_batch_events_new_with(const tp_allocator *alloc, tp_batch_events **out);
void tp_batch_events_free(tp_batch_events *e); /* NULL-safe */

/* Feeds the stream in slot slots[k] the token ids[k], for k < n, with events gathered
 * into out (emptied first).  Every slot, id and stream is checked before anything is
 * fed: a bad one is TP_ERR_ARG with *fault and *failed (its k) set, and no stream moved.
 * TP_ERR_NOMEM while feeding leaves the stream that failed unusable (*failed) and the
 * events of the streams before it in out. */
tp_status tp_batch_feed(tp_batch *b, const tp_vocab *vocab, const uint32_t *slots,
                        const uint32_t *ids, size_t n, tp_batch_events *out, tp_batch_fault *fault,
                        size_t *failed);

/* The groups, one per stream with events, in input order (borrowed from e). */
const tp_batch_group *tp_batch_events_groups(const tp_batch_events *e, size_t *count);
/* All events of the step; their offsets point into *arena (borrowed from e). */
const tp_event *tp_batch_events_list(const tp_batch_events *e, size_t *count,
                                     const uint8_t **arena);
/* How many bytes of that arena the step's events index. */
size_t tp_batch_events_arena_length(const tp_batch_events *e);

#endif
