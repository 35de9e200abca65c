/* test_json.c: the C API of the incremental JSON scanner (csrc/json.h), against the contract
 * in docs/primitives.md: verdicts, end offsets, error offsets and reasons, relaxations, the
 * closing suffix, the depth limit, and independence from how the input is split. */
#include "json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* ---------------------------------------------------------------------------------------------
 * Helpers */

#define NO_END (-1)

static tp_json *new_scanner(tp_json_dialect dialect, uint32_t max_depth) {
    tp_json *s = NULL;
    REQUIRE(tp_json_new(dialect, max_depth, &s) == TP_OK);
    REQUIRE(s != NULL);
    return s;
}

static const char *dialect_name(tp_json_dialect dialect) {
    switch (dialect) {
    case TP_JSON_STRICT:
        return "strict";
    case TP_JSON_LENIENT:
        return "lenient";
    case TP_JSON_PYTHON:
        return "python";
    }
    return "?";
}

static void print_case(tp_json_dialect dialect, const char *text, size_t len) {
    fprintf(stderr, "    (%s) ", dialect_name(dialect));
    check_print_bytes("input ", text, len);
}

/* Everything observable about a scanner, so two ways of feeding can be compared. */
typedef struct outcome {
    tp_json_verdict verdict;
    int finished;
    uint64_t position;
    int64_t end;
    uint32_t depth;
    uint32_t relaxations;
    tp_json_reason reason;
    uint64_t error_offset;
    tp_status closing_status;
    size_t closing_len;
    char closing[512];
} outcome;

static void observe(const tp_json *s, outcome *o) {
    memset(o, 0, sizeof *o);
    o->verdict = tp_json_verdict_of(s);
    o->finished = tp_json_finished(s);
    o->position = tp_json_position(s);
    o->end = tp_json_end(s);
    o->depth = tp_json_depth(s);
    o->relaxations = tp_json_relaxations(s);
    o->error_offset = 0;
    o->reason = tp_json_error(s, &o->error_offset);
    if (o->reason == TP_JSON_OK) o->error_offset = 0;
    o->closing_len = 0;
    o->closing_status = tp_json_closing(s, o->closing, sizeof o->closing, &o->closing_len);
    if (o->closing_status != TP_OK) o->closing_len = 0;
}

static int same_outcome(const outcome *a, const outcome *b) {
    return a->verdict == b->verdict && a->finished == b->finished && a->position == b->position &&
           a->end == b->end && a->depth == b->depth && a->relaxations == b->relaxations &&
           a->reason == b->reason && a->error_offset == b->error_offset &&
           a->closing_status == b->closing_status && a->closing_len == b->closing_len &&
           memcmp(a->closing, b->closing, a->closing_len) == 0;
}

static void print_outcome(const char *label, const outcome *o) {
    fprintf(stderr,
            "    %s: verdict %d finished %d position %llu end %lld depth %lu relax %lu "
            "error %s@%llu closing status %d ",
            label, (int)o->verdict, o->finished, (unsigned long long)o->position, (long long)o->end,
            (unsigned long)o->depth, (unsigned long)o->relaxations,
            o->reason == TP_JSON_OK ? "none" : tp_json_reason_name(o->reason),
            (unsigned long long)o->error_offset, (int)o->closing_status);
    check_print_bytes("", o->closing, o->closing_len);
}

#define CHECK_SAME_OUTCOME(actual, expected, what)  \
    do {                                            \
        check_count++;                              \
        if (!same_outcome((actual), (expected))) {  \
            check_report(__FILE__, __LINE__, what); \
            print_outcome("actual  ", (actual));    \
            print_outcome("expected", (expected));  \
        }                                           \
    } while (0)

/* Feeds text in chunks of chunk bytes (0: all at once) and checks the consumption contract:
 * while the verdict is need_more a feed takes everything; once it is not, later feeds take
 * nothing and repeat it.  Returns the last verdict. */
static tp_json_verdict feed_chunked(tp_json *s, const char *text, size_t len, size_t chunk) {
    tp_json_verdict verdict = tp_json_verdict_of(s);
    size_t done = 0;
    if (chunk == 0) chunk = len ? len : 1;
    while (done < len) {
        size_t n = len - done < chunk ? len - done : chunk;
        size_t consumed = (size_t)-1;
        tp_json_verdict before = verdict;
        uint64_t position = tp_json_position(s);
        verdict = tp_json_feed(s, (const uint8_t *)text + done, n, &consumed);
        CHECK(consumed <= n);
        CHECK_EQ(tp_json_position(s) - position, consumed);
        CHECK_EQ(tp_json_verdict_of(s), verdict);
        if (verdict == TP_JSON_NEED_MORE) CHECK_EQ(consumed, n);
        if (before != TP_JSON_NEED_MORE) {
            CHECK_EQ(verdict, before);
            CHECK_EQ(consumed, 0);
        }
        done += n;
    }
    return verdict;
}

/* The outcome of feeding text in chunks to a fresh scanner (then finishing, if asked). */
static void run(tp_json_dialect dialect, uint32_t max_depth, const char *text, size_t len,
                size_t chunk, int finish, outcome *o) {
    tp_json *s = new_scanner(dialect, max_depth);
    feed_chunked(s, text, len, chunk);
    if (finish) {
        tp_json_verdict verdict = tp_json_finish(s);
        CHECK_EQ(verdict, tp_json_verdict_of(s));
        CHECK(tp_json_finished(s));
        CHECK_EQ(tp_json_finish(s), verdict); /* idempotent */
    }
    observe(s, o);
    tp_json_free(s);
}

/* ---------------------------------------------------------------------------------------------
 * Tests */

static void test_create(void) {
    tp_json *s = NULL;
    CHECK_EQ(tp_json_new(TP_JSON_STRICT, 0, &s), TP_ERR_ARG);
    CHECK(s == NULL);
    CHECK_EQ(tp_json_new(TP_JSON_STRICT, TP_JSON_MAX_DEPTH_CEILING + 1, &s), TP_ERR_ARG);
    CHECK(s == NULL);
    CHECK_EQ(tp_json_new((tp_json_dialect)3, 16, &s), TP_ERR_ARG);
    CHECK(s == NULL);
    CHECK_EQ(tp_json_new((tp_json_dialect)-1, 16, &s), TP_ERR_ARG);
    CHECK(s == NULL);

    s = new_scanner(TP_JSON_PYTHON, 1);
    tp_json_free(s);
    s = new_scanner(TP_JSON_LENIENT, TP_JSON_DEFAULT_MAX_DEPTH);
    CHECK_EQ(tp_json_verdict_of(s), TP_JSON_NEED_MORE);
    CHECK(!tp_json_finished(s));
    CHECK_EQ(tp_json_position(s), 0);
    CHECK_EQ(tp_json_end(s), NO_END);
    CHECK_EQ(tp_json_depth(s), 0);
    CHECK_EQ(tp_json_relaxations(s), 0);
    CHECK_EQ(tp_json_error(s, NULL), TP_JSON_OK);
    tp_json_free(s);
    tp_json_free(NULL);
}

static void test_names(void) {
    static const char *const reasons[] = {
        "limit",        "unexpected_byte", "trailing_comma", "invalid_literal",   "invalid_number",
        "leading_zero", "invalid_escape",  "lone_surrogate", "control_character", "invalid_utf8",
    };
    static const char *const relaxations[] = {
        "trailing_comma",    "single_quote",   "unquoted_key",  "python_literal",
        "control_character", "lone_surrogate", "missing_comma",
    };
    unsigned i;
    CHECK_EQ(sizeof reasons / sizeof *reasons, TP_JSON_E_INVALID_UTF8);
    for (i = 0; i < sizeof reasons / sizeof *reasons; i++)
        CHECK_STR(tp_json_reason_name((tp_json_reason)(i + 1)), reasons[i]);
    CHECK_EQ(sizeof relaxations / sizeof *relaxations, TP_JSON_RELAXATION_COUNT);
    for (i = 0; i < TP_JSON_RELAXATION_COUNT; i++)
        CHECK_STR(tp_json_relaxation_name(i), relaxations[i]);
    CHECK(tp_json_relaxation_name(TP_JSON_RELAXATION_COUNT) == NULL);
    CHECK(tp_json_relaxation_name(31) == NULL);
    CHECK_EQ(TP_JSON_R_TRAILING_COMMA, 1u << 0);
    CHECK_EQ(TP_JSON_R_LONE_SURROGATE, 1u << 5);
    CHECK_EQ(TP_JSON_R_MISSING_COMMA, 1u << 6);
}

static void test_documented_example(void) {
    tp_json *s = new_scanner(TP_JSON_STRICT, 512);
    char closing[16];
    size_t len = 0, consumed = 0;

    CHECK_EQ(tp_json_feed(s, (const uint8_t *)"{\"a\": [1, \"x", 12, &consumed), TP_JSON_NEED_MORE);
    CHECK_EQ(consumed, 12);
    CHECK_EQ(tp_json_depth(s), 2);
    CHECK_EQ(tp_json_closing(s, closing, sizeof closing, &len), TP_OK);
    CHECK_BYTES(closing, len, "\"]}", 3);
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)"\"]} tail", 8, &consumed), TP_JSON_COMPLETE);
    CHECK_EQ(consumed, 3);
    CHECK_EQ(tp_json_end(s), 15);
    CHECK_EQ(tp_json_position(s), 15);
    CHECK_EQ(tp_json_depth(s), 0);
    CHECK_EQ(tp_json_closing(s, closing, sizeof closing, &len), TP_OK);
    CHECK_EQ(len, 0);
    /* Complete: later feeds take nothing. */
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)" tail", 5, &consumed), TP_JSON_COMPLETE);
    CHECK_EQ(consumed, 0);
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)"x", 1, NULL), TP_JSON_COMPLETE);
    CHECK(!tp_json_finished(s));
    CHECK_EQ(tp_json_finish(s), TP_JSON_COMPLETE);
    CHECK(tp_json_finished(s));
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)"1", 1, &consumed), TP_JSON_COMPLETE);
    CHECK_EQ(consumed, 0);
    CHECK_EQ(tp_json_end(s), 15);
    CHECK_EQ(tp_json_position(s), 15);
    tp_json_free(s);
}

typedef struct complete_case {
    tp_json_dialect dialect;
    const char *value;
    int is_number; /* complete only once a following byte or finish() arrives */
    uint32_t relaxations;
} complete_case;

static const complete_case complete_cases[] = {
    {TP_JSON_STRICT, "true", 0, 0},
    {TP_JSON_STRICT, "false", 0, 0},
    {TP_JSON_STRICT, "null", 0, 0},
    {TP_JSON_STRICT, "0", 1, 0},
    {TP_JSON_STRICT, "-0", 1, 0},
    {TP_JSON_STRICT, "123", 1, 0},
    {TP_JSON_STRICT, "-12.5e+3", 1, 0},
    {TP_JSON_STRICT, "1E5", 1, 0},
    {TP_JSON_STRICT, "0.0", 1, 0},
    {TP_JSON_STRICT, "1e-0", 1, 0},
    {TP_JSON_STRICT, "\"\"", 0, 0},
    {TP_JSON_STRICT, "\"abc\"", 0, 0},
    {TP_JSON_STRICT, "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE00\\u0000\"", 0, 0},
    {TP_JSON_STRICT, "\"h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf \x7f\"", 0, 0},
    {TP_JSON_STRICT, "\"\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xf0\x90\x80\x80\"", 0, 0},
    {TP_JSON_STRICT,
     "\"\\uD7FF\\uE000\\uFFFF\\uDBFF\\uDFFF\\uD800\\uDC00\\u0123\\u4567\\u89ab\\ucdef\\uABCD"
     "\\uEF09\\u00Af\"",
     0, 0},
    {TP_JSON_STRICT,
     "\"\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf\xf0\x90\x80\x80\xf1\x80\x80\x80"
     "\xf3\xbf\xbf\xbf\xf4\x8f\xbf\xbf\xed\x9f\xbf\xee\x80\x80\xec\xbf\xbf\xe1\x80\x80\"",
     0, 0},
    {TP_JSON_STRICT, "9", 1, 0},
    {TP_JSON_STRICT, "[9, 19, 90.9e9, -9, 1.09E+19]", 0, 0},
    {TP_JSON_STRICT, "[]", 0, 0},
    {TP_JSON_STRICT, "{}", 0, 0},
    {TP_JSON_STRICT, "  \t\r\n[ 1 , [ ] , { } ]", 0, 0},
    {TP_JSON_STRICT, "{\"a\":{\"b\":[true,false,null,-1,\"x\"]},\"\":0}", 0, 0},
    {TP_JSON_STRICT, "[0,1e-0,2.5E+9,-0.25]", 0, 0},
    {TP_JSON_STRICT, "{ \"k\" : \"v\" , \"n\" : [ 1 ] }", 0, 0},
    {TP_JSON_LENIENT, "{\"a\": [1, \"x\"]}", 0, 0},
    {TP_JSON_LENIENT, "[1,2,]", 0, TP_JSON_R_TRAILING_COMMA},
    {TP_JSON_LENIENT, "{\"a\":1,}", 0, TP_JSON_R_TRAILING_COMMA},
    {TP_JSON_LENIENT, "'it\\'s \"q\"'", 0, TP_JSON_R_SINGLE_QUOTE},
    {TP_JSON_LENIENT, "{key_1$: 1, _: 2, $a: 3}", 0, TP_JSON_R_UNQUOTED_KEY},
    {TP_JSON_LENIENT, "[True, False, None]", 0, TP_JSON_R_PYTHON_LITERAL},
    {TP_JSON_LENIENT, "None", 0, TP_JSON_R_PYTHON_LITERAL},
    {TP_JSON_LENIENT, "\"a\tb\nc\x01\"", 0, TP_JSON_R_CONTROL_CHARACTER},
    {TP_JSON_LENIENT, "\"\\ud800\"", 0, TP_JSON_R_LONE_SURROGATE},
    {TP_JSON_LENIENT, "\"\\udc00x\"", 0, TP_JSON_R_LONE_SURROGATE},
    {TP_JSON_LENIENT, "\"\\uDFFF\"", 0, TP_JSON_R_LONE_SURROGATE},
    {TP_JSON_LENIENT, "\"\\uDBFF\"", 0, TP_JSON_R_LONE_SURROGATE},
    {TP_JSON_LENIENT, "\"\\uD7FF\\uE000\\uDBFF\\uDFFF\"", 0, 0},
    {TP_JSON_LENIENT, "{'a': None, b: [1,],}", 0,
     TP_JSON_R_TRAILING_COMMA | TP_JSON_R_SINGLE_QUOTE | TP_JSON_R_UNQUOTED_KEY |
         TP_JSON_R_PYTHON_LITERAL},
    {TP_JSON_LENIENT, "12", 1, 0},
    {TP_JSON_PYTHON, "{'a': (1, 2,), \"b\": None, 'c': [True, False,],}", 0, 0},
    {TP_JSON_PYTHON, "()", 0, 0},
    {TP_JSON_PYTHON, "(1,)", 0, 0},
    {TP_JSON_PYTHON, "'\\a\\b\\f\\n\\r\\t\\v\\0\\101\\x41\\u0041\\U00000041\\q\\N\\\\\\'\\\"'", 0,
     0},
    {TP_JSON_PYTHON, "\"a\\\nb\"", 0, 0},
    {TP_JSON_PYTHON, "'tab\there\x01'", 0, 0},
    {TP_JSON_PYTHON, "'\xc3\xa9\xf0\x9f\x98\x80'", 0, 0},
    {TP_JSON_PYTHON, "'\\ud800'", 0, TP_JSON_R_LONE_SURROGATE},
    {TP_JSON_PYTHON, "'\\U0000DFFF'", 0, TP_JSON_R_LONE_SURROGATE},
    {TP_JSON_PYTHON, "'\\U0000D800'", 0, TP_JSON_R_LONE_SURROGATE},
    {TP_JSON_PYTHON, "'\\U0000D7FF'", 0, 0},
    {TP_JSON_PYTHON, "'\\U0010FFFF\\U0001F600\\U0000E000\\x7f\\xFf\\uD7FF'", 0, 0},
    {TP_JSON_PYTHON, "-1.5e3", 1, 0},
    {TP_JSON_PYTHON, "[-1.5e3, 0]", 0, 0},
};

static void test_complete_values(void) {
    size_t i;
    for (i = 0; i < sizeof complete_cases / sizeof *complete_cases; i++) {
        const complete_case *c = &complete_cases[i];
        size_t len = strlen(c->value), consumed = 0, before = check_failures;
        char with_tail[256];
        tp_json *s = new_scanner(c->dialect, 64);

        /* The value alone: a number still waits; anything else is complete. */
        CHECK_EQ(tp_json_feed(s, (const uint8_t *)c->value, len, &consumed),
                 c->is_number ? TP_JSON_NEED_MORE : TP_JSON_COMPLETE);
        CHECK_EQ(consumed, len);
        CHECK_EQ(tp_json_end(s), c->is_number ? NO_END : (int64_t)len);
        {
            char closing[8];
            size_t closing_len = 99;
            CHECK_EQ(tp_json_closing(s, closing, sizeof closing, &closing_len), TP_OK);
            CHECK_EQ(closing_len, 0);
        }
        CHECK_EQ(tp_json_finish(s), TP_JSON_COMPLETE);
        CHECK_EQ(tp_json_end(s), len);
        CHECK_EQ(tp_json_position(s), len);
        CHECK_EQ(tp_json_depth(s), 0);
        CHECK_EQ(tp_json_relaxations(s), c->relaxations);
        CHECK_EQ(tp_json_error(s, NULL), TP_JSON_OK);

        /* With bytes after it: they are not consumed, the value ends where it ends. */
        tp_json_reset(s);
        REQUIRE(len + 3 < sizeof with_tail);
        memcpy(with_tail, c->value, len);
        memcpy(with_tail + len, " x", 3);
        CHECK_EQ(tp_json_feed(s, (const uint8_t *)with_tail, len + 2, &consumed), TP_JSON_COMPLETE);
        CHECK_EQ(consumed, len);
        CHECK_EQ(tp_json_end(s), len);
        CHECK_EQ(tp_json_position(s), len);
        CHECK_EQ(tp_json_relaxations(s), c->relaxations);
        CHECK(!tp_json_finished(s));
        CHECK_EQ(tp_json_finish(s), TP_JSON_COMPLETE);
        if (check_failures != before) print_case(c->dialect, c->value, len);
        tp_json_free(s);
    }
}

static void test_numbers_end_at_any_byte_at_top_level(void) {
    static const struct {
        const char *text;
        int64_t end;
    } cases[] = {{"123abc", 3}, {"0]", 1}, {"-0,", 2}, {"1e5x", 3}, {"2.5\"", 3}, {"7[", 1}};
    size_t i;
    for (i = 0; i < sizeof cases / sizeof *cases; i++) {
        tp_json *s = new_scanner(TP_JSON_STRICT, 8);
        size_t consumed = 0, before = check_failures;
        CHECK_EQ(tp_json_feed(s, (const uint8_t *)cases[i].text, strlen(cases[i].text), &consumed),
                 TP_JSON_COMPLETE);
        CHECK_EQ(tp_json_end(s), cases[i].end);
        CHECK_EQ(consumed, (size_t)cases[i].end);
        if (check_failures != before)
            print_case(TP_JSON_STRICT, cases[i].text, strlen(cases[i].text));
        tp_json_free(s);
    }
}

static void test_incomplete(void) {
    static const char *const texts[] = {
        "",        "   ",      "[",     "[1",   "[1,",     "{",         "{\"a\"",
        "{\"a\":", "{\"a\":1", "\"abc", "\"\\", "\"\\u12", "\"\\ud83d", "\"\xc3",
        "tru",     "-",        "1.",    "1e",   "1e+",     "[{\"a\":[",
    };
    size_t i;
    for (i = 0; i < sizeof texts / sizeof *texts; i++) {
        tp_json *s = new_scanner(TP_JSON_STRICT, 8);
        size_t len = strlen(texts[i]), consumed = 99, before = check_failures;
        if (len > 0) {
            CHECK_EQ(tp_json_feed(s, (const uint8_t *)texts[i], len, &consumed), TP_JSON_NEED_MORE);
            CHECK_EQ(consumed, len);
        }
        CHECK_EQ(tp_json_finish(s), TP_JSON_INCOMPLETE);
        CHECK_EQ(tp_json_verdict_of(s), TP_JSON_INCOMPLETE);
        CHECK_EQ(tp_json_end(s), NO_END);
        CHECK_EQ(tp_json_error(s, NULL), TP_JSON_OK);
        CHECK_EQ(tp_json_finish(s), TP_JSON_INCOMPLETE);
        /* After finish a feed takes nothing and repeats the final verdict. */
        CHECK_EQ(tp_json_feed(s, (const uint8_t *)"]", 1, &consumed), TP_JSON_INCOMPLETE);
        CHECK_EQ(consumed, 0);
        CHECK_EQ(tp_json_position(s), len);
        if (check_failures != before) print_case(TP_JSON_STRICT, texts[i], len);
        tp_json_free(s);
    }
}

typedef struct error_case {
    tp_json_dialect dialect;
    const char *text;
    tp_json_reason reason;
    int64_t offset; /* -1: the offset is not pinned down by the specification */
} error_case;

static const error_case error_cases[] = {
    {TP_JSON_STRICT, "[1,]", TP_JSON_E_TRAILING_COMMA, 3},
    {TP_JSON_STRICT, "{\"a\":1,}", TP_JSON_E_TRAILING_COMMA, 7},
    {TP_JSON_STRICT, "[1, ]", TP_JSON_E_TRAILING_COMMA, 4},
    {TP_JSON_STRICT, "[1 2]", TP_JSON_E_UNEXPECTED_BYTE, 3},
    {TP_JSON_STRICT, "[,1]", TP_JSON_E_UNEXPECTED_BYTE, 1},
    {TP_JSON_STRICT, "[1,,2]", TP_JSON_E_UNEXPECTED_BYTE, 3},
    {TP_JSON_STRICT, "{\"a\" 1}", TP_JSON_E_UNEXPECTED_BYTE, 5},
    {TP_JSON_STRICT, "{1:2}", TP_JSON_E_UNEXPECTED_BYTE, 1},
    {TP_JSON_STRICT, "{\"a\":1]", TP_JSON_E_UNEXPECTED_BYTE, 6},
    {TP_JSON_STRICT, "[1}", TP_JSON_E_UNEXPECTED_BYTE, 2},
    {TP_JSON_STRICT, "]", TP_JSON_E_UNEXPECTED_BYTE, 0},
    {TP_JSON_STRICT, "  }", TP_JSON_E_UNEXPECTED_BYTE, 2},
    {TP_JSON_STRICT, "True", TP_JSON_E_UNEXPECTED_BYTE, 0},
    {TP_JSON_STRICT, "'a'", TP_JSON_E_UNEXPECTED_BYTE, 0},
    {TP_JSON_STRICT, "{a:1}", TP_JSON_E_UNEXPECTED_BYTE, 1},
    {TP_JSON_STRICT, "(1)", TP_JSON_E_UNEXPECTED_BYTE, 0},
    {TP_JSON_STRICT, "\xc3\xa9", TP_JSON_E_UNEXPECTED_BYTE, 0},
    {TP_JSON_STRICT, "[1,\xef\xbb\xbf", TP_JSON_E_UNEXPECTED_BYTE, 3},
    {TP_JSON_STRICT, "[1x", TP_JSON_E_UNEXPECTED_BYTE, 2},
    {TP_JSON_STRICT, "[\"a\"\"b\"]", TP_JSON_E_UNEXPECTED_BYTE, 4},
    {TP_JSON_STRICT, "trux", TP_JSON_E_INVALID_LITERAL, 3},
    {TP_JSON_STRICT, "nul!", TP_JSON_E_INVALID_LITERAL, 3},
    {TP_JSON_STRICT, "falsE", TP_JSON_E_INVALID_LITERAL, 4},
    {TP_JSON_STRICT, "[tr]", TP_JSON_E_INVALID_LITERAL, 3},
    {TP_JSON_STRICT, "-x", TP_JSON_E_INVALID_NUMBER, 1},
    {TP_JSON_STRICT, "[-9.]", TP_JSON_E_INVALID_NUMBER, 4},
    {TP_JSON_STRICT, "[9x", TP_JSON_E_UNEXPECTED_BYTE, 2},
    {TP_JSON_STRICT, "[-]", TP_JSON_E_INVALID_NUMBER, 2},
    {TP_JSON_STRICT, "1.x", TP_JSON_E_INVALID_NUMBER, 2},
    {TP_JSON_STRICT, "[1.]", TP_JSON_E_INVALID_NUMBER, 3},
    {TP_JSON_STRICT, "1e]", TP_JSON_E_INVALID_NUMBER, 2},
    {TP_JSON_STRICT, "1E+x", TP_JSON_E_INVALID_NUMBER, 3},
    {TP_JSON_STRICT, "1.e5", TP_JSON_E_INVALID_NUMBER, 2},
    {TP_JSON_STRICT, "-.5", TP_JSON_E_INVALID_NUMBER, 1},
    {TP_JSON_STRICT, "01", TP_JSON_E_LEADING_ZERO, 1},
    {TP_JSON_STRICT, "-01", TP_JSON_E_LEADING_ZERO, 2},
    {TP_JSON_STRICT, "[00]", TP_JSON_E_LEADING_ZERO, 2},
    {TP_JSON_STRICT, "\"\\q\"", TP_JSON_E_INVALID_ESCAPE, 2},
    {TP_JSON_STRICT, "\"\\u12g4\"", TP_JSON_E_INVALID_ESCAPE, 5},
    {TP_JSON_STRICT, "\"\\x41\"", TP_JSON_E_INVALID_ESCAPE, 2},
    {TP_JSON_STRICT, "\"\\'\"", TP_JSON_E_INVALID_ESCAPE, 2},
    {TP_JSON_STRICT, "\"\\U00000041\"", TP_JSON_E_INVALID_ESCAPE, 2},
    {TP_JSON_STRICT, "\"\\ud83dx\"", TP_JSON_E_LONE_SURROGATE, 7},
    {TP_JSON_STRICT, "\"\\ud83d\"", TP_JSON_E_LONE_SURROGATE, 7},
    {TP_JSON_STRICT, "\"\\ud83d\\n\"", TP_JSON_E_LONE_SURROGATE, -1},
    {TP_JSON_STRICT, "\"\\udc00\"", TP_JSON_E_LONE_SURROGATE, -1},
    {TP_JSON_STRICT, "\"\\ud83d\\u0041\"", TP_JSON_E_LONE_SURROGATE, -1},
    {TP_JSON_STRICT, "\"\\ud83d\\ud83d\"", TP_JSON_E_LONE_SURROGATE, -1},
    {TP_JSON_STRICT, "\"\\uDBFF\"", TP_JSON_E_LONE_SURROGATE, 7},
    {TP_JSON_STRICT, "\"\\uDFFF\"", TP_JSON_E_LONE_SURROGATE, -1},
    {TP_JSON_STRICT, "\"\\u00fg\"", TP_JSON_E_INVALID_ESCAPE, 6},
    {TP_JSON_STRICT, "\"\\u00F:\"", TP_JSON_E_INVALID_ESCAPE, 6},
    {TP_JSON_STRICT, "\"\\u00F@\"", TP_JSON_E_INVALID_ESCAPE, 6},
    {TP_JSON_STRICT, "\"a\nb\"", TP_JSON_E_CONTROL_CHARACTER, 2},
    {TP_JSON_STRICT, "\"\x01\"", TP_JSON_E_CONTROL_CHARACTER, 1},
    {TP_JSON_STRICT, "[\"\x1f\"]", TP_JSON_E_CONTROL_CHARACTER, 2},
    {TP_JSON_STRICT, "\"\t\"", TP_JSON_E_CONTROL_CHARACTER, 1},
    {TP_JSON_STRICT, "\"\xc0\x80\"", TP_JSON_E_INVALID_UTF8, 1},
    {TP_JSON_STRICT, "\"\xc1\xbf\"", TP_JSON_E_INVALID_UTF8, 1},
    {TP_JSON_STRICT, "\"\xe0\x80\x80\"", TP_JSON_E_INVALID_UTF8, 2},
    {TP_JSON_STRICT, "\"\xe0\x9f\xbf\"", TP_JSON_E_INVALID_UTF8, 2},
    {TP_JSON_STRICT, "\"\xed\xa0\x80\"", TP_JSON_E_INVALID_UTF8, 2},
    {TP_JSON_STRICT, "\"\xf0\x8f\xbf\xbf\"", TP_JSON_E_INVALID_UTF8, 2},
    {TP_JSON_STRICT, "\"\xf4\x90\x80\x80\"", TP_JSON_E_INVALID_UTF8, 2},
    {TP_JSON_STRICT, "\"\xf5\x80\x80\x80\"", TP_JSON_E_INVALID_UTF8, 1},
    {TP_JSON_STRICT, "\"\xff\"", TP_JSON_E_INVALID_UTF8, 1},
    {TP_JSON_STRICT, "\"\xc3\xa9\x80\"", TP_JSON_E_INVALID_UTF8, 3},
    {TP_JSON_STRICT, "\"\xdf\xc0\"", TP_JSON_E_INVALID_UTF8, 2},
    {TP_JSON_STRICT, "\"\xf3\xc0\"", TP_JSON_E_INVALID_UTF8, 2},
    {TP_JSON_STRICT, "\"\xef\xbf\x7f\"", TP_JSON_E_INVALID_UTF8, 3},
    {TP_JSON_STRICT, "\"\xf1\x80\x80\xc0\"", TP_JSON_E_INVALID_UTF8, 4},
    {TP_JSON_STRICT, "\"\x80\"", TP_JSON_E_INVALID_UTF8, 1},
    {TP_JSON_STRICT, "\"\xc3(\"", TP_JSON_E_INVALID_UTF8, 2},
    {TP_JSON_STRICT, "\"\xe2\x82\"", TP_JSON_E_INVALID_UTF8, 3},
    {TP_JSON_STRICT, "\"\xf0\x9f\x98\xc3\xa9\"", TP_JSON_E_INVALID_UTF8, 4},
    {TP_JSON_STRICT, "[[[", TP_JSON_E_LIMIT, 2},
    {TP_JSON_STRICT, "{\"a\":{\"b\":{", TP_JSON_E_LIMIT, 10},
    {TP_JSON_LENIENT, "[1,,]", TP_JSON_E_UNEXPECTED_BYTE, 3},
    {TP_JSON_LENIENT, "[,]", TP_JSON_E_UNEXPECTED_BYTE, 1},
    {TP_JSON_LENIENT, "{\"a\":1,]", TP_JSON_E_UNEXPECTED_BYTE, 7},
    {TP_JSON_LENIENT, "[1,}", TP_JSON_E_UNEXPECTED_BYTE, 3},
    {TP_JSON_LENIENT, "{,}", TP_JSON_E_UNEXPECTED_BYTE, 1},
    {TP_JSON_LENIENT, "{1a:2}", TP_JSON_E_UNEXPECTED_BYTE, 1},
    {TP_JSON_LENIENT, "{a b:2}", TP_JSON_E_UNEXPECTED_BYTE, 3},
    {TP_JSON_LENIENT, "[a]", TP_JSON_E_UNEXPECTED_BYTE, 1},
    {TP_JSON_LENIENT, "Tru!", TP_JSON_E_INVALID_LITERAL, 3},
    {TP_JSON_LENIENT, "Nonx", TP_JSON_E_INVALID_LITERAL, 3},
    {TP_JSON_LENIENT, "\"\\q\"", TP_JSON_E_INVALID_ESCAPE, 2},
    {TP_JSON_LENIENT, "'\\q'", TP_JSON_E_INVALID_ESCAPE, 2},
    {TP_JSON_LENIENT, "\"\xc3(\"", TP_JSON_E_INVALID_UTF8, 2},
    {TP_JSON_LENIENT, "01", TP_JSON_E_LEADING_ZERO, 1},
    {TP_JSON_LENIENT, "[[[", TP_JSON_E_LIMIT, 2},
    {TP_JSON_PYTHON, "'a\nb'", TP_JSON_E_CONTROL_CHARACTER, 2},
    {TP_JSON_PYTHON, "\"a\rb\"", TP_JSON_E_CONTROL_CHARACTER, 2},
    {TP_JSON_PYTHON, "'\\x4g'", TP_JSON_E_INVALID_ESCAPE, 4},
    {TP_JSON_PYTHON, "'\\u12g4'", TP_JSON_E_INVALID_ESCAPE, 5},
    {TP_JSON_PYTHON, "'\\U0000004g'", TP_JSON_E_INVALID_ESCAPE, 10},
    {TP_JSON_PYTHON, "'\\U00110000'", TP_JSON_E_INVALID_ESCAPE, -1},
    {TP_JSON_PYTHON, "{a: 1}", TP_JSON_E_UNEXPECTED_BYTE, 1},
    {TP_JSON_PYTHON, "[1,,]", TP_JSON_E_UNEXPECTED_BYTE, 3},
    {TP_JSON_PYTHON, "(1]", TP_JSON_E_UNEXPECTED_BYTE, 2},
    {TP_JSON_PYTHON, "(1,]", TP_JSON_E_UNEXPECTED_BYTE, 3},
    {TP_JSON_PYTHON, "[1)", TP_JSON_E_UNEXPECTED_BYTE, 2},
    {TP_JSON_PYTHON, "Nul", TP_JSON_E_INVALID_LITERAL, 1},
    {TP_JSON_PYTHON, "'\xc3('", TP_JSON_E_INVALID_UTF8, 2},
    {TP_JSON_PYTHON, "01", TP_JSON_E_LEADING_ZERO, 1},
    {TP_JSON_PYTHON, "((", TP_JSON_E_LIMIT, 1},
};

static void test_errors(void) {
    size_t i;
    for (i = 0; i < sizeof error_cases / sizeof *error_cases; i++) {
        const error_case *c = &error_cases[i];
        size_t len = strlen(c->text), consumed = 0, before = check_failures;
        uint32_t max_depth = c->reason == TP_JSON_E_LIMIT ? 2 - (c->dialect == TP_JSON_PYTHON) : 64;
        tp_json *s = new_scanner(c->dialect, max_depth);
        uint64_t offset = 0;
        tp_json_reason reason;
        char closing[8];
        size_t closing_len = 0;

        CHECK_EQ(tp_json_feed(s, (const uint8_t *)c->text, len, &consumed), TP_JSON_ERROR);
        reason = tp_json_error(s, &offset);
        CHECK_STR(tp_json_reason_name(reason), tp_json_reason_name(c->reason));
        if (c->offset >= 0) CHECK_EQ(offset, c->offset);
        CHECK(offset < len);
        CHECK_EQ(tp_json_end(s), NO_END);
        CHECK_EQ(tp_json_closing(s, closing, sizeof closing, &closing_len), TP_ERR_STATE);
        /* An error is final: later feeds take nothing, finish() keeps it. */
        CHECK_EQ(tp_json_feed(s, (const uint8_t *)"]", 1, &consumed), TP_JSON_ERROR);
        CHECK_EQ(consumed, 0);
        CHECK_EQ(tp_json_finish(s), TP_JSON_ERROR);
        CHECK_EQ(tp_json_error(s, NULL), c->reason);
        if (check_failures != before) print_case(c->dialect, c->text, len);
        tp_json_free(s);
    }
}

static void test_nul_bytes(void) {
    tp_json *s = new_scanner(TP_JSON_STRICT, 8);
    uint64_t offset = 0;
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)"\"a\0\"", 4, NULL), TP_JSON_ERROR);
    CHECK_EQ(tp_json_error(s, &offset), TP_JSON_E_CONTROL_CHARACTER);
    CHECK_EQ(offset, 2);
    tp_json_reset(s);
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)"[\0]", 3, NULL), TP_JSON_ERROR);
    CHECK_EQ(tp_json_error(s, &offset), TP_JSON_E_UNEXPECTED_BYTE);
    CHECK_EQ(offset, 1);
    tp_json_free(s);
    s = new_scanner(TP_JSON_PYTHON, 8);
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)"'a\0'", 4, NULL), TP_JSON_COMPLETE);
    CHECK_EQ(tp_json_end(s), 4);
    tp_json_free(s);
}

typedef struct closing_case {
    tp_json_dialect dialect;
    const char *text;
    const char *closing;
} closing_case;

static const closing_case closing_cases[] = {
    {TP_JSON_STRICT, "", "0"},
    {TP_JSON_STRICT, "  \n", "0"},
    {TP_JSON_STRICT, "[", "]"},
    {TP_JSON_STRICT, "[1", "]"},
    {TP_JSON_STRICT, "[1,", "0]"},
    {TP_JSON_STRICT, "[1, ", "0]"},
    {TP_JSON_STRICT, "[1.", "0]"},
    {TP_JSON_STRICT, "[1.5e", "0]"},
    {TP_JSON_STRICT, "[1.5e-", "0]"},
    {TP_JSON_STRICT, "[-", "0]"},
    {TP_JSON_STRICT, "-", "0"},
    {TP_JSON_STRICT, "1", ""},
    {TP_JSON_STRICT, "{", "}"},
    {TP_JSON_STRICT, "{\"", "\":0}"},
    {TP_JSON_STRICT, "{\"ab", "\":0}"},
    {TP_JSON_STRICT, "{\"a\"", ":0}"},
    {TP_JSON_STRICT, "{\"a\" ", ":0}"},
    {TP_JSON_STRICT, "{\"a\":", "0}"},
    {TP_JSON_STRICT, "{\"a\": 1", "}"},
    {TP_JSON_STRICT, "{\"a\": 1,", "\"\":0}"},
    {TP_JSON_STRICT, "{\"a\": 1, \"b\": [tr", "ue]}"},
    {TP_JSON_STRICT, "nul", "l"},
    {TP_JSON_STRICT, "f", "alse"},
    {TP_JSON_STRICT, "\"", "\""},
    {TP_JSON_STRICT, "\"ab\\", "\\\""},
    {TP_JSON_STRICT, "\"\\u", "0000\""},
    {TP_JSON_STRICT, "\"\\u00e", "0\""},
    {TP_JSON_STRICT, "\"\\uD", "000\""},
    {TP_JSON_STRICT, "\"\\ud83d", "\\udc00\""},
    {TP_JSON_STRICT, "\"\\ud83d\\udc", "00\""},
    {TP_JSON_STRICT, "\"\xc3", "\x80\""},
    {TP_JSON_STRICT, "\"\xe0", "\xa0\x80\""},
    {TP_JSON_STRICT, "\"\xed", "\x80\x80\""},
    {TP_JSON_STRICT, "\"\xf0", "\x90\x80\x80\""},
    {TP_JSON_STRICT, "\"\xf4", "\x80\x80\x80\""},
    {TP_JSON_STRICT, "\"\xf0\x9f", "\x80\x80\""},
    {TP_JSON_STRICT, "\"\xe2\x82", "\x80\""},
    {TP_JSON_STRICT, "\"\\ud83d\\", "udc00\""},
    {TP_JSON_STRICT, "\"\\ud83d\\u", "dc00\""},
    {TP_JSON_STRICT, "\"\\ud83d\\ud", "c00\""},
    {TP_JSON_STRICT, "\"\\ud83d\\udd", "00\""},
    {TP_JSON_STRICT, "\"\\uDB", "00\\udc00\""},
    {TP_JSON_STRICT, "\"\\uDBFF", "\\udc00\""},
    {TP_JSON_STRICT, "\"\\uE", "000\""},
    {TP_JSON_STRICT, "\"\\uD8", "00\\udc00\""},
    {TP_JSON_STRICT, "\"\\uD7", "00\""},
    {TP_JSON_STRICT, "{\"a\\", "\\\":0}"},
    {TP_JSON_STRICT, "[[{\"a\":[", "]}]]"},
    {TP_JSON_STRICT, "[[{\"a\":[\"\\", "\\\"]}]]"},
    {TP_JSON_STRICT, "[1]", ""},
    {TP_JSON_STRICT, "{\"a\":\"b\"}  x", ""},
    {TP_JSON_LENIENT, "{'a", "':0}"},
    {TP_JSON_LENIENT, "{ab", ":0}"},
    {TP_JSON_LENIENT, "[1,", "]"},
    {TP_JSON_LENIENT, "{\"a\":", "0}"},
    {TP_JSON_LENIENT, "[{\"a\": ", "0}]"},
    {TP_JSON_LENIENT, "{\"a\":1,", "}"},
    {TP_JSON_LENIENT, "[Tr", "ue]"},
    {TP_JSON_LENIENT, "'it\\", "\\'"},
    {TP_JSON_LENIENT, "\"\\ud83d", "\""},
    {TP_JSON_LENIENT, "\"\\ud83d\\", "\\\""},
    {TP_JSON_LENIENT, "\"\\uDB", "00\""},
    {TP_JSON_PYTHON, "(1, 2", ")"},
    {TP_JSON_PYTHON, "{'a': (", ")}"},
    {TP_JSON_PYTHON, "'abc", "'"},
    {TP_JSON_PYTHON, "\"abc", "\""},
    {TP_JSON_PYTHON, "'\\", "\\'"},
    {TP_JSON_PYTHON, "'\\x4", "0'"},
    {TP_JSON_PYTHON, "'\\u00e", "0'"},
    {TP_JSON_PYTHON, "'\\U0001F60", "0'"},
    {TP_JSON_PYTHON, "'\\U000", "00000'"},
    {TP_JSON_PYTHON, "'\\U0010FFF", "0'"},
    {TP_JSON_PYTHON, "[No", "ne]"},
    {TP_JSON_PYTHON, "{", "}"},
    {TP_JSON_PYTHON, "{'a'", ":0}"},
    {TP_JSON_PYTHON, "({'a':", "0})"},
    {TP_JSON_PYTHON, "(1,", ")"},
};

static void test_closing(void) {
    size_t i;
    for (i = 0; i < sizeof closing_cases / sizeof *closing_cases; i++) {
        const closing_case *c = &closing_cases[i];
        size_t len = strlen(c->text), expected_len = strlen(c->closing);
        size_t closing_len = 0, before = check_failures;
        char closing[64];
        tp_json *s = new_scanner(c->dialect, 64);
        tp_json_verdict verdict = feed_chunked(s, c->text, len, 0);
        CHECK(verdict != TP_JSON_ERROR);
        CHECK_EQ(tp_json_closing(s, closing, sizeof closing, &closing_len), TP_OK);
        CHECK_BYTES(closing, closing_len, c->closing, expected_len);
        /* The closing really completes the value. */
        if (verdict == TP_JSON_NEED_MORE) {
            tp_json *check = new_scanner(c->dialect, 64);
            feed_chunked(check, c->text, len, 0);
            feed_chunked(check, closing, closing_len, 0);
            CHECK_EQ(tp_json_finish(check), TP_JSON_COMPLETE);
            CHECK_EQ(tp_json_end(check), len + closing_len);
            tp_json_free(check);
        }
        if (check_failures != before) print_case(c->dialect, c->text, len);
        tp_json_free(s);
    }
}

/* While the verdict is need_more a completion exists: a byte after which none does is the
 * offending byte of an error, so closing() fails only after an error. */
static void test_need_more_has_closing(void) {
    static const struct {
        tp_json_dialect dialect;
        const char *text;
    } cases[] = {
        {TP_JSON_STRICT, "\"\\udc"},       {TP_JSON_STRICT, "\"\\uDF"},
        {TP_JSON_STRICT, "\"\\ud83d\\u0"}, {TP_JSON_STRICT, "\"\\ud83d\\ud8"},
        {TP_JSON_PYTHON, "'\\U0011"},      {TP_JSON_PYTHON, "'\\U1"},
        {TP_JSON_STRICT, "\"\\ud83d\\"},   {TP_JSON_STRICT, "\"\\ud83d\\ud"},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t len = strlen(cases[i].text), before = check_failures;
        outcome o;
        run(cases[i].dialect, 16, cases[i].text, len, 0, 0, &o);
        if (o.verdict == TP_JSON_NEED_MORE) {
            CHECK_EQ(o.closing_status, TP_OK);
        } else {
            CHECK_EQ(o.verdict, TP_JSON_ERROR);
            CHECK_EQ(o.closing_status, TP_ERR_STATE);
        }
        if (check_failures != before) print_case(cases[i].dialect, cases[i].text, len);
    }
}

static void test_closing_nospace(void) {
    tp_json *s = new_scanner(TP_JSON_STRICT, 64);
    static const char text[] = "[{\"a\":[\"x\\u12";
    static const char expected[] = "00\"]}]";
    size_t expected_len = sizeof expected - 1, cap, len;
    char small[1];

    feed_chunked(s, text, sizeof text - 1, 0);
    len = 0;
    CHECK_EQ(tp_json_closing(s, small, 0, &len), TP_ERR_NOSPACE);
    CHECK_EQ(len, expected_len);
    for (cap = 1; cap <= expected_len + 1; cap++) {
        /* An exact-size heap block, so an overrun is caught by the sanitizers. */
        char *buf = (char *)malloc(cap);
        tp_status status;
        REQUIRE(buf != NULL);
        len = 0;
        status = tp_json_closing(s, buf, cap, &len);
        if (cap < expected_len) {
            CHECK_EQ(status, TP_ERR_NOSPACE);
            CHECK_EQ(len, expected_len);
        } else {
            CHECK_EQ(status, TP_OK);
            CHECK_BYTES(buf, len, expected, expected_len);
        }
        free(buf);
    }
    /* Asking does not change the scanner. */
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)"00\"]}] ", 7, NULL), TP_JSON_COMPLETE);
    CHECK_EQ(tp_json_end(s), sizeof text - 1 + expected_len);

    /* Complete: an empty closing needs no room at all. */
    len = 99;
    CHECK_EQ(tp_json_closing(s, small, 0, &len), TP_OK);
    CHECK_EQ(len, 0);
    tp_json_free(s);
}

static void test_depth_limit(void) {
    uint32_t ceiling = TP_JSON_MAX_DEPTH_CEILING;
    size_t big = (size_t)ceiling + 1, len = 0;
    char *buf = (char *)malloc(2 * big);
    tp_json *s;
    uint64_t offset = 0;

    REQUIRE(buf != NULL);

    /* max_depth 1: one container, not two. */
    s = new_scanner(TP_JSON_STRICT, 1);
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)"[", 1, NULL), TP_JSON_NEED_MORE);
    CHECK_EQ(tp_json_depth(s), 1);
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)"[", 1, NULL), TP_JSON_ERROR);
    CHECK_EQ(tp_json_error(s, &offset), TP_JSON_E_LIMIT);
    CHECK_EQ(offset, 1);
    tp_json_reset(s);
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)"[1, {\"a\": 2}]", 13, NULL), TP_JSON_ERROR);
    CHECK_EQ(tp_json_error(s, &offset), TP_JSON_E_LIMIT);
    CHECK_EQ(offset, 4);
    tp_json_reset(s);
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)"[1, \"[{\"]", 9, NULL), TP_JSON_COMPLETE);
    tp_json_free(s);

    /* The default: 512 levels fit, the 513th does not. */
    s = new_scanner(TP_JSON_STRICT, TP_JSON_DEFAULT_MAX_DEPTH);
    memset(buf, '[', 513);
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)buf, 512, NULL), TP_JSON_NEED_MORE);
    CHECK_EQ(tp_json_depth(s), 512);
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)buf, 1, NULL), TP_JSON_ERROR);
    CHECK_EQ(tp_json_error(s, &offset), TP_JSON_E_LIMIT);
    CHECK_EQ(offset, 512);
    tp_json_reset(s);
    /* Mixed containers count alike: {"":[{"":[ ... ]}]} with 512 levels. */
    {
        size_t n = 0, k;
        for (k = 0; k < 256; k++) {
            memcpy(buf + n, "{\"\":[", 5);
            n += 5;
        }
        for (k = 0; k < 256; k++) {
            memcpy(buf + n, "]}", 2);
            n += 2;
        }
        CHECK_EQ(tp_json_feed(s, (const uint8_t *)buf, n, NULL), TP_JSON_COMPLETE);
        CHECK_EQ(tp_json_end(s), n);
    }
    tp_json_free(s);

    /* The ceiling: 2^20 levels, closed by 2^20 brackets. */
    s = new_scanner(TP_JSON_STRICT, ceiling);
    memset(buf, '[', big);
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)buf, ceiling, NULL), TP_JSON_NEED_MORE);
    CHECK_EQ(tp_json_depth(s), ceiling);
    CHECK_EQ(tp_json_closing(s, buf, 10, &len), TP_ERR_NOSPACE);
    CHECK_EQ(len, ceiling);
    CHECK_EQ(tp_json_closing(s, buf, 2 * big, &len), TP_OK);
    CHECK_EQ(len, ceiling);
    {
        size_t k, wrong = 0;
        for (k = 0; k < len; k++) wrong += buf[k] != ']';
        CHECK_EQ(wrong, 0);
    }
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)"[", 1, NULL), TP_JSON_ERROR);
    CHECK_EQ(tp_json_error(s, &offset), TP_JSON_E_LIMIT);
    CHECK_EQ(offset, ceiling);
    tp_json_reset(s);
    memset(buf, '[', ceiling);
    memset(buf + ceiling, ']', ceiling);
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)buf, 2 * (size_t)ceiling, NULL), TP_JSON_COMPLETE);
    CHECK_EQ(tp_json_end(s), 2 * (uint64_t)ceiling);
    tp_json_free(s);
    free(buf);
}

static void test_reset(void) {
    tp_json *s = new_scanner(TP_JSON_LENIENT, 8);
    outcome fresh, again;
    observe(s, &fresh);
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)"{a: [1,", 7, NULL), TP_JSON_NEED_MORE);
    CHECK_EQ(tp_json_relaxations(s), TP_JSON_R_UNQUOTED_KEY);
    tp_json_reset(s);
    observe(s, &again);
    CHECK_SAME_OUTCOME(&again, &fresh, "reset mid-value");
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)"]", 1, NULL), TP_JSON_ERROR);
    tp_json_reset(s);
    observe(s, &again);
    CHECK_SAME_OUTCOME(&again, &fresh, "reset after an error");
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)"[1]", 3, NULL), TP_JSON_COMPLETE);
    CHECK_EQ(tp_json_finish(s), TP_JSON_COMPLETE);
    tp_json_reset(s);
    observe(s, &again);
    CHECK_SAME_OUTCOME(&again, &fresh, "reset after finish");
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)"'x'", 3, NULL), TP_JSON_COMPLETE);
    CHECK_EQ(tp_json_end(s), 3);
    CHECK_EQ(tp_json_relaxations(s), TP_JSON_R_SINGLE_QUOTE);
    tp_json_free(s);
}

/* Documents fed whole, in every two-piece split and one byte at a time must end the same;
 * after every byte of the one-byte feed the scanner must match one fed that prefix whole. */
static void check_splits(tp_json_dialect dialect, const char *text, size_t len) {
    outcome whole, whole_finished, piece;
    tp_json *bytewise;
    size_t k, before = check_failures;

    run(dialect, 16, text, len, 0, 0, &whole);
    run(dialect, 16, text, len, 0, 1, &whole_finished);
    for (k = 1; k < len && check_failures == before; k++) {
        tp_json *s = new_scanner(dialect, 16);
        feed_chunked(s, text, k, 0);
        feed_chunked(s, text + k, len - k, 0);
        observe(s, &piece);
        CHECK_SAME_OUTCOME(&piece, &whole, "two pieces == whole");
        if (check_failures != before) fprintf(stderr, "    (split at %lu)\n", (unsigned long)k);
        tp_json_free(s);
    }

    bytewise = new_scanner(dialect, 16);
    for (k = 1; k <= len && check_failures == before; k++) {
        outcome prefix;
        feed_chunked(bytewise, text + k - 1, 1, 0);
        observe(bytewise, &piece);
        run(dialect, 16, text, k, 0, 0, &prefix);
        CHECK_SAME_OUTCOME(&piece, &prefix, "one byte at a time == prefix fed whole");
        if (check_failures != before) fprintf(stderr, "    (prefix %lu)\n", (unsigned long)k);
    }
    tp_json_finish(bytewise);
    observe(bytewise, &piece);
    CHECK_SAME_OUTCOME(&piece, &whole_finished, "one byte at a time, finished");
    tp_json_free(bytewise);
    if (check_failures != before) print_case(dialect, text, len);
}

static void test_splits(void) {
    static const struct {
        tp_json_dialect dialect;
        const char *text;
    } docs[] = {
        {TP_JSON_STRICT, "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par\\u00eds\","
                         " \"days\": [1, -2.5e+3, 0], \"ok\": true, \"x\": null}} tail"},
        {TP_JSON_STRICT,
         "  [\"h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\\ud83d\\ude00\\\\\\\"\", {}, []]"},
        {TP_JSON_STRICT, "-12.5E-7,"},
        {TP_JSON_STRICT, "123"},
        {TP_JSON_STRICT, "[1, 2, {\"a\": [3, ]}]"},
        {TP_JSON_STRICT, "[\"abc\xe2\x82(\"]"},
        {TP_JSON_STRICT, "{\"a\": [1, \"x"},
        {TP_JSON_STRICT, "[[[[[[[[[[[[[[[[[["},
        {TP_JSON_LENIENT, "{'a': [True, None,], b_1: \"\\ud800\", 'c': \"x\ty\",} rest"},
        {TP_JSON_LENIENT, "{'a\\'b': 'it\\"},
        {TP_JSON_PYTHON, "{'name': 'f', \"args\": ('\\x41\\101\\N', [1, 2,], None),} x"},
        {TP_JSON_PYTHON, "['a\\\nb', '\\U0001F600\\ud83d', \"tab\there\"]"},
        {TP_JSON_PYTHON, "['a\nb']"},
    };
    size_t i;
    for (i = 0; i < sizeof docs / sizeof *docs; i++)
        check_splits(docs[i].dialect, docs[i].text, strlen(docs[i].text));
}

/* ---------------------------------------------------------------------------------------------
 * Random valid documents: each must complete exactly at its end however it is split, and the
 * closing of every prefix must complete that prefix. */

typedef struct text_buf {
    char data[16384];
    size_t len;
    int overflow;
} text_buf;

static void put(text_buf *b, const char *s, size_t n) {
    if (b->len + n <= sizeof b->data) {
        memcpy(b->data + b->len, s, n);
        b->len += n;
    } else {
        b->overflow = 1;
    }
}

static void put_str(text_buf *b, const char *s) { put(b, s, strlen(s)); }

static void gen_string(check_rng *rng, text_buf *b) {
    static const char *const pieces[] = {
        "a",
        "Z",
        " ",
        "0",
        "\\n",
        "\\\"",
        "\\\\",
        "\\/",
        "\\t",
        "\\u00e9",
        "\\uD83D\\uDE00",
        "\xc3\xa9",
        "\xe2\x82\xac",
        "\xf0\x9f\x98\x80",
        "\xe4\xb8\xad",
        "'",
        "{",
        "]",
        ",",
    };
    size_t n = check_rng_below(rng, 6), i;
    put_str(b, "\"");
    for (i = 0; i < n; i++)
        put_str(b, pieces[check_rng_below(rng, sizeof pieces / sizeof *pieces)]);
    put_str(b, "\"");
}

static void gen_number(check_rng *rng, text_buf *b) {
    static const char *const ints[] = {"0", "7", "-0", "42", "-1234567890", "18446744073709551616"};
    static const char *const fracs[] = {"", "", ".5", ".000", ".25"};
    static const char *const exps[] = {"", "", "e5", "E-3", "e+10", "E0"};
    put_str(b, ints[check_rng_below(rng, sizeof ints / sizeof *ints)]);
    put_str(b, fracs[check_rng_below(rng, sizeof fracs / sizeof *fracs)]);
    put_str(b, exps[check_rng_below(rng, sizeof exps / sizeof *exps)]);
}

static void gen_space(check_rng *rng, text_buf *b) {
    static const char *const spaces[] = {"", "", "", " ", "\n  ", "\t", "\r\n"};
    put_str(b, spaces[check_rng_below(rng, sizeof spaces / sizeof *spaces)]);
}

static void gen_value(check_rng *rng, text_buf *b, int depth) {
    size_t kind = check_rng_below(rng, depth < 4 ? 7 : 4), n, i;
    switch (kind) {
    case 0:
        gen_string(rng, b);
        break;
    case 1:
        gen_number(rng, b);
        break;
    case 2:
        put_str(b, check_rng_below(rng, 2) ? "true" : "null");
        break;
    case 3:
        put_str(b, "false");
        break;
    case 4:
    case 5:
        put_str(b, "[");
        n = check_rng_below(rng, 4);
        for (i = 0; i < n; i++) {
            if (i) put_str(b, ",");
            gen_space(rng, b);
            gen_value(rng, b, depth + 1);
            gen_space(rng, b);
        }
        put_str(b, "]");
        break;
    default:
        put_str(b, "{");
        n = check_rng_below(rng, 4);
        for (i = 0; i < n; i++) {
            if (i) put_str(b, ",");
            gen_space(rng, b);
            gen_string(rng, b);
            gen_space(rng, b);
            put_str(b, ":");
            gen_space(rng, b);
            gen_value(rng, b, depth + 1);
            gen_space(rng, b);
        }
        put_str(b, "}");
        break;
    }
}

static void test_random_documents(void) {
    check_rng rng = {0x243f6a8885a308d3ULL};
    int trial;
    for (trial = 0; trial < 300 && check_failures < 20; trial++) {
        static text_buf doc;
        size_t value_len, k, stride, before = check_failures;
        outcome whole, split;
        char *text;
        doc.len = 0;
        doc.overflow = 0;
        gen_space(&rng, &doc);
        gen_value(&rng, &doc, 0);
        value_len = doc.len;
        put_str(&doc, " ,tail");
        REQUIRE(!doc.overflow);

        run(TP_JSON_STRICT, 16, doc.data, doc.len, 0, 0, &whole);
        CHECK_EQ(whole.verdict, TP_JSON_COMPLETE);
        CHECK_EQ(whole.end, value_len);
        CHECK_EQ(whole.position, value_len);
        CHECK_EQ(whole.relaxations, 0);
        run(TP_JSON_STRICT, 16, doc.data, doc.len, 1 + check_rng_below(&rng, 5), 0, &split);
        CHECK_SAME_OUTCOME(&split, &whole, "random split == whole");
        /* Strict JSON is lenient JSON that uses no relaxation. */
        run(TP_JSON_LENIENT, 16, doc.data, doc.len, 0, 0, &split);
        CHECK_SAME_OUTCOME(&split, &whole, "lenient == strict on strict JSON");

        /* Long documents: a sample of the prefixes keeps the run short under valgrind. */
        text = (char *)malloc(value_len + sizeof whole.closing);
        REQUIRE(text != NULL);
        stride = 1 + value_len / 64;
        for (k = check_rng_below(&rng, stride); k <= value_len && check_failures == before;
             k += stride) {
            outcome prefix, completed;
            run(TP_JSON_STRICT, 16, doc.data, k, 0, 0, &prefix);
            CHECK_EQ(prefix.closing_status, TP_OK);
            if (prefix.closing_status != TP_OK) break;
            memcpy(text, doc.data, k);
            memcpy(text + k, prefix.closing, prefix.closing_len);
            run(TP_JSON_STRICT, 16, text, k + prefix.closing_len, 0, 1, &completed);
            CHECK_EQ(completed.verdict, TP_JSON_COMPLETE);
            CHECK_EQ(completed.end, k + prefix.closing_len);
            if (check_failures != before) {
                fprintf(stderr, "    (prefix %lu)\n", (unsigned long)k);
                check_print_bytes("    closing ", prefix.closing, prefix.closing_len);
            }
        }
        free(text);
        if (check_failures != before) print_case(TP_JSON_STRICT, doc.data, doc.len);
    }
}

int main(void) {
    static const check_test tests[] = {
        CHECK_TEST(test_create),
        CHECK_TEST(test_names),
        CHECK_TEST(test_documented_example),
        CHECK_TEST(test_complete_values),
        CHECK_TEST(test_numbers_end_at_any_byte_at_top_level),
        CHECK_TEST(test_incomplete),
        CHECK_TEST(test_errors),
        CHECK_TEST(test_nul_bytes),
        CHECK_TEST(test_closing),
        CHECK_TEST(test_need_more_has_closing),
        CHECK_TEST(test_closing_nospace),
        CHECK_TEST(test_depth_limit),
        CHECK_TEST(test_reset),
        CHECK_TEST(test_splits),
        CHECK_TEST(test_random_documents),
    };
    return check_main("test_json", tests, sizeof tests / sizeof *tests);
}
