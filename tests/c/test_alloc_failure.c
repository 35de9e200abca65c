/* test_alloc_failure.c: running out of memory anywhere is a status, never a crash or a leak.
 *
 * A counting allocator (tp_allocator) fails its N-th allocation.  Each scenario (a trie and
 * its matcher, JSON scanners, a program, a tool table, a vocab, a stream fed a tool-call
 * output in chunks and finished, streams in a pool fed token ids, a batch) first runs with
 * no failure, which counts its allocations; then once for every N from 1 to that count.
 * Every call must succeed or return TP_ERR_NOMEM (a constructor then hands back no object);
 * a scenario stops at the first TP_ERR_NOMEM and frees what it made.  After every run the
 * allocator must hold nothing, which proves no leak on any failure path without a leak
 * checker (valgrind and the sanitizers check the same runs besides).  A run that succeeds
 * although an allocation failed (the core keeps a buffer it could not shrink) must give the
 * events of the run without failures.
 *
 *   test_alloc_failure [CASE...]
 *
 * Without arguments the scenarios run on a small built-in program (a <think> block, content
 * and <tool_call>{"name": ..., "arguments": {...}}</tool_call> calls).  Each CASE is a path
 * prefix: CASE.program (a compiled format, entry "start"), CASE.tools (a tool table, may be
 * empty) and CASE.output (a response of that format), which tests/test_c_core.py writes for
 * a few real formats. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "toolparse.h"

/* ---------------------------------------------------------------------------------------------
 * The counting allocator.  Each block carries a header with a magic number and its size, so
 * a block freed that it did not hand out (one the core took elsewhere) is caught. */

#define HEADER 16u
#define MAGIC 0x7470616cu /* "tpal" */

typedef struct counting {
    size_t calls;      /* allocations asked for: alloc and realloc */
    size_t fail_at;    /* the call that fails (1-based); 0: none */
    size_t failed;     /* calls that failed */
    long outstanding;  /* blocks handed out and not freed */
    unsigned long bad; /* contract breaches: size 0, a foreign or NULL pointer */
} counting;

static int take_call(counting *c) {
    c->calls++;
    if (c->calls == c->fail_at) {
        c->failed++;
        return 0;
    }
    return 1;
}

static void *with_header(uint8_t *raw, size_t size) {
    uint32_t magic = MAGIC;
    memcpy(raw, &magic, sizeof magic);
    memcpy(raw + 8, &size, sizeof size < 8 ? sizeof size : 8);
    return raw + HEADER;
}

/* The block's start, or NULL when ptr is not one of ours. */
static uint8_t *header_of(counting *c, void *ptr) {
    uint8_t *raw;
    uint32_t magic;
    if (!ptr) {
        c->bad++;
        return NULL;
    }
    raw = (uint8_t *)ptr - HEADER;
    memcpy(&magic, raw, sizeof magic);
    if (magic != MAGIC) {
        c->bad++;
        return NULL;
    }
    return raw;
}

static void *counting_alloc(void *ctx, size_t size) {
    counting *c = (counting *)ctx;
    uint8_t *raw;
    if (size == 0) c->bad++;
    if (!take_call(c) || size > SIZE_MAX - HEADER) return NULL;
    raw = (uint8_t *)malloc(size + HEADER);
    if (!raw) return NULL;
    c->outstanding++;
    return with_header(raw, size);
}

static void *counting_realloc(void *ctx, void *ptr, size_t size) {
    counting *c = (counting *)ctx;
    uint8_t *raw = header_of(c, ptr), *grown;
    if (size == 0) c->bad++;
    if (!raw || !take_call(c) || size > SIZE_MAX - HEADER) return NULL;
    grown = (uint8_t *)realloc(raw, size + HEADER);
    if (!grown) return NULL;
    return with_header(grown, size);
}

static void counting_free(void *ctx, void *ptr) {
    counting *c = (counting *)ctx;
    uint8_t *raw = header_of(c, ptr);
    if (!raw) return;
    memset(raw, 0, HEADER); /* a second free of the block shows */
    free(raw);
    c->outstanding--;
}

static tp_allocator counting_allocator(counting *c) {
    tp_allocator a;
    a.alloc = counting_alloc;
    a.realloc = counting_realloc;
    a.free = counting_free;
    a.ctx = c;
    return a;
}

/* ---------------------------------------------------------------------------------------------
 * What a run saw: a digest of its results, to compare a run that absorbed a failure with
 * the run without one. */

typedef struct digest {
    uint64_t hash;
    size_t events;
} digest;

static void mix(digest *d, const void *data, size_t n) {
    const uint8_t *p = (const uint8_t *)data;
    size_t k;
    for (k = 0; k < n; k++) d->hash = (d->hash ^ p[k]) * 1099511628211ull; /* FNV-1a */
}

static void mix_u64(digest *d, uint64_t v) { mix(d, &v, sizeof v); }

static void mix_events(digest *d, const tp_event *events, size_t count, const uint8_t *arena) {
    size_t k;
    for (k = 0; k < count; k++) {
        const tp_event *ev = &events[k];
        mix_u64(d, ev->kind);
        mix_u64(d, (uint64_t)(int64_t)ev->index);
        mix_u64(d, ev->code);
        mix_u64(d, ev->msg);
        mix_u64(d, ev->offset);
        if (ev->text_len) mix(d, arena + ev->text_off, ev->text_len);
        mix_u64(d, ev->text_len);
        if (ev->aux_len) mix(d, arena + ev->aux_off, ev->aux_len);
        mix_u64(d, ev->aux_len);
    }
    d->events += count;
}

/* ---------------------------------------------------------------------------------------------
 * The cases: a program, its tool table and a response. */

typedef struct bytes {
    uint8_t *data;
    size_t len;
} bytes;

typedef struct test_case {
    const char *name;
    bytes program, tools, output;
    uint32_t special_string; /* a program string that is a special token's text; UINT32_MAX: none */
} test_case;

/* The built-in program's strings (their indices) and what it parses. */
enum {
    S_THINK_OPEN,
    S_THINK_CLOSE,
    S_CALL_OPEN,
    S_CALL_CLOSE,
    S_NAME,
    S_COMMA,
    S_ARGS,
    S_BRACE,
    N_STRINGS
};
static const char *const builtin_strings[N_STRINGS] = {
    "<think>", "</think>", "<tool_call>", "</tool_call>", "{\"name\":", ",", "\"arguments\":", "}"};
static const char builtin_output[] =
    "<think>The user wants the weather.</think>Let me check.\n<tool_call>\n{\"name\": "
    "\"get_weather\", \"arguments\": {\"city\": \"Par\\u00eds\", \"days\": [1, 2, {\"a\": null}]}}"
    "\n</tool_call>\nAnd one more: <tool_call>{\"name\": \"get_time\", \"arguments\": {}}"
    "</tool_call> caf\xc3\xa9 <tool_call>{\"name\": \"unknown\", \"arguments\": {}}</tool_call>"
    " <tool_call>{\"name\": \"get_time\", \"arguments\": {\"zone\": ";

typedef struct blob {
    uint8_t data[4096];
    size_t len;
} blob;

static void put_u32(blob *b, uint32_t v) {
    REQUIRE(b->len + 4 <= sizeof b->data);
    b->data[b->len++] = (uint8_t)v;
    b->data[b->len++] = (uint8_t)(v >> 8);
    b->data[b->len++] = (uint8_t)(v >> 16);
    b->data[b->len++] = (uint8_t)(v >> 24);
}

static void put_text(blob *b, const char *text) {
    size_t n = strlen(text);
    put_u32(b, (uint32_t)n);
    REQUIRE(b->len + n <= sizeof b->data);
    memcpy(b->data + b->len, text, n);
    b->len += n;
}

/* A two-pass assembler: jumps name labels, patched once the code is laid out. */
enum { L_BODY, L_LOOP, L_CONTENT, L_NEXT, L_END, N_LABELS };

typedef struct assembler {
    uint32_t code[128];
    uint32_t n;
    uint32_t label[N_LABELS];
    uint32_t fix_at[16], fix_label[16], n_fix;
} assembler;

static void emit(assembler *a, uint32_t op, int n_operands, uint32_t x, uint32_t y) {
    REQUIRE(tp_op_operands(op) == (uint32_t)n_operands && a->n + 3 <= 128);
    a->code[a->n++] = op;
    if (n_operands > 0) a->code[a->n++] = x;
    if (n_operands > 1) a->code[a->n++] = y;
}

static void jump(assembler *a, uint32_t op, uint32_t label) {
    REQUIRE(a->n_fix < 16);
    emit(a, op, 1, 0, 0);
    a->fix_at[a->n_fix] = a->n - 1;
    a->fix_label[a->n_fix++] = label;
}

static void here(assembler *a, uint32_t label) { a->label[label] = a->n; }

#define OP0(op) emit(&as, op, 0, 0, 0)
#define OP1(op, x) emit(&as, op, 1, x, 0)
#define OP2(op, x, y) emit(&as, op, 2, x, y)

/* The built-in program: start = ws? (<think> reasoning </think>)? (call | content)* EOF. */
static void builtin_program(blob *b) {
    assembler as;
    uint32_t k;
    memset(&as, 0, sizeof as);
    jump(&as, TP_OP_CHOICE, L_BODY);
    OP1(TP_OP_LIT, S_THINK_OPEN);
    OP2(TP_OP_TOPEN, TP_ROLE_REASONING, TP_DECODE_RAW);
    OP2(TP_OP_UNTIL, 0, 0);
    OP0(TP_OP_TCLOSE);
    OP1(TP_OP_LIT, S_THINK_CLOSE);
    jump(&as, TP_OP_COMMIT, L_BODY);
    here(&as, L_BODY);
    here(&as, L_LOOP);
    jump(&as, TP_OP_CHOICE, L_END);
    jump(&as, TP_OP_CHOICE, L_CONTENT);
    OP1(TP_OP_LIT, S_CALL_OPEN);
    OP2(TP_OP_TOPEN, TP_ROLE_TOOL_CALL, TP_DECODE_RAW);
    OP0(TP_OP_WS);
    OP1(TP_OP_LIT, S_NAME);
    OP0(TP_OP_WS);
    OP2(TP_OP_TOPEN, TP_ROLE_TOOL_NAME, TP_DECODE_JSON_STRING);
    OP2(TP_OP_JSON, TP_JSON_STRICT | TP_JSON_KIND_STRING << 8, 0);
    OP0(TP_OP_TCLOSE);
    OP0(TP_OP_WS);
    OP1(TP_OP_LIT, S_COMMA);
    OP0(TP_OP_WS);
    OP1(TP_OP_LIT, S_ARGS);
    OP0(TP_OP_WS);
    OP2(TP_OP_TOPEN, TP_ROLE_TOOL_ARGS, TP_DECODE_RAW);
    OP2(TP_OP_JSON, TP_JSON_STRICT | TP_JSON_KIND_OBJECT << 8, 0);
    OP0(TP_OP_TCLOSE);
    OP0(TP_OP_WS);
    OP1(TP_OP_LIT, S_BRACE);
    OP0(TP_OP_WS);
    OP0(TP_OP_TCLOSE);
    OP1(TP_OP_LIT, S_CALL_CLOSE);
    jump(&as, TP_OP_COMMIT, L_NEXT);
    here(&as, L_CONTENT);
    OP2(TP_OP_TOPEN, TP_ROLE_CONTENT, TP_DECODE_RAW);
    OP2(TP_OP_UNTIL, 1, TP_UNTIL_MIN1 | TP_UNTIL_COMMIT);
    OP0(TP_OP_TCLOSE);
    here(&as, L_NEXT);
    jump(&as, TP_OP_COMMIT, L_LOOP);
    here(&as, L_END);
    OP1(TP_OP_EOF, 0);
    OP0(TP_OP_END);
    for (k = 0; k < as.n_fix; k++) as.code[as.fix_at[k]] = as.label[as.fix_label[k]];

    b->len = 0;
    memcpy(b->data, "TPG1", 4);
    b->len = 4;
    put_u32(b, as.n);
    put_u32(b, N_STRINGS);
    put_u32(b, 2); /* stop sets */
    put_u32(b, 1); /* entries */
    for (k = 0; k < as.n; k++) put_u32(b, as.code[k]);
    for (k = 0; k < N_STRINGS; k++) put_text(b, builtin_strings[k]);
    put_u32(b, 1); /* stop set 0: </think> */
    put_u32(b, S_THINK_CLOSE);
    put_u32(b, 0);
    put_u32(b, 1); /* stop set 1: <tool_call> */
    put_u32(b, S_CALL_OPEN);
    put_u32(b, 0);
    put_text(b, "start");
    put_u32(b, 0);
}

/* get_weather(city: string, days: array) and get_time(zone: string | null). */
static void builtin_tools(blob *b) {
    b->len = 0;
    put_u32(b, 2);
    put_text(b, "get_weather");
    put_u32(b, 2);
    put_text(b, "city");
    put_u32(b, 1);
    put_u32(b, TP_TYPE_STRING);
    put_text(b, "days");
    put_u32(b, 1);
    put_u32(b, TP_TYPE_ARRAY);
    put_text(b, "get_time");
    put_u32(b, 1);
    put_text(b, "zone");
    put_u32(b, 2);
    put_u32(b, TP_TYPE_STRING);
    put_u32(b, TP_TYPE_NULL);
}

static bytes read_file(const char *prefix, const char *suffix) {
    char path[4096];
    bytes out = {NULL, 0};
    FILE *f;
    long size;
    REQUIRE(strlen(prefix) + strlen(suffix) < sizeof path);
    strcpy(path, prefix);
    strcat(path, suffix);
    f = fopen(path, "rb");
    if (!f) fprintf(stderr, "cannot open %s\n", path);
    REQUIRE(f != NULL);
    REQUIRE(fseek(f, 0, SEEK_END) == 0);
    size = ftell(f);
    REQUIRE(size >= 0 && fseek(f, 0, SEEK_SET) == 0);
    out.data = (uint8_t *)malloc((size_t)size + 1);
    REQUIRE(out.data != NULL);
    out.len = fread(out.data, 1, (size_t)size, f);
    REQUIRE(out.len == (size_t)size);
    fclose(f);
    return out;
}

/* ---------------------------------------------------------------------------------------------
 * The scenarios.  Each returns TP_OK when it ran to its end, TP_ERR_NOMEM when a call ran out
 * of memory (having freed what it made), and any other status as a failure. */

typedef tp_status (*scenario_fn)(const tp_allocator *a, const test_case *tc, digest *d);

/* Stops the scenario at a failing call; a failing constructor must hand back no object. */
#define STEP(expr)                  \
    do {                            \
        st = (expr);                \
        if (st != TP_OK) goto done; \
    } while (0)
#define MAKE(expr, object)           \
    do {                             \
        st = (expr);                 \
        if (st != TP_OK) {           \
            CHECK((object) == NULL); \
            goto done;               \
        }                            \
    } while (0)

static tp_status trie_scenario(const tp_allocator *a, const test_case *tc, digest *d) {
    static const char *const texts[] = {"<tool_call>", "</tool_call>", "<think>",   "</think>",
                                        "<",           "</",           "{\"name\":"};
    const uint8_t *markers[7];
    size_t lens[7], k, n_out, at;
    tp_trie *trie = NULL;
    tp_matcher *m = NULL;
    tp_match found[2];
    tp_status st;
    (void)tc;
    for (k = 0; k < 7; k++) {
        markers[k] = (const uint8_t *)texts[k];
        lens[k] = strlen(texts[k]);
    }
    MAKE(tp_trie_new_with(a, markers, lens, 7, &trie, NULL), trie);
    MAKE(tp_matcher_new_with(a, trie, NULL, &m), m);
    for (at = 0; at < sizeof builtin_output - 1;) {
        size_t piece = sizeof builtin_output - 1 - at < 5 ? sizeof builtin_output - 1 - at : 5;
        size_t used =
            tp_matcher_feed(m, (const uint8_t *)builtin_output + at, piece, found, 2, &n_out);
        at += used;
        for (k = 0; k < n_out; k++) mix_u64(d, found[k].id << 20 | found[k].start);
    }
    do {
        st = tp_matcher_finish(m, found, 2, &n_out);
        for (k = 0; k < n_out; k++) mix_u64(d, found[k].id << 20 | found[k].start);
    } while (st == TP_ERR_NOSPACE);
done:
    tp_matcher_free(m);
    tp_trie_free(trie);
    return st;
}

static tp_status json_scenario(const tp_allocator *a, const test_case *tc, digest *d) {
    static const char doc[] = "{\"a\": [1, 2.5e3, true, null, \"x\\u00e9\"], \"b\": {}}";
    static const char lenient[] = "{a: [1, 2,], 'b': True}";
    tp_json *strict = NULL, *deep = NULL;
    tp_status st;
    (void)tc;
    MAKE(tp_json_new_with(a, TP_JSON_STRICT, 64, NULL, &strict), strict);
    MAKE(tp_json_new_with(a, TP_JSON_LENIENT, 4096, NULL, &deep), deep);
    mix_u64(d, tp_json_feed(strict, (const uint8_t *)doc, sizeof doc - 1, NULL));
    mix_u64(d, tp_json_feed(deep, (const uint8_t *)lenient, sizeof lenient - 1, NULL));
    mix_u64(d, tp_json_finish(deep));
    mix_u64(d, tp_json_relaxations(deep));
done:
    tp_json_free(strict);
    tp_json_free(deep);
    return st;
}

static tp_status program_scenario(const tp_allocator *a, const test_case *tc, digest *d) {
    tp_program *p = NULL;
    tp_status st;
    MAKE(tp_program_new_with(a, tc->program.data, tc->program.len, &p, NULL), p);
    mix_u64(d, (uint64_t)tp_program_entry(p, "start", 5));
    mix_u64(d, tp_program_stopset_count(p));
done:
    tp_program_free(p);
    return st;
}

static tp_status tools_scenario(const tp_allocator *a, const test_case *tc, digest *d) {
    tp_tools *t = NULL;
    tp_status st = TP_OK;
    if (!tc->tools.len) return TP_OK;
    MAKE(tp_tools_new_with(a, tc->tools.data, tc->tools.len, &t), t);
    mix_u64(d, (uint64_t)(int64_t)tp_tools_find(t, (const uint8_t *)"get_weather", 11));
done:
    tp_tools_free(t);
    return st;
}

/* Byte tokens (id b: byte b) and, after them, the special token's text (when the case has
 * one): a tokenizer a stream can be fed token ids of. */
static tp_status new_vocab(const tp_allocator *a, const test_case *tc, tp_vocab **out) {
    uint8_t table[256 + 64];
    uint32_t offsets[258];
    uint8_t special[257];
    uint32_t k, n = 256;
    const uint8_t *text = NULL;
    uint32_t text_len = 0;
    tp_program *p = NULL;
    for (k = 0; k < 256; k++) {
        table[k] = (uint8_t)k;
        offsets[k] = k;
        special[k] = 0;
    }
    offsets[256] = 256;
    if (tc->special_string != UINT32_MAX) {
        /* the special token's text, read from the program (made with the default allocator:
         * not what this run counts) */
        REQUIRE(tp_program_new(tc->program.data, tc->program.len, &p, NULL) == TP_OK);
        text = tp_program_string(p, tc->special_string, &text_len);
        REQUIRE(text != NULL && text_len <= 64);
        memcpy(table + 256, text, text_len);
        special[256] = 1;
        offsets[257] = 256 + text_len;
        n = 257;
        tp_program_free(p);
    }
    return tp_vocab_new_with(a, table, offsets[n], offsets, special, n, out);
}

static tp_status vocab_scenario(const tp_allocator *a, const test_case *tc, digest *d) {
    tp_vocab *v = NULL;
    tp_status st;
    uint32_t len = 0;
    MAKE(new_vocab(a, tc, &v), v);
    mix_u64(d, tp_vocab_size(v));
    mix_u64(d, tp_vocab_token(v, 65, &len)[0]);
done:
    tp_vocab_free(v);
    return st;
}

/* The output as token ids of new_vocab: its bytes, with the special token's text as the
 * special token.  Returns the count. */
static size_t token_ids(const test_case *tc, const tp_program *p, uint32_t *ids, size_t cap) {
    const uint8_t *text = NULL;
    uint32_t text_len = 0;
    size_t k = 0, n = 0;
    if (tc->special_string != UINT32_MAX)
        text = tp_program_string(p, tc->special_string, &text_len);
    while (k < tc->output.len) {
        REQUIRE(n < cap);
        if (text && tc->output.len - k >= text_len &&
            memcmp(tc->output.data + k, text, text_len) == 0) {
            ids[n++] = 256;
            k += text_len;
        } else {
            ids[n++] = tc->output.data[k++];
        }
    }
    return n;
}

static tp_status collect(tp_stream *s, digest *d) {
    size_t count;
    const uint8_t *arena;
    const tp_event *events = tp_stream_events(s, &count, &arena);
    mix_events(d, events, count, arena);
    return TP_OK;
}

/* The message so far, read as a caller would. */
static tp_status read_message(tp_stream *s, digest *d) {
    const uint8_t *data;
    size_t len;
    int present;
    tp_status st = tp_stream_content(s, &data, &len);
    if (st != TP_OK) return st;
    if (len) mix(d, data, len);
    mix_u64(d, len);
    st = tp_stream_reasoning(s, &data, &len, &present);
    if (st != TP_OK) return st;
    if (len) mix(d, data, len);
    mix_u64(d, len + (uint64_t)present);
    return TP_OK;
}

/* One stream on the heap, deeper limits than its default (new scanners), fed the output in
 * pieces of 7 bytes, read midway and finished. */
static tp_status stream_scenario(const tp_allocator *a, const test_case *tc, digest *d) {
    tp_program *p = NULL;
    tp_tools *tools = NULL;
    tp_stream *s = NULL;
    tp_limits limits;
    size_t at;
    tp_status st;
    MAKE(tp_program_new_with(a, tc->program.data, tc->program.len, &p, NULL), p);
    if (tc->tools.len) MAKE(tp_tools_new_with(a, tc->tools.data, tc->tools.len, &tools), tools);
    MAKE(tp_stream_new_with(a, p, "start", 5, tools, 0, NULL, &s), s);
    tp_limits_default(&limits);
    limits.max_depth = 600; /* past the room of every scanner the stream has */
    STEP(tp_stream_set_limits(s, &limits));
    for (at = 0; at < tc->output.len; at += 7) {
        size_t piece = tc->output.len - at < 7 ? tc->output.len - at : 7;
        STEP(tp_stream_feed(s, tc->output.data + at, piece));
        STEP(collect(s, d));
        if (at == 7 * 6) STEP(read_message(s, d));
    }
    STEP(tp_stream_finish(s, 0));
    STEP(collect(s, d));
    STEP(read_message(s, d));
done:
    tp_stream_free(s);
    tp_tools_free(tools);
    tp_program_free(p);
    return st;
}

/* Two streams in a pool, in repair mode, fed token ids three at a time (the first with its
 * special tokens marked), then reset and fed again one id at a time, cut short. */
static tp_status pool_scenario(const tp_allocator *a, const test_case *tc, digest *d) {
    uint32_t ids[8192];
    uint8_t flags[N_STRINGS];
    tp_program *p = NULL;
    tp_tools *tools = NULL;
    tp_vocab *v = NULL;
    tp_pool *pool = NULL;
    tp_stream *s[2] = {NULL, NULL};
    size_t n_ids, k, j;
    tp_status st;
    MAKE(tp_program_new_with(a, tc->program.data, tc->program.len, &p, NULL), p);
    if (tc->tools.len) MAKE(tp_tools_new_with(a, tc->tools.data, tc->tools.len, &tools), tools);
    MAKE(new_vocab(a, tc, &v), v);
    MAKE(tp_pool_new_with(a, &pool), pool);
    for (j = 0; j < 2; j++)
        MAKE(tp_stream_new_with(a, p, "start", 5, tools, TP_STREAM_REPAIR, pool, &s[j]), s[j]);
    if (tc->special_string != UINT32_MAX) {
        REQUIRE(tc->special_string < N_STRINGS);
        memset(flags, 0, sizeof flags);
        flags[tc->special_string] = 1;
        STEP(tp_stream_set_special(s[0], flags, N_STRINGS));
    }
    n_ids = token_ids(tc, p, ids, sizeof ids / sizeof *ids);
    for (j = 0; j < 2; j++) {
        for (k = 0; k < n_ids; k += 3) {
            STEP(tp_stream_feed_tokens(s[j], v, ids + k, n_ids - k < 3 ? n_ids - k : 3, NULL));
            STEP(collect(s[j], d));
        }
        STEP(tp_stream_finish(s[j], 0));
        STEP(collect(s[j], d));
    }
    tp_stream_reset(s[1]);
    for (k = 0; k < n_ids; k++) {
        STEP(tp_stream_feed_tokens(s[1], v, ids + k, 1, NULL));
        STEP(collect(s[1], d));
    }
    STEP(tp_stream_finish(s[1], 1));
    STEP(collect(s[1], d));
    STEP(read_message(s[1], d));
done:
    for (j = 0; j < 2; j++) tp_stream_free(s[j]);
    tp_pool_free(pool);
    tp_vocab_free(v);
    tp_tools_free(tools);
    tp_program_free(p);
    return st;
}

/* Three streams in a batch at slots 0, 5 and 40 (the slot table grows), one token id each
 * per step, starting a few tokens apart; then finished. */
static tp_status batch_scenario(const tp_allocator *a, const test_case *tc, digest *d) {
    static const uint32_t slots[3] = {0, 5, 40};
    uint32_t ids[8192], step_slots[3], step_ids[3];
    tp_program *p = NULL;
    tp_tools *tools = NULL;
    tp_vocab *v = NULL;
    tp_pool *pool = NULL;
    tp_batch *b = NULL;
    tp_batch_events *events = NULL;
    tp_stream *s[3] = {NULL, NULL, NULL};
    size_t n_ids, step, j, failed, count;
    tp_batch_fault fault;
    const uint8_t *arena;
    const tp_event *list;
    tp_status st;
    MAKE(tp_program_new_with(a, tc->program.data, tc->program.len, &p, NULL), p);
    if (tc->tools.len) MAKE(tp_tools_new_with(a, tc->tools.data, tc->tools.len, &tools), tools);
    MAKE(new_vocab(a, tc, &v), v);
    MAKE(tp_pool_new_with(a, &pool), pool);
    MAKE(tp_batch_new_with(a, &b), b);
    MAKE(tp_batch_events_new_with(a, &events), events);
    for (j = 0; j < 3; j++) {
        MAKE(tp_stream_new_with(a, p, "start", 5, tools, 0, pool, &s[j]), s[j]);
        STEP(tp_batch_set(b, slots[j], s[j]));
    }
    n_ids = token_ids(tc, p, ids, sizeof ids / sizeof *ids);
    for (step = 0; step < n_ids + 6; step++) {
        size_t n = 0;
        for (j = 0; j < 3; j++) {
            size_t at = step - 3 * j; /* stream j starts 3j steps late */
            if (step < 3 * j || at >= n_ids) continue;
            step_slots[n] = slots[j];
            step_ids[n++] = ids[at];
        }
        if (!n) continue;
        STEP(tp_batch_feed(b, v, step_slots, step_ids, n, events, &fault, &failed));
        list = tp_batch_events_list(events, &count, &arena);
        mix_events(d, list, count, arena);
        mix_u64(d, tp_batch_events_arena_length(events));
    }
    for (j = 0; j < 3; j++) {
        STEP(tp_stream_finish(s[j], 0));
        STEP(collect(s[j], d));
    }
done:
    tp_batch_events_free(events);
    tp_batch_free(b);
    for (j = 0; j < 3; j++) tp_stream_free(s[j]);
    tp_pool_free(pool);
    tp_vocab_free(v);
    tp_tools_free(tools);
    tp_program_free(p);
    return st;
}

/* ---------------------------------------------------------------------------------------------
 * The driver. */

static const test_case *current_cases;
static size_t current_n_cases;

/* Runs fn without failures (counting its allocations), then failing each of them in turn. */
static void exercise(const char *what, scenario_fn fn, const test_case *tc) {
    counting c;
    tp_allocator a;
    digest clean = {14695981039346656037ull, 0};
    size_t total, n, nomem = 0, absorbed = 0;
    tp_status st;
    memset(&c, 0, sizeof c);
    a = counting_allocator(&c);
    st = fn(&a, tc, &clean);
    CHECK_EQ(st, TP_OK);
    CHECK_EQ(c.outstanding, 0);
    CHECK_EQ(c.bad, 0);
    total = c.calls;
    CHECK(total > 0);
    for (n = 1; n <= total; n++) {
        digest d = {14695981039346656037ull, 0};
        memset(&c, 0, sizeof c);
        c.fail_at = n;
        a = counting_allocator(&c);
        st = fn(&a, tc, &d);
        if (st != TP_OK && st != TP_ERR_NOMEM)
            fprintf(stderr, "    %s (%s), allocation %lu failing: status %d\n", what, tc->name,
                    (unsigned long)n, (int)st);
        CHECK(st == TP_OK || st == TP_ERR_NOMEM);
        CHECK_EQ(c.failed, 1); /* the run got as far as the allocation to fail */
        CHECK_EQ(c.bad, 0);
        if (c.outstanding != 0)
            fprintf(stderr, "    %s (%s), allocation %lu failing: %ld blocks left\n", what,
                    tc->name, (unsigned long)n, c.outstanding);
        CHECK_EQ(c.outstanding, 0);
        if (st == TP_OK) {
            absorbed++;
            CHECK(d.hash == clean.hash && d.events == clean.events); /* the same events */
        } else {
            nomem++;
        }
    }
    printf("%-8s %-12s %4lu allocations, each failed in turn: %lu runs out of memory, %lu "
           "absorbed (%lu events)\n",
           what, tc->name, (unsigned long)total, (unsigned long)nomem, (unsigned long)absorbed,
           (unsigned long)clean.events);
}

static void each_case(const char *what, scenario_fn fn) {
    size_t k;
    for (k = 0; k < current_n_cases; k++) exercise(what, fn, &current_cases[k]);
}

static void test_trie(void) { exercise("trie", trie_scenario, &current_cases[0]); }
static void test_json(void) { exercise("json", json_scenario, &current_cases[0]); }
static void test_program(void) { each_case("program", program_scenario); }
static void test_tools(void) { each_case("tools", tools_scenario); }
static void test_vocab(void) { each_case("vocab", vocab_scenario); }
static void test_stream(void) { each_case("stream", stream_scenario); }
static void test_pool(void) { each_case("pool", pool_scenario); }
static void test_batch(void) { each_case("batch", batch_scenario); }

/* A bad allocator is an argument error, before anything is allocated. */
static void test_allocator_without_a_function(void) {
    counting c;
    tp_allocator a;
    tp_trie *trie = NULL;
    tp_pool *pool = NULL;
    const uint8_t *marker = (const uint8_t *)"<";
    size_t len = 1;
    memset(&c, 0, sizeof c);
    a = counting_allocator(&c);
    a.realloc = NULL;
    CHECK_EQ(tp_trie_new_with(&a, &marker, &len, 1, &trie, NULL), TP_ERR_ARG);
    CHECK(trie == NULL);
    CHECK_EQ(tp_pool_new_with(&a, &pool), TP_ERR_ARG);
    CHECK_EQ(c.calls, 0);
    CHECK_EQ(tp_trie_new_with(NULL, &marker, &len, 1, &trie, NULL), TP_OK); /* the default */
    tp_trie_free(trie);
}

int main(int argc, char **argv) {
    static const check_test tests[] = {
        CHECK_TEST(test_allocator_without_a_function),
        CHECK_TEST(test_trie),
        CHECK_TEST(test_json),
        CHECK_TEST(test_program),
        CHECK_TEST(test_tools),
        CHECK_TEST(test_vocab),
        CHECK_TEST(test_stream),
        CHECK_TEST(test_pool),
        CHECK_TEST(test_batch),
    };
    static blob program, tools;
    test_case *cases;
    int k, status;
    cases = (test_case *)calloc((size_t)argc, sizeof *cases);
    REQUIRE(cases != NULL);
    builtin_program(&program);
    builtin_tools(&tools);
    cases[0].name = "built-in";
    cases[0].program.data = program.data;
    cases[0].program.len = program.len;
    cases[0].tools.data = tools.data;
    cases[0].tools.len = tools.len;
    cases[0].output.data = (uint8_t *)(uintptr_t)builtin_output;
    cases[0].output.len = sizeof builtin_output - 1;
    cases[0].special_string = S_CALL_OPEN;
    for (k = 1; k < argc; k++) {
        const char *slash = strrchr(argv[k], '/');
        cases[k].name = slash ? slash + 1 : argv[k];
        cases[k].program = read_file(argv[k], ".program");
        cases[k].tools = read_file(argv[k], ".tools");
        cases[k].output = read_file(argv[k], ".output");
        cases[k].special_string = UINT32_MAX;
    }
    current_cases = cases;
    current_n_cases = (size_t)argc;
    status = check_main("test_alloc_failure", tests, sizeof tests / sizeof *tests);
    for (k = 1; k < argc; k++) {
        free(cases[k].program.data);
        free(cases[k].tools.data);
        free(cases[k].output.data);
    }
    free(cases);
    return status;
}
