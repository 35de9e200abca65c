/* observe.c: event invariants and run summaries (see observe.h). */
#include "observe.h"

#include "text.h" /* tp_utf8_char: what "replace" decoding does, as the glue does it */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fuzz_broken(const char *file, int line, const char *what) {
    fprintf(stderr, "%s:%d: invariant broken: %s\n", file, line, what);
    abort();
}

void fuzz_bytes_append(fuzz_bytes *b, const uint8_t *data, size_t n) {
    if (n == 0) return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        uint8_t *grown;
        while (cap < b->len + n) cap *= 2;
        grown = (uint8_t *)realloc(b->data, cap);
        FUZZ_CHECK(grown != NULL, "harness out of memory");
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, n);
    b->len += n;
}

void fuzz_bytes_free(fuzz_bytes *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

static int bytes_equal(const fuzz_bytes *a, const fuzz_bytes *b) {
    return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

/* -- UTF-8 as CPython's decoder with errors="replace" reads it ---------------------------- */

static void append_shown(fuzz_bytes *out, const uint8_t *s, size_t n) {
    static const uint8_t replacement[3] = {0xEF, 0xBF, 0xBD};
    size_t k = 0;
    while (k < n) {
        size_t bad = 0, len = tp_utf8_char(s + k, n - k, &bad);
        if (len) {
            fuzz_bytes_append(out, s + k, len);
            k += len;
        } else {
            fuzz_bytes_append(out, replacement, sizeof replacement);
            k += bad;
        }
    }
}

/* -- the observer ------------------------------------------------------------------------ */

void fuzz_observer_init(fuzz_observer *o, int repair) {
    memset(o, 0, sizeof *o);
    o->repair = repair;
}

static void free_records(fuzz_observer *o) {
    size_t k;
    for (k = 0; k < o->n_records; k++) {
        fuzz_bytes_free(&o->records[k].text);
        fuzz_bytes_free(&o->records[k].aux);
        fuzz_bytes_free(&o->records[k].shown);
    }
    o->n_records = 0;
}

void fuzz_observer_free(fuzz_observer *o) {
    free_records(o);
    free(o->records);
    fuzz_bytes_free(&o->content);
    fuzz_bytes_free(&o->reasoning);
    fuzz_bytes_free(&o->call_name);
    fuzz_bytes_free(&o->call_args);
    memset(o, 0, sizeof *o);
}

void fuzz_observer_reset(fuzz_observer *o) {
    int repair = o->repair;
    fuzz_observer_free(o);
    fuzz_observer_init(o, repair);
}

static int is_delta(uint32_t kind) {
    return kind == TP_EV_CONTENT || kind == TP_EV_REASONING || kind == TP_EV_ARGS;
}

static void record(fuzz_observer *o, const tp_event *ev, const uint8_t *text, const uint8_t *aux) {
    fuzz_record *r;
    if (is_delta(ev->kind) && o->n_records) {
        r = &o->records[o->n_records - 1];
        if (r->kind == ev->kind && r->index == ev->index) {
            fuzz_bytes_append(&r->text, text, ev->text_len);
            append_shown(&r->shown, text, ev->text_len);
            return;
        }
    }
    if (o->n_records == o->cap_records) {
        size_t cap = o->cap_records ? o->cap_records * 2 : 16;
        fuzz_record *grown = (fuzz_record *)realloc(o->records, cap * sizeof *grown);
        FUZZ_CHECK(grown != NULL, "harness out of memory");
        o->records = grown;
        o->cap_records = cap;
    }
    r = &o->records[o->n_records++];
    memset(r, 0, sizeof *r);
    r->kind = ev->kind;
    r->index = ev->index;
    r->code = ev->code;
    r->msg = ev->msg;
    r->offset = ev->offset;
    fuzz_bytes_append(&r->text, text, ev->text_len);
    fuzz_bytes_append(&r->aux, aux, ev->aux_len);
    if (is_delta(ev->kind)) append_shown(&r->shown, text, ev->text_len);
}

/* What the event says about the calls must follow from the events before it. */
static void check_call(fuzz_observer *o, const tp_event *ev, const uint8_t *text,
                       const uint8_t *aux) {
    int current = o->call_open && !o->call_dead && ev->index == o->started - 1;
    FUZZ_CHECK(!o->limited, "an event after a limit error");
    switch (ev->kind) {
    case TP_EV_CONTENT:
    case TP_EV_REASONING:
        FUZZ_CHECK(ev->index == -1, "a text delta has a call index");
        FUZZ_CHECK(ev->aux_len == 0, "a text delta has aux text");
        FUZZ_CHECK(ev->text_len > 0, "an empty text delta");
        fuzz_bytes_append(ev->kind == TP_EV_CONTENT ? &o->content : &o->reasoning, text,
                          ev->text_len);
        break;
    case TP_EV_CALL_START:
        FUZZ_CHECK(ev->index == o->started, "call indices do not count up from 0");
        FUZZ_CHECK(ev->text_len > 0, "a call starts with an empty name");
        o->started++;
        o->call_open = 1;
        o->call_dead = 0;
        o->call_name.len = o->call_args.len = 0;
        fuzz_bytes_append(&o->call_name, text, ev->text_len);
        break;
    case TP_EV_ARGS:
        FUZZ_CHECK(current, "arguments for a call that is not the open one");
        FUZZ_CHECK(ev->aux_len == 0, "an arguments delta has aux text");
        FUZZ_CHECK(ev->text_len > 0, "an empty arguments delta");
        fuzz_bytes_append(&o->call_args, text, ev->text_len);
        break;
    case TP_EV_CALL_END:
    case TP_EV_CALL_REPAIR: {
        fuzz_bytes got = {NULL, 0, 0};
        FUZZ_CHECK(current, "a call ends that is not the open one");
        FUZZ_CHECK(ev->kind == TP_EV_CALL_END || o->repair, "a call to repair outside repair mode");
        FUZZ_CHECK(ev->aux_len == o->call_name.len &&
                       (ev->aux_len == 0 || memcmp(aux, o->call_name.data, ev->aux_len) == 0),
                   "a call ends under another name than it started with");
        if (ev->kind == TP_EV_CALL_END) {
            fuzz_bytes_append(&got, text, ev->text_len);
            FUZZ_CHECK(bytes_equal(&got, &o->call_args),
                       "a call's arguments deltas do not add up to its arguments");
            FUZZ_CHECK(ev->text_len > 0 && text[0] == '{', "a call's arguments are not an object");
            fuzz_bytes_free(&got);
        } else {
            FUZZ_CHECK(o->call_args.len == 0, "a call to repair streamed arguments");
            FUZZ_CHECK(ev->offset <= o->fed, "a call to repair ends past the input");
        }
        o->call_open = 0;
        break;
    }
    case TP_EV_ERROR:
        FUZZ_CHECK(ev->code <= TP_PE_LIMIT, "an unknown error kind");
        FUZZ_CHECK(ev->msg <= TP_MSG_LIMIT_STREAM, "an unknown error message");
        FUZZ_CHECK((ev->code == TP_PE_LIMIT) == (ev->msg >= TP_MSG_LIMIT),
                   "a limit without its name");
        FUZZ_CHECK(ev->aux_len == 0, "an error has aux text");
        FUZZ_CHECK(ev->offset <= o->fed, "an error past the input");
        FUZZ_CHECK(ev->index == -1 || current, "an error names a call that is not open");
        FUZZ_CHECK((ev->code == TP_PE_UNKNOWN_TOOL) == (ev->msg == TP_MSG_UNKNOWN_TOOL),
                   "an unknown tool error without its message");
        if (ev->index >= 0) o->call_dead = 1;
        if (ev->code == TP_PE_LIMIT) o->limited = 1;
        break;
    default:
        FUZZ_CHECK(0, "an unknown event kind");
    }
}

void fuzz_observe(fuzz_observer *o, const tp_event *events, size_t count, const uint8_t *arena,
                  size_t arena_len) {
    size_t k;
    for (k = 0; k < count; k++) {
        const tp_event *ev = &events[k];
        const uint8_t *text, *aux;
        FUZZ_CHECK((uint64_t)ev->text_off + ev->text_len <= arena_len,
                   "event text outside the arena");
        FUZZ_CHECK((uint64_t)ev->aux_off + ev->aux_len <= arena_len, "event aux outside the arena");
        FUZZ_CHECK(arena != NULL || (ev->text_len == 0 && ev->aux_len == 0), "no arena for text");
        text = ev->text_len ? arena + ev->text_off : NULL;
        aux = ev->aux_len ? arena + ev->aux_off : NULL;
        check_call(o, ev, text, aux);
        record(o, ev, text, aux);
        o->n_events++;
    }
}

void fuzz_observe_stream(fuzz_observer *o, const tp_stream *s, uint64_t fed) {
    size_t count;
    const uint8_t *arena;
    const tp_event *events = tp_stream_events(s, &count, &arena);
    o->fed += fed;
    FUZZ_CHECK(count == 0 || events != NULL, "events missing");
    fuzz_observe(o, events, count, arena, tp_stream_arena_length(s));
}

void fuzz_observe_message(const fuzz_observer *o, tp_stream *s) {
    size_t len;
    int present = 0;
    const uint8_t *content = NULL, *reasoning = NULL;
    FUZZ_CHECK(tp_stream_content(s, &content, &len) == TP_OK, "the content could not be read");
    FUZZ_CHECK(len == o->content.len && (len == 0 || memcmp(content, o->content.data, len) == 0),
               "the message content is not what the content deltas said");
    FUZZ_CHECK(tp_stream_reasoning(s, &reasoning, &len, &present) == TP_OK,
               "the reasoning could not be read");
    FUZZ_CHECK(len == o->reasoning.len &&
                   (len == 0 || memcmp(reasoning, o->reasoning.data, len) == 0),
               "the message reasoning is not what the reasoning deltas said");
    FUZZ_CHECK(present || len == 0, "reasoning text but no reasoning");
}

static void report_records(const char *name, const fuzz_observer *o) {
    size_t k;
    fprintf(stderr, "%s: %zu merged events\n", name, o->n_records);
    for (k = 0; k < o->n_records; k++) {
        const fuzz_record *r = &o->records[k];
        fprintf(stderr, "  kind %u index %d code %u msg %u offset %llu text %zu bytes: %.*s\n",
                r->kind, r->index, r->code, r->msg, (unsigned long long)r->offset, r->text.len,
                (int)(r->text.len < 80 ? r->text.len : 80),
                r->text.data ? (const char *)r->text.data : "");
    }
}

void fuzz_observers_agree(const fuzz_observer *a, const fuzz_observer *b) {
    size_t k;
    int same = a->n_records == b->n_records;
    for (k = 0; same && k < a->n_records; k++) {
        const fuzz_record *x = &a->records[k], *y = &b->records[k];
        same = x->kind == y->kind && x->index == y->index && x->code == y->code &&
               x->msg == y->msg && x->offset == y->offset && bytes_equal(&x->text, &y->text) &&
               bytes_equal(&x->aux, &y->aux) && bytes_equal(&x->shown, &y->shown);
    }
    same =
        same && bytes_equal(&a->content, &b->content) && bytes_equal(&a->reasoning, &b->reasoning);
    if (!same) {
        report_records("chunked run", a);
        report_records("whole run", b);
    }
    FUZZ_CHECK(same, "two chunkings of the same input gave different events");
}
