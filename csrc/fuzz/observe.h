/* observe.h: reads every event of one stream, checks the invariants each event and the
 * sequence of them must keep (abort() on a broken one), and keeps a summary of the
 * stream's output that two runs of the same input must share whatever their chunking:
 * the events with adjacent deltas of the same kind and call merged. */
#ifndef TOOLPARSE_FUZZ_OBSERVE_H
#define TOOLPARSE_FUZZ_OBSERVE_H

#include "toolparse.h"

/* Aborts with a message: an invariant of the core does not hold. */
#define FUZZ_CHECK(cond, what)                                \
    do {                                                      \
        if (!(cond)) fuzz_broken(__FILE__, __LINE__, (what)); \
    } while (0)

void fuzz_broken(const char *file, int line, const char *what);

typedef struct fuzz_bytes {
    uint8_t *data;
    size_t len, cap;
} fuzz_bytes;

void fuzz_bytes_append(fuzz_bytes *b, const uint8_t *data, size_t n);
void fuzz_bytes_free(fuzz_bytes *b);

/* One event of the summary; a delta holds the merged text of adjacent deltas. */
typedef struct fuzz_record {
    uint32_t kind, code, msg;
    int32_t index;
    uint64_t offset;
    fuzz_bytes text, aux;
    fuzz_bytes shown; /* the text as Python shows it: each delta decoded on its own, with
                       * an ill-formed part as U+FFFD (so a character split across deltas
                       * shows differently from a whole one) */
} fuzz_record;

typedef struct fuzz_observer {
    int repair;       /* the stream runs with TP_STREAM_REPAIR */
    uint64_t fed;     /* bytes fed since the last reset */
    fuzz_record *records;
    size_t n_records, cap_records;
    fuzz_bytes content, reasoning; /* every delta's bytes */
    size_t n_events;
    /* the calls */
    int32_t started;   /* calls started (their indices are 0 .. started - 1) */
    int call_open;     /* the newest call has not ended */
    int call_dead;     /* it had an error: nothing more of it may come */
    fuzz_bytes call_name, call_args;
    int limited; /* a limit error came: nothing may follow it */
} fuzz_observer;

void fuzz_observer_init(fuzz_observer *o, int repair);
void fuzz_observer_free(fuzz_observer *o);
/* The stream was reset: a new response starts. */
void fuzz_observer_reset(fuzz_observer *o);

/* Checks and records events (from tp_stream_events or a batch step) whose offsets index
 * arena[0 .. arena_len). */
void fuzz_observe(fuzz_observer *o, const tp_event *events, size_t count, const uint8_t *arena,
                  size_t arena_len);
/* Reads the stream's events after a feed or finish (and counts `fed` new input bytes). */
void fuzz_observe_stream(fuzz_observer *o, const tp_stream *s, uint64_t fed);
/* The end of the run: what the stream holds as its message must be what its events said. */
void fuzz_observe_message(const fuzz_observer *o, tp_stream *s);

/* Aborts unless the two runs gave the same merged events and message. */
void fuzz_observers_agree(const fuzz_observer *a, const fuzz_observer *b);

#endif
