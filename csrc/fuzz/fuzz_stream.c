/* fuzz_stream.c: libFuzzer target over the C core's public stream API (no Python).
 *
 * LLVMFuzzerInitialize loads the formats csrc/fuzz/dump_programs.py wrote into the
 * directory $TOOLPARSE_FUZZ_PROGRAMS.  Each input is a 4-byte header and the model output:
 *
 *   byte 0  the format (index into the manifest, modulo its length)
 *   byte 1  bit 0: the format's other entry, when it has two (the manifest lists the
 *                  default first: this flips reasoning_in_prompt)
 *           bit 1: the format's tool table (else none: every name is accepted)
 *           bit 2: repair mode (the repair program and TP_STREAM_REPAIR), where it exists
 *           bit 3: the other repair setting for the flag than for the program (the C API
 *                  allows any pairing)
 *           bit 4: feed token ids (the bytes read as ids, below) instead of bytes
 *           bit 5: with token ids, the markers count only as special tokens
 *           bit 6: finish cut short (finish reason "length")
 *           bit 7: feed token ids through tp_batch_feed, several streams at once
 *   byte 2  the chunking: bits 0-1 the mode (0 whole, 1 one unit a time, 2 fixed pieces
 *           of bits 2-7 + 1 units, 3 random pieces seeded by bits 2-7, some empty)
 *   byte 3  bit 0: feed a prefix first, then tp_stream_reset, then the run
 *           bits 1-2: with bit 7 of byte 1, streams in the batch - 2
 *           bit 3: with bit 7 of byte 1, try a bad step (must be refused, nothing fed)
 *           bits 4-5: with bit 7 of byte 1, the steps between the streams' starts
 *           bits 6-7: the limits: 0 the defaults, 1 tight ones (depth 3, 24 argument
 *                  bytes, 32 pending bytes, 2 calls), 2 the defaults and all output
 *                  limited to half the input (+ 1), 3 both
 *
 * Token ids: each byte is its own token (ids 0-255), except that 0xFF escapes the next
 * byte k: k == 0xFF is the byte 0xFF, any other k the format's marker k mod n_markers as
 * a special token (256 + ...).  Formats without markers read 0xFF as a byte.
 *
 * Every event is read and checked (observe.c), and each run is compared with a second
 * run of the same input fed whole: any difference aborts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "observe.h"
#include "programs.h"
#include "toolparse.h"

#define HEADER 4
#define MAX_BATCH 5

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static fuzz_formats formats;

static void release_formats(void) { fuzz_formats_free(&formats); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    const char *dir = getenv("TOOLPARSE_FUZZ_PROGRAMS");
    char why[512];
    (void)argc;
    (void)argv;
    if (!dir || !*dir) {
        fprintf(stderr, "fuzz_stream: set TOOLPARSE_FUZZ_PROGRAMS to the directory "
                        "csrc/fuzz/dump_programs.py wrote\n");
        exit(2);
    }
    if (fuzz_formats_load(dir, &formats, why, sizeof why)) {
        fprintf(stderr, "fuzz_stream: cannot load the formats: %s\n", why);
        exit(2);
    }
    atexit(release_formats);
    return 0;
}

/* -- the input ---------------------------------------------------------------------------- */

typedef struct setup {
    const fuzz_format *format;
    const fuzz_program *program;
    const char *entry;
    const tp_tools *tools;
    uint32_t flags;
    int tokens, special, cut_short, batch, reset_prefix, bad_step;
    size_t n_streams, stagger;
    tp_limits limits;
    uint8_t chunk_mode, chunk_param;
} setup;

static setup read_setup(const uint8_t *h, size_t body_len) {
    setup s;
    const fuzz_format *f = &formats.items[h[0] % formats.len];
    int repair = (h[1] & 4) && f->repair.program;
    memset(&s, 0, sizeof s);
    s.format = f;
    s.program = repair ? &f->repair : &f->normal;
    s.entry = f->entries[(h[1] & 1) && f->n_entries > 1 ? 1 : 0];
    s.tools = (h[1] & 2) ? f->tools : NULL;
    s.flags = (repair != ((h[1] & 8) != 0)) ? TP_STREAM_REPAIR : 0;
    s.batch = (h[1] & 0x80) != 0;
    s.tokens = (h[1] & 0x10) || s.batch;
    s.special = s.tokens && (h[1] & 0x20);
    s.cut_short = (h[1] & 0x40) != 0;
    s.chunk_mode = h[2] & 3;
    s.chunk_param = h[2] >> 2;
    s.reset_prefix = h[3] & 1;
    s.n_streams = 2 + ((h[3] >> 1) & 3);
    s.bad_step = (h[3] & 8) != 0;
    s.stagger = (h[3] >> 4) & 3;
    tp_limits_default(&s.limits);
    if (h[3] & 0x40) {
        s.limits.max_depth = 3;
        s.limits.max_argument_bytes = 24;
        s.limits.max_pending_bytes = 32;
        s.limits.max_tool_calls = 2;
    }
    if (h[3] & 0x80) s.limits.max_stream_bytes = body_len / 2 + 1;
    return s;
}

/* The token ids of the input (see the top of the file); *n gets their count. */
static uint32_t *read_ids(const fuzz_format *f, const uint8_t *data, size_t size, size_t *n) {
    uint32_t *ids = (uint32_t *)malloc((size ? size : 1) * sizeof *ids);
    size_t k = 0, count = 0;
    FUZZ_CHECK(ids != NULL, "harness out of memory");
    while (k < size) {
        uint8_t b = data[k++];
        if (b == 0xFF && k < size && f->n_markers) {
            uint8_t next = data[k++];
            ids[count++] = next == 0xFF ? 0xFFu : 256u + next % f->n_markers;
        } else {
            ids[count++] = b;
        }
    }
    *n = count;
    return ids;
}

/* -- chunkings ---------------------------------------------------------------------------- */

typedef struct chunker {
    uint8_t mode, param;
    uint32_t state;
} chunker;

static chunker chunker_new(uint8_t mode, uint8_t param) {
    chunker c;
    c.mode = mode;
    c.param = param;
    c.state = 0x9E3779B9u ^ param;
    return c;
}

/* The next piece's length (at most left; 0 only for an empty piece in random mode). */
static size_t next_piece(chunker *c, size_t left) {
    size_t n;
    switch (c->mode) {
    case 0:
        return left;
    case 1:
        return 1;
    case 2:
        n = (size_t)c->param + 1;
        break;
    default:
        c->state ^= c->state << 13; /* xorshift32 */
        c->state ^= c->state >> 17;
        c->state ^= c->state << 5;
        n = c->state % 17; /* 0 to 16: an empty feed now and then */
        break;
    }
    return n < left ? n : left;
}

/* -- one stream --------------------------------------------------------------------------- */

/* pool may be NULL (the heap), as for a stream alone; a batch's streams share one. */
static tp_stream *open_stream(const setup *s, tp_pool *pool) {
    tp_stream *stream = NULL;
    tp_status st = tp_stream_new_in(s->program->program, s->entry, strlen(s->entry), s->tools,
                                    s->flags, pool, &stream);
    FUZZ_CHECK(st == TP_OK && stream != NULL, "tp_stream_new failed on a valid program");
    FUZZ_CHECK(tp_stream_set_limits(stream, &s->limits) == TP_OK, "tp_stream_set_limits failed");
    if (s->special) {
        st = tp_stream_set_special(stream, s->program->special_flags, s->program->n_strings);
        FUZZ_CHECK(st == TP_OK, "tp_stream_set_special failed");
    }
    return stream;
}

/* Feeds units [at, at + n) of the input: bytes, or token ids. */
static void feed(tp_stream *stream, fuzz_observer *o, const setup *s, const uint8_t *bytes,
                 const uint32_t *ids, size_t at, size_t n) {
    static const uint8_t no_byte = 0;
    static const uint32_t no_id = 0;
    uint64_t fed = n;
    tp_status st;
    if (s->tokens) {
        uint32_t bad = 0;
        size_t k;
        st = tp_stream_feed_tokens(stream, s->format->vocab, n ? ids + at : &no_id, n, &bad);
        for (fed = 0, k = 0; k < n; k++) {
            uint32_t len = 0;
            FUZZ_CHECK(tp_vocab_token(s->format->vocab, ids[at + k], &len) != NULL, "bad id");
            fed += len;
        }
    } else {
        st = tp_stream_feed(stream, n ? bytes + at : &no_byte, n);
    }
    FUZZ_CHECK(st == TP_OK, "a feed failed");
    fuzz_observe_stream(o, stream, fed);
}

/* After finish: nothing more may be fed, and nothing more comes. */
static void check_finished(tp_stream *stream) {
    static const uint8_t byte = 'x';
    size_t count = 1;
    const uint8_t *arena;
    FUZZ_CHECK(tp_stream_is_finished(stream), "a finished stream says it is not");
    FUZZ_CHECK(tp_stream_feed(stream, &byte, 1) == TP_ERR_STATE, "a feed after finish");
    tp_stream_events(stream, &count, &arena);
    FUZZ_CHECK(count == 0, "events from a feed after finish");
    FUZZ_CHECK(tp_stream_finish(stream, 0) == TP_ERR_STATE, "a second finish");
    tp_stream_events(stream, &count, &arena);
    FUZZ_CHECK(count == 0, "events from a second finish");
}

static void finish(tp_stream *stream, fuzz_observer *o, const setup *s) {
    FUZZ_CHECK(tp_stream_finish(stream, s->cut_short) == TP_OK, "finish failed");
    fuzz_observe_stream(o, stream, 0);
    fuzz_observe_message(o, stream);
}

/* The whole input through one stream in the setup's chunking (whole when whole is set). */
static void run_stream(const setup *s, const uint8_t *bytes, const uint32_t *ids, size_t n,
                       int whole, fuzz_observer *o) {
    tp_stream *stream = open_stream(s, NULL);
    chunker c = chunker_new(whole ? 0 : s->chunk_mode, s->chunk_param);
    size_t at = 0;
    if (!whole && s->reset_prefix) {
        /* a response cut off early (finished or not), then the stream is reused */
        size_t prefix = n < 7 ? n : 7;
        feed(stream, o, s, bytes, ids, 0, prefix);
        if (s->cut_short) finish(stream, o, s);
        tp_stream_reset(stream);
        fuzz_observer_reset(o);
    }
    if (n == 0) feed(stream, o, s, bytes, ids, 0, 0);
    while (at < n) {
        size_t piece = next_piece(&c, n - at);
        feed(stream, o, s, bytes, ids, at, piece);
        at += piece;
    }
    finish(stream, o, s);
    check_finished(stream);
    tp_stream_free(stream);
}

/* -- a batch ------------------------------------------------------------------------------ */

typedef struct lane {
    tp_stream *stream;
    uint32_t slot;
    const uint32_t *ids;
    size_t n, start; /* its ids; the step it starts at */
    int finished;
    fuzz_observer observer;
} lane;

/* A step the batch must refuse whole: a live stream's token, then a slot twice, an id
 * outside the vocab, a slot without a stream, or a finished stream's token. */
static void try_bad_step(tp_batch *batch, const setup *s, const lane *lanes, size_t n_lanes,
                         tp_batch_events *out, size_t step) {
    uint32_t slots[2], ids[2] = {'a', 'b'};
    size_t failed = 0, count, k, live = n_lanes, done = n_lanes;
    tp_batch_fault fault = TP_BATCH_NO_FAULT, want;
    const uint8_t *arena;
    for (k = 0; k < n_lanes; k++) {
        if (lanes[k].finished)
            done = k;
        else if (live == n_lanes)
            live = k;
    }
    if (live == n_lanes) return;
    slots[0] = lanes[live].slot;
    switch (step % 4) {
    case 0:
        slots[1] = lanes[live].slot;
        want = TP_BATCH_TWICE;
        break;
    case 1:
        slots[1] = lanes[(live + 1) % n_lanes].slot;
        ids[1] = tp_vocab_size(s->format->vocab);
        want = TP_BATCH_BAD_TOKEN;
        break;
    case 2:
        slots[1] = 100000u + (uint32_t)step; /* past every slot set */
        want = TP_BATCH_NO_STREAM;
        break;
    default:
        if (done == n_lanes) return;
        slots[1] = lanes[done].slot;
        want = TP_BATCH_FINISHED;
        break;
    }
    FUZZ_CHECK(tp_batch_feed(batch, s->format->vocab, slots, ids, 2, out, &fault, &failed) ==
                   TP_ERR_ARG,
               "a bad batch step was fed");
    FUZZ_CHECK(fault == want, "a bad batch step refused for another fault");
    FUZZ_CHECK(failed == 1, "a bad batch step blamed on another stream");
    tp_batch_events_list(out, &count, &arena);
    FUZZ_CHECK(count == 0, "events from a refused batch step");
    tp_batch_events_groups(out, &count);
    FUZZ_CHECK(count == 0, "groups from a refused batch step");
}

/* Checks a step's groups and hands each stream its events. */
static void observe_step(lane *lanes, size_t n_lanes, const uint32_t *step_lanes, size_t n_step,
                         const tp_batch_events *out) {
    size_t n_groups, n_events, k, next_event = 0, last_position = 0;
    const uint8_t *arena;
    const tp_batch_group *groups = tp_batch_events_groups(out, &n_groups);
    const tp_event *events = tp_batch_events_list(out, &n_events, &arena);
    size_t arena_len = tp_batch_events_arena_length(out); /* every stream's text, in turn */
    for (k = 0; k < n_groups; k++)
        FUZZ_CHECK(groups[k].position < n_step, "a group outside the step");
    for (k = 0; k < n_groups; k++) {
        const tp_batch_group *g = &groups[k];
        lane *l = &lanes[step_lanes[g->position]];
        size_t j;
        int stateful = 0;
        FUZZ_CHECK(k == 0 || g->position > last_position, "groups out of step order");
        FUZZ_CHECK(g->slot == l->slot, "a group names another slot than its position");
        FUZZ_CHECK(g->first == next_event && g->count > 0 && g->first + g->count <= n_events,
                   "groups do not tile the step's events");
        for (j = g->first; j < g->first + g->count; j++) {
            uint32_t kind = events[j].kind;
            stateful |= kind != TP_EV_CONTENT && kind != TP_EV_REASONING && kind != TP_EV_ARGS;
        }
        FUZZ_CHECK(!g->stateful == !stateful, "a group's stateful flag is wrong");
        fuzz_observe(&l->observer, events + g->first, g->count, arena, arena_len);
        next_event = g->first + g->count;
        last_position = g->position;
    }
    FUZZ_CHECK(next_event == n_events, "events outside every group");
    (void)n_lanes;
}

/* The ids split among several streams fed one token per step through tp_batch_feed, each
 * then compared with its own ids fed whole to a stream of its own. */
static void run_batch(const setup *s, const uint32_t *ids, size_t n) {
    lane lanes[MAX_BATCH];
    size_t n_lanes = s->n_streams, k, step, at = 0, live;
    uint32_t slots[MAX_BATCH], step_ids[MAX_BATCH], step_lanes[MAX_BATCH];
    tp_batch *batch = NULL;
    tp_batch_events *out = NULL;
    tp_pool *pool = NULL;
    FUZZ_CHECK(tp_batch_new(&batch) == TP_OK && tp_batch_events_new(&out) == TP_OK &&
                   tp_pool_new(&pool) == TP_OK,
               "tp_batch_new failed");
    for (k = 0; k < n_lanes; k++) {
        lane *l = &lanes[k];
        size_t share = k + 1 == n_lanes ? n - at : n / n_lanes;
        l->stream = open_stream(s, pool);
        l->slot = (uint32_t)(k * 7 + 3); /* sparse: the table grows past empty slots */
        l->ids = ids + at;
        l->n = share;
        l->start = k * s->stagger;
        l->finished = 0;
        fuzz_observer_init(&l->observer, (s->flags & TP_STREAM_REPAIR) != 0);
        at += share;
        FUZZ_CHECK(tp_batch_set(batch, l->slot, l->stream) == TP_OK, "tp_batch_set failed");
    }
    for (step = 0, live = n_lanes; live > 0; step++) {
        size_t n_step = 0, failed = 0;
        tp_batch_fault fault = TP_BATCH_NO_FAULT;
        if (s->bad_step && step % 3 == 1) try_bad_step(batch, s, lanes, n_lanes, out, step);
        for (k = 0; k < n_lanes; k++) {
            lane *l = &lanes[k];
            if (l->finished || step < l->start) continue;
            if (step - l->start < l->n) {
                slots[n_step] = l->slot;
                step_ids[n_step] = l->ids[step - l->start];
                step_lanes[n_step++] = (uint32_t)k;
            }
        }
        FUZZ_CHECK(tp_batch_feed(batch, s->format->vocab, slots, step_ids, n_step, out, &fault,
                                 &failed) == TP_OK &&
                       fault == TP_BATCH_NO_FAULT,
                   "a good batch step failed");
        for (k = 0; k < n_step; k++) {
            uint32_t len = 0;
            tp_vocab_token(s->format->vocab, step_ids[k], &len);
            lanes[step_lanes[k]].observer.fed += len;
        }
        observe_step(lanes, n_lanes, step_lanes, n_step, out);
        for (k = 0; k < n_lanes; k++) { /* a stream whose ids are all fed ends */
            lane *l = &lanes[k];
            if (!l->finished && step >= l->start && step - l->start + 1 >= l->n) {
                finish(l->stream, &l->observer, s);
                l->finished = 1;
                live--;
            }
        }
    }
    for (k = 0; k < n_lanes; k++) {
        fuzz_observer whole;
        fuzz_observer_init(&whole, (s->flags & TP_STREAM_REPAIR) != 0);
        run_stream(s, NULL, lanes[k].ids, lanes[k].n, 1, &whole);
        fuzz_observers_agree(&lanes[k].observer, &whole);
        fuzz_observer_free(&whole);
        fuzz_observer_free(&lanes[k].observer);
        check_finished(lanes[k].stream);
    }
    tp_batch_free(batch);
    tp_batch_events_free(out);
    for (k = 0; k < n_lanes; k++) tp_stream_free(lanes[k].stream);
    FUZZ_CHECK(tp_pool_live(pool) == 0, "a stream kept its block");
    tp_pool_free(pool);
}

/* -- the target --------------------------------------------------------------------------- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    setup s;
    const uint8_t *body = data + HEADER;
    size_t n, body_len;
    uint32_t *ids = NULL;
    fuzz_observer chunked, whole;
    if (size < HEADER) return 0;
    body_len = size - HEADER;
    s = read_setup(data, body_len);
    n = body_len;
    if (s.tokens) ids = read_ids(s.format, body, body_len, &n);
    if (s.batch) {
        run_batch(&s, ids, n);
    } else {
        int repair = (s.flags & TP_STREAM_REPAIR) != 0;
        fuzz_observer_init(&chunked, repair);
        fuzz_observer_init(&whole, repair);
        run_stream(&s, body, ids, n, 0, &chunked);
        run_stream(&s, body, ids, n, 1, &whole);
        fuzz_observers_agree(&chunked, &whole);
        fuzz_observer_free(&chunked);
        fuzz_observer_free(&whole);
    }
    free(ids);
    return 0;
}
