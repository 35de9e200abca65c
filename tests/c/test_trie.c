/* test_trie.c: the C API of the marker trie and matcher (csrc/trie.h), against the contract in
 * docs/primitives.md and against a brute-force model of leftmost-longest streaming matching. */
#include "trie.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* ---------------------------------------------------------------------------------------------
 * Helpers */

typedef struct match_list {
    tp_match *items;
    size_t n;
    size_t cap;
} match_list;

static void list_push(match_list *list, const tp_match *matches, size_t n) {
    if (n == 0) return;
    if (list->n + n > list->cap) {
        size_t cap = list->cap ? list->cap : 16;
        while (cap < list->n + n) cap *= 2;
        list->items = (tp_match *)realloc(list->items, cap * sizeof *list->items);
        REQUIRE(list->items != NULL);
        list->cap = cap;
    }
    memcpy(list->items + list->n, matches, n * sizeof *matches);
    list->n += n;
}

static void list_free(match_list *list) {
    free(list->items);
    list->items = NULL;
    list->n = list->cap = 0;
}

static void print_matches(const char *label, const tp_match *matches, size_t n) {
    size_t i;
    fprintf(stderr, "    %s (%lu):", label, (unsigned long)n);
    for (i = 0; i < n && i < 20; i++)
        fprintf(stderr, " (%lu,%llu,%llu)", (unsigned long)matches[i].id,
                (unsigned long long)matches[i].start, (unsigned long long)matches[i].end);
    fprintf(stderr, "%s\n", i < n ? " ..." : "");
}

static int same_matches(const tp_match *a, size_t na, const tp_match *b, size_t nb) {
    size_t i;
    if (na != nb) return 0;
    for (i = 0; i < na; i++)
        if (a[i].id != b[i].id || a[i].start != b[i].start || a[i].end != b[i].end) return 0;
    return 1;
}

#define CHECK_MATCHES(actual, n_actual, expected, n_expected)                \
    do {                                                                     \
        check_count++;                                                       \
        if (!same_matches((actual), (n_actual), (expected), (n_expected))) { \
            check_report(__FILE__, __LINE__, #actual " == " #expected);      \
            print_matches("actual  ", (actual), (n_actual));                 \
            print_matches("expected", (expected), (n_expected));             \
        }                                                                    \
    } while (0)

/* A marker list as the (pointer, length) arrays that tp_trie_new takes. */
typedef struct marker_set {
    const uint8_t **ptrs;
    size_t *lens;
    size_t n;
} marker_set;

static marker_set markers_from_strings(const char *const *strings, size_t n) {
    marker_set set;
    size_t i;
    set.ptrs = (const uint8_t **)malloc((n ? n : 1) * sizeof *set.ptrs);
    set.lens = (size_t *)malloc((n ? n : 1) * sizeof *set.lens);
    REQUIRE(set.ptrs != NULL && set.lens != NULL);
    for (i = 0; i < n; i++) {
        set.ptrs[i] = (const uint8_t *)strings[i];
        set.lens[i] = strlen(strings[i]);
    }
    set.n = n;
    return set;
}

static void markers_free(marker_set *set) {
    free(set->ptrs);
    free(set->lens);
    set->ptrs = NULL;
    set->lens = NULL;
}

static tp_trie *trie_from_set(const marker_set *set) {
    tp_trie *trie = NULL;
    size_t bad_index = 12345;
    tp_status status = tp_trie_new(set->ptrs, set->lens, set->n, &trie, &bad_index);
    REQUIRE(status == TP_OK);
    REQUIRE(trie != NULL);
    return trie;
}

static tp_trie *trie_from_strings(const char *const *strings, size_t n) {
    marker_set set = markers_from_strings(strings, n);
    tp_trie *trie = trie_from_set(&set);
    markers_free(&set);
    return trie;
}

static tp_matcher *new_matcher(const tp_trie *trie) {
    tp_matcher *m = NULL;
    REQUIRE(tp_matcher_new(trie, &m) == TP_OK);
    REQUIRE(m != NULL);
    return m;
}

/* Feeds all of buf with an out array of cap entries (cap >= 1), appending what comes out to
 * list, and checks the consumed-count contract on every call.  A call that fills the array
 * may leave certain matches for the next call even when it consumed everything, so the loop
 * goes on (with the rest, possibly empty) until a call leaves room. */
static void feed_checked(tp_matcher *m, const uint8_t *buf, size_t len, size_t cap,
                         match_list *list) {
    tp_match *out = (tp_match *)malloc(cap * sizeof *out);
    size_t done = 0, n_out = cap, calls = 0;
    REQUIRE(out != NULL);
    while (done < len || n_out == cap) {
        uint64_t before = tp_matcher_position(m);
        size_t consumed;
        n_out = (size_t)-1;
        consumed = tp_matcher_feed(m, buf + done, len - done, out, cap, &n_out);
        CHECK(consumed <= len - done);
        CHECK(n_out <= cap);
        if (n_out > cap || consumed > len - done) break;
        CHECK_EQ(tp_matcher_position(m) - before, consumed);
        /* Only a full out array may stop a feed early. */
        if (n_out < cap) CHECK_EQ(consumed, len - done);
        list_push(list, out, n_out);
        done += consumed;
        if ((consumed == 0 && n_out == 0 && done < len) || ++calls > 2 * len + 64) {
            check_report(__FILE__, __LINE__, "feed makes progress");
            break;
        }
    }
    free(out);
}

/* Finishes with an out array of cap entries (cap >= 1), appending to list. */
static void finish_checked(tp_matcher *m, size_t cap, match_list *list) {
    tp_match *out = (tp_match *)malloc(cap * sizeof *out);
    size_t calls;
    REQUIRE(out != NULL);
    for (calls = 0; calls < 1000000; calls++) {
        size_t n_out = (size_t)-1;
        tp_status status = tp_matcher_finish(m, out, cap, &n_out);
        CHECK(n_out <= cap);
        if (n_out > cap) break;
        list_push(list, out, n_out);
        if (status == TP_OK) break;
        CHECK_EQ(status, TP_ERR_NOSPACE);
        if (status != TP_ERR_NOSPACE) break;
        CHECK_EQ(n_out, cap); /* "more remain" only once the array is full */
    }
    CHECK(tp_matcher_finished(m));
    CHECK_EQ(tp_matcher_holdback(m), 0);
    free(out);
}

/* Feeds input split into chunks of chunk bytes (0: all at once), then finishes. */
static void run_chunked(const tp_trie *trie, const uint8_t *input, size_t len, size_t chunk,
                        size_t cap, match_list *list) {
    tp_matcher *m = new_matcher(trie);
    size_t done = 0;
    if (chunk == 0) chunk = len ? len : 1;
    while (done < len) {
        size_t n = len - done < chunk ? len - done : chunk;
        feed_checked(m, input + done, n, cap, list);
        done += n;
    }
    CHECK_EQ(tp_matcher_position(m), len);
    finish_checked(m, cap, list);
    tp_matcher_free(m);
}

/* ---------------------------------------------------------------------------------------------
 * Brute-force model of the specification.
 *
 * After a prefix of length p, a match is certain when no continuation can change it.  Walking
 * from the end of the last certain match, the first start s where a marker is complete or still
 * open (in[s..p) is a proper prefix of some marker) decides: if a marker is open at s, nothing
 * from s on is certain (a longer or earlier match could replace anything there); otherwise the
 * longest complete marker at s is certain.  At the end of input (final) nothing is open. */

static size_t model_complete_at(const marker_set *set, const uint8_t *in, size_t s, size_t p,
                                uint32_t *id) {
    size_t best = 0, i;
    for (i = 0; i < set->n; i++) {
        size_t len = set->lens[i];
        if (len <= p - s && len > best && memcmp(in + s, set->ptrs[i], len) == 0) {
            best = len;
            *id = (uint32_t)i;
        }
    }
    return best;
}

static int model_open_at(const marker_set *set, const uint8_t *in, size_t s, size_t p) {
    size_t i;
    for (i = 0; i < set->n; i++)
        if (set->lens[i] > p - s && memcmp(in + s, set->ptrs[i], p - s) == 0) return 1;
    return 0;
}

/* Writes the certain matches of in[0..p) to out (room for p entries) and the holdback. */
static size_t model_matches(const marker_set *set, const uint8_t *in, size_t p, int final,
                            tp_match *out, size_t *holdback) {
    size_t n = 0, s = 0;
    *holdback = 0;
    while (s < p) {
        uint32_t id = 0;
        size_t len;
        if (!final && model_open_at(set, in, s, p)) {
            *holdback = p - s;
            break;
        }
        len = model_complete_at(set, in, s, p, &id);
        if (len > 0) {
            out[n].id = id;
            out[n].start = s;
            out[n].end = s + len;
            n++;
            s += len;
        } else {
            s++;
        }
    }
    return n;
}

/* ---------------------------------------------------------------------------------------------
 * Tests */

static void test_construction_errors(void) {
    const char *good[] = {"a", "bc", "def"};
    const uint8_t *ptrs[4];
    size_t lens[4];
    uint8_t long_marker[TP_TRIE_MAX_MARKER_LEN + 1];
    tp_trie *trie;
    size_t bad_index, i;

    for (i = 0; i < 3; i++) {
        ptrs[i] = (const uint8_t *)good[i];
        lens[i] = strlen(good[i]);
    }

    /* No markers: bad count, bad_index = n. */
    trie = NULL;
    bad_index = 999;
    CHECK_EQ(tp_trie_new(ptrs, lens, 0, &trie, &bad_index), TP_ERR_ARG);
    CHECK_EQ(bad_index, 0);
    CHECK(trie == NULL);

    /* An empty marker. */
    lens[1] = 0;
    trie = NULL;
    bad_index = 999;
    CHECK_EQ(tp_trie_new(ptrs, lens, 3, &trie, &bad_index), TP_ERR_ARG);
    CHECK_EQ(bad_index, 1);
    CHECK(trie == NULL);
    lens[1] = 2;

    /* One byte over the maximum length; exactly the maximum is fine. */
    memset(long_marker, 'x', sizeof long_marker);
    ptrs[3] = long_marker;
    lens[3] = TP_TRIE_MAX_MARKER_LEN + 1;
    trie = NULL;
    bad_index = 999;
    CHECK_EQ(tp_trie_new(ptrs, lens, 4, &trie, &bad_index), TP_ERR_ARG);
    CHECK_EQ(bad_index, 3);
    CHECK(trie == NULL);
    lens[3] = TP_TRIE_MAX_MARKER_LEN;
    trie = NULL;
    CHECK_EQ(tp_trie_new(ptrs, lens, 4, &trie, &bad_index), TP_OK);
    REQUIRE(trie != NULL);
    CHECK_EQ(tp_trie_max_length(trie), TP_TRIE_MAX_MARKER_LEN);
    tp_trie_free(trie);

    /* A duplicate: the later copy is the offending marker, even from a different buffer. */
    ptrs[3] = (const uint8_t *)"bcX";
    lens[3] = 2;
    trie = NULL;
    bad_index = 999;
    CHECK_EQ(tp_trie_new(ptrs, lens, 4, &trie, &bad_index), TP_ERR_ARG);
    CHECK_EQ(bad_index, 3);
    CHECK(trie == NULL);

    /* A marker that is a prefix of another is not a duplicate. */
    lens[3] = 3;
    trie = NULL;
    CHECK_EQ(tp_trie_new(ptrs, lens, 4, &trie, NULL), TP_OK);
    REQUIRE(trie != NULL);
    tp_trie_free(trie);

    /* bad_index may be NULL on failure too. */
    trie = NULL;
    CHECK_EQ(tp_trie_new(ptrs, lens, 0, &trie, NULL), TP_ERR_ARG);
    CHECK(trie == NULL);

    tp_trie_free(NULL);
    tp_matcher_free(NULL);
}

static void test_marker_count_limits(void) {
    size_t n = TP_TRIE_MAX_MARKERS + 1, i;
    char *storage = (char *)malloc(n * 8);
    const uint8_t **ptrs = (const uint8_t **)malloc(n * sizeof *ptrs);
    size_t *lens = (size_t *)malloc(n * sizeof *lens);
    tp_trie *trie = NULL;
    tp_matcher *m;
    size_t bad_index = 999;
    match_list found = {NULL, 0, 0};
    static const char input[] = "x <m0042> y <m4095><m0000> <m12";
    tp_match expected[] = {{42, 2, 9}, {4095, 12, 19}, {0, 19, 26}};

    REQUIRE(storage != NULL && ptrs != NULL && lens != NULL);
    for (i = 0; i < n; i++) {
        char *marker = storage + i * 8;
        marker[0] = '<';
        marker[1] = 'm';
        marker[2] = (char)('0' + i / 1000 % 10);
        marker[3] = (char)('0' + i / 100 % 10);
        marker[4] = (char)('0' + i / 10 % 10);
        marker[5] = (char)('0' + i % 10);
        marker[6] = '>';
        ptrs[i] = (const uint8_t *)(storage + i * 8);
        lens[i] = 7;
    }
    CHECK_EQ(tp_trie_new(ptrs, lens, n, &trie, &bad_index), TP_ERR_ARG);
    CHECK_EQ(bad_index, n);
    CHECK(trie == NULL);

    trie = NULL;
    CHECK_EQ(tp_trie_new(ptrs, lens, TP_TRIE_MAX_MARKERS, &trie, &bad_index), TP_OK);
    REQUIRE(trie != NULL);
    CHECK_EQ(tp_trie_count(trie), TP_TRIE_MAX_MARKERS);
    CHECK_EQ(tp_trie_max_length(trie), 7);

    m = new_matcher(trie);
    feed_checked(m, (const uint8_t *)input, sizeof input - 1, 16, &found);
    CHECK_MATCHES(found.items, found.n, expected, 3);
    CHECK_EQ(tp_matcher_holdback(m), 4); /* "<m12" */
    finish_checked(m, 16, &found);
    CHECK_MATCHES(found.items, found.n, expected, 3);
    list_free(&found);

    /* The same, one byte at a time. */
    run_chunked(trie, (const uint8_t *)input, sizeof input - 1, 1, 1, &found);
    CHECK_MATCHES(found.items, found.n, expected, 3);
    list_free(&found);

    tp_matcher_free(m);
    tp_trie_free(trie);
    free(storage);
    free(ptrs);
    free(lens);
}

static void test_accessors(void) {
    /* Markers may hold any byte, NUL and 0xff included. */
    uint8_t first[] = {'<', 0x00, 0xff, '>'};
    uint8_t second[] = {0xe2, 0x96, 0x81}; /* U+2581, as in DeepSeek's markers */
    const uint8_t *ptrs[2];
    size_t lens[2] = {sizeof first, sizeof second};
    tp_trie *trie = NULL;
    tp_matcher *m;
    const uint8_t *marker;
    size_t len = 0;
    match_list found = {NULL, 0, 0};
    static const uint8_t input[] = {'a', '<', 0x00, 0xff, '>', 0xe2, 0x96, 0x81, 0xe2, 0x96};
    tp_match expected[] = {{0, 1, 5}, {1, 5, 8}};

    ptrs[0] = first;
    ptrs[1] = second;
    REQUIRE(tp_trie_new(ptrs, lens, 2, &trie, NULL) == TP_OK);
    REQUIRE(trie != NULL);
    /* The trie keeps its own copy. */
    first[0] = 'X';
    CHECK_EQ(tp_trie_count(trie), 2);
    CHECK_EQ(tp_trie_max_length(trie), 4);
    marker = tp_trie_marker(trie, 0, &len);
    CHECK_BYTES(marker, len, "<\0\xff>", 4);
    marker = tp_trie_marker(trie, 1, &len);
    CHECK_BYTES(marker, len, second, 3);

    m = new_matcher(trie);
    CHECK_EQ(tp_matcher_position(m), 0);
    CHECK_EQ(tp_matcher_holdback(m), 0);
    CHECK(!tp_matcher_finished(m));
    feed_checked(m, input, sizeof input, 4, &found);
    CHECK_MATCHES(found.items, found.n, expected, 2);
    CHECK_EQ(tp_matcher_position(m), sizeof input);
    CHECK_EQ(tp_matcher_holdback(m), 2);
    list_free(&found);
    tp_matcher_free(m);
    tp_trie_free(trie);
}

static void test_documented_example(void) {
    const char *markers[] = {"<tool_call>", "</tool_call>", "<think>"};
    tp_trie *trie = trie_from_strings(markers, 3);
    tp_matcher *m = new_matcher(trie);
    tp_match out[4];
    size_t n = 99, consumed;
    tp_match expected[] = {{0, 3, 14}};

    consumed = tp_matcher_feed(m, (const uint8_t *)"Hi <tool_", 9, out, 4, &n);
    CHECK_EQ(consumed, 9);
    CHECK_EQ(n, 0);
    CHECK_EQ(tp_matcher_holdback(m), 6);
    consumed = tp_matcher_feed(m, (const uint8_t *)"call>{...", 9, out, 4, &n);
    CHECK_EQ(consumed, 9);
    CHECK_MATCHES(out, n, expected, 1);
    CHECK_EQ(tp_matcher_position(m), 18);
    CHECK_EQ(tp_matcher_holdback(m), 0);
    CHECK_EQ(tp_matcher_finish(m, out, 4, &n), TP_OK);
    CHECK_EQ(n, 0);
    tp_matcher_free(m);
    tp_trie_free(trie);
}

/* Feeds the pieces one by one; after piece i the matches so far must be expected[0..counts[i])
 * and the holdback holdbacks[i].  Then finishes and expects expected[0..total). */
static void check_script(const char *const *markers, size_t n_markers, const char *const *pieces,
                         size_t n_pieces, const size_t *counts, const size_t *holdbacks,
                         const tp_match *expected, size_t total, int line) {
    tp_trie *trie = trie_from_strings(markers, n_markers);
    size_t cap;
    /* cap 1 exercises the consumed-count contract; 8 is room for everything. */
    for (cap = 1; cap <= 8; cap += 7) {
        tp_matcher *m = new_matcher(trie);
        match_list found = {NULL, 0, 0};
        size_t i;
        for (i = 0; i < n_pieces; i++) {
            size_t before = check_failures;
            feed_checked(m, (const uint8_t *)pieces[i], strlen(pieces[i]), cap, &found);
            CHECK_MATCHES(found.items, found.n, expected, counts[i]);
            CHECK_EQ(tp_matcher_holdback(m), holdbacks[i]);
            if (check_failures != before)
                fprintf(stderr, "    (script at line %d, piece %lu, cap %lu)\n", line,
                        (unsigned long)i, (unsigned long)cap);
        }
        finish_checked(m, cap, &found);
        CHECK_MATCHES(found.items, found.n, expected, total);
        list_free(&found);
        tp_matcher_free(m);
    }
    tp_trie_free(trie);
}

#define SCRIPT(markers, pieces, counts, holdbacks, expected, total) \
    check_script(markers, sizeof markers / sizeof *markers, pieces, \
                 sizeof pieces / sizeof *pieces, counts, holdbacks, expected, total, __LINE__)

static void test_leftmost_longest(void) {
    {
        /* The longer marker wins when it completes ... */
        const char *markers[] = {"abcd", "bc"};
        const char *pieces[] = {"abc", "d"};
        size_t counts[] = {0, 1}, holdbacks[] = {3, 0};
        tp_match expected[] = {{0, 0, 4}};
        SCRIPT(markers, pieces, counts, holdbacks, expected, 1);
    }
    {
        /* ... and the later-starting one is reported when it does not. */
        const char *markers[] = {"abcd", "bc"};
        const char *pieces[] = {"abc", "x"};
        size_t counts[] = {0, 1}, holdbacks[] = {3, 0};
        tp_match expected[] = {{1, 1, 3}};
        SCRIPT(markers, pieces, counts, holdbacks, expected, 1);
    }
    {
        const char *markers[] = {"<think>", "<think>\n"};
        const char *pieces[] = {"<think>", "\n"};
        size_t counts[] = {0, 1}, holdbacks[] = {7, 0};
        tp_match expected[] = {{1, 0, 8}};
        SCRIPT(markers, pieces, counts, holdbacks, expected, 1);
    }
    {
        const char *markers[] = {"<think>", "<think>\n"};
        const char *pieces[] = {"<think>", "x"};
        size_t counts[] = {0, 1}, holdbacks[] = {7, 0};
        tp_match expected[] = {{0, 0, 7}};
        SCRIPT(markers, pieces, counts, holdbacks, expected, 1);
    }
    {
        /* Decided by the end of input. */
        const char *markers[] = {"<think>", "<think>\n"};
        const char *pieces[] = {"<th", "ink>"};
        size_t counts[] = {0, 0}, holdbacks[] = {3, 7};
        tp_match expected[] = {{0, 0, 7}};
        SCRIPT(markers, pieces, counts, holdbacks, expected, 1);
    }
    {
        /* Non-overlapping: matching restarts at the end of a match. */
        const char *markers[] = {"aa"};
        const char *pieces[] = {"aaa", "a", "a"};
        size_t counts[] = {1, 2, 2}, holdbacks[] = {1, 0, 1};
        tp_match expected[] = {{0, 0, 2}, {0, 2, 4}};
        SCRIPT(markers, pieces, counts, holdbacks, expected, 2);
    }
    {
        /* A complete marker held because one starting earlier is still open. */
        const char *markers[] = {"abc", "b"};
        const char *pieces[] = {"ab", "x"};
        size_t counts[] = {0, 1}, holdbacks[] = {2, 0};
        tp_match expected[] = {{1, 1, 2}};
        SCRIPT(markers, pieces, counts, holdbacks, expected, 1);
    }
    {
        /* Overlapping candidates: only the leftmost survives, then matching restarts. */
        const char *markers[] = {"abcde", "cd", "bc"};
        const char *pieces[] = {"abcd", "X"};
        size_t counts[] = {0, 1}, holdbacks[] = {4, 0};
        tp_match expected[] = {{2, 1, 3}};
        SCRIPT(markers, pieces, counts, holdbacks, expected, 1);
    }
    {
        /* A failed candidate gives way to one starting inside it. */
        const char *markers[] = {"aab", "ab"};
        const char *pieces[] = {"a", "a", "a", "b"};
        size_t counts[] = {0, 0, 0, 1}, holdbacks[] = {1, 2, 2, 0};
        tp_match expected[] = {{0, 1, 4}};
        SCRIPT(markers, pieces, counts, holdbacks, expected, 1);
    }
    {
        /* One byte decides a held match and, after the rescan, a second one. */
        const char *markers[] = {"abcd", "ab", "cx"};
        const char *pieces[] = {"abc", "x"};
        size_t counts[] = {0, 2}, holdbacks[] = {3, 0};
        tp_match expected[] = {{1, 0, 2}, {2, 2, 4}};
        SCRIPT(markers, pieces, counts, holdbacks, expected, 2);
    }
    {
        /* finish() decides two held matches at once. */
        const char *markers[] = {"abcde", "ab", "cd"};
        const char *pieces[] = {"abcd"};
        size_t counts[] = {0}, holdbacks[] = {4};
        tp_match expected[] = {{1, 0, 2}, {2, 2, 4}};
        SCRIPT(markers, pieces, counts, holdbacks, expected, 2);
    }
    {
        const char *markers[] = {"<tool_call>", "</tool_call>"};
        const char *pieces[] = {"text <", "/", "tool", "s", "<", "<", "/tool_call>", " <tool_call"};
        size_t counts[] = {0, 0, 0, 0, 0, 0, 1, 1};
        size_t holdbacks[] = {1, 2, 6, 0, 1, 1, 0, 10};
        tp_match expected[] = {{1, 13, 25}};
        SCRIPT(markers, pieces, counts, holdbacks, expected, 1);
    }
}

static void test_small_out_arrays(void) {
    const char *markers[] = {"a", "abcd", "ab", "cx"};
    const char *single[] = {"a"};
    tp_trie *trie = trie_from_strings(markers, 4);
    tp_trie *single_trie = trie_from_strings(single, 1);
    tp_matcher *m = new_matcher(trie);
    tp_match out[2];
    size_t n = 99, consumed;
    tp_status status;
    match_list found = {NULL, 0, 0};
    tp_match expected_a[] = {{0, 0, 1}, {0, 1, 2}, {0, 2, 3}, {0, 3, 4}};
    tp_match expected_abc[] = {{2, 0, 2}, {3, 2, 4}};

    /* cap 0 consumes nothing. */
    consumed = tp_matcher_feed(m, (const uint8_t *)"aaaa", 4, out, 0, &n);
    CHECK_EQ(consumed, 0);
    CHECK_EQ(n, 0);
    CHECK_EQ(tp_matcher_position(m), 0);

    /* "a" is also the start of "ab" and "abcd", so the last one waits for more input. */
    feed_checked(m, (const uint8_t *)"aaaa", 4, 1, &found);
    CHECK_MATCHES(found.items, found.n, expected_a, 3);
    CHECK_EQ(tp_matcher_position(m), 4);
    CHECK_EQ(tp_matcher_holdback(m), 1);

    /* An empty feed consumes and reports nothing. */
    consumed = tp_matcher_feed(m, (const uint8_t *)"", 0, out, 2, &n);
    CHECK_EQ(consumed, 0);
    CHECK_EQ(n, 0);

    /* finish with a held match and no room: TP_ERR_NOSPACE, nothing written, then the rest. */
    n = 99;
    CHECK_EQ(tp_matcher_finish(m, out, 0, &n), TP_ERR_NOSPACE);
    CHECK_EQ(n, 0);
    CHECK(!tp_matcher_finished(m));
    n = 99;
    CHECK_EQ(tp_matcher_finish(m, out, 1, &n), TP_OK);
    CHECK_MATCHES(out, n, expected_a + 3, 1);
    CHECK(tp_matcher_finished(m));
    CHECK_EQ(tp_matcher_holdback(m), 0);
    list_free(&found);

    /* finish with nothing held needs no room. */
    tp_matcher_reset(m);
    feed_checked(m, (const uint8_t *)"xyz", 3, 1, &found);
    CHECK_EQ(tp_matcher_holdback(m), 0);
    n = 99;
    CHECK_EQ(tp_matcher_finish(m, out, 0, &n), TP_OK);
    CHECK_EQ(n, 0);
    CHECK(tp_matcher_finished(m));

    /* A held match that exactly fills the array: TP_ERR_NOSPACE is allowed (the bytes after
     * the match are not rescanned yet), but then the next call has nothing more. */
    tp_matcher_reset(m);
    feed_checked(m, (const uint8_t *)"abc", 3, 2, &found);
    CHECK_EQ(found.n, 0);
    CHECK_EQ(tp_matcher_holdback(m), 3);
    n = 99;
    status = tp_matcher_finish(m, out, 1, &n);
    CHECK(status == TP_OK || status == TP_ERR_NOSPACE);
    CHECK_MATCHES(out, n, expected_abc, 1);
    if (status == TP_ERR_NOSPACE) {
        n = 99;
        CHECK_EQ(tp_matcher_finish(m, out, 1, &n), TP_OK);
        CHECK_EQ(n, 0);
    }
    CHECK(tp_matcher_finished(m));

    /* One byte deciding two matches, through a one-entry array. */
    tp_matcher_reset(m);
    feed_checked(m, (const uint8_t *)"abc", 3, 1, &found);
    feed_checked(m, (const uint8_t *)"x", 1, 1, &found);
    finish_checked(m, 1, &found);
    CHECK_MATCHES(found.items, found.n, expected_abc, 2);
    list_free(&found);
    tp_matcher_free(m);

    /* Four certain matches in one feed, through a one-entry array. */
    m = new_matcher(single_trie);
    feed_checked(m, (const uint8_t *)"aaaa", 4, 1, &found);
    CHECK_MATCHES(found.items, found.n, expected_a, 4);
    CHECK_EQ(tp_matcher_holdback(m), 0);
    consumed = tp_matcher_feed(m, (const uint8_t *)"aaaa", 4, out, 2, &n);
    CHECK(consumed >= 2);
    CHECK_EQ(n, 2);
    list_free(&found);
    tp_matcher_free(m);

    tp_trie_free(single_trie);
    tp_trie_free(trie);
}

static void test_finish_reset(void) {
    const char *markers[] = {"<tool_call>", "<think>"};
    tp_trie *trie = trie_from_strings(markers, 2);
    tp_matcher *m = new_matcher(trie);
    tp_match out[4];
    size_t n = 99, consumed;
    match_list found = {NULL, 0, 0};
    tp_match expected[] = {{1, 2, 9}};

    feed_checked(m, (const uint8_t *)"a <think> <tool", 15, 4, &found);
    CHECK_MATCHES(found.items, found.n, expected, 1);
    CHECK_EQ(tp_matcher_holdback(m), 5);
    finish_checked(m, 4, &found);
    CHECK_MATCHES(found.items, found.n, expected, 1);
    CHECK_EQ(tp_matcher_position(m), 15);

    /* A finished matcher consumes nothing. */
    consumed = tp_matcher_feed(m, (const uint8_t *)"<think>", 7, out, 4, &n);
    CHECK_EQ(consumed, 0);
    CHECK_EQ(n, 0);
    CHECK_EQ(tp_matcher_position(m), 15);
    CHECK(tp_matcher_finished(m));

    /* reset makes it new again: offsets restart at 0. */
    tp_matcher_reset(m);
    CHECK(!tp_matcher_finished(m));
    CHECK_EQ(tp_matcher_position(m), 0);
    CHECK_EQ(tp_matcher_holdback(m), 0);
    list_free(&found);
    feed_checked(m, (const uint8_t *)"a <think> <tool", 15, 4, &found);
    finish_checked(m, 4, &found);
    CHECK_MATCHES(found.items, found.n, expected, 1);

    /* reset in the middle of a held match forgets it. */
    tp_matcher_reset(m);
    list_free(&found);
    feed_checked(m, (const uint8_t *)"<thi", 4, 4, &found);
    CHECK_EQ(tp_matcher_holdback(m), 4);
    tp_matcher_reset(m);
    feed_checked(m, (const uint8_t *)"nk>", 3, 4, &found);
    finish_checked(m, 4, &found);
    CHECK_EQ(found.n, 0);
    list_free(&found);

    /* Two matchers on one trie are independent. */
    {
        tp_matcher *other = new_matcher(trie);
        match_list other_found = {NULL, 0, 0};
        tp_matcher_reset(m);
        feed_checked(m, (const uint8_t *)"<thi", 4, 4, &found);
        feed_checked(other, (const uint8_t *)"x<think>", 8, 4, &other_found);
        feed_checked(m, (const uint8_t *)"nk>", 3, 4, &found);
        finish_checked(m, 4, &found);
        finish_checked(other, 4, &other_found);
        CHECK_EQ(found.n, 1);
        CHECK_EQ(other_found.n, 1);
        if (found.n == 1 && other_found.n == 1) {
            CHECK_EQ(found.items[0].start, 0);
            CHECK_EQ(other_found.items[0].start, 1);
        }
        list_free(&other_found);
        tp_matcher_free(other);
    }
    list_free(&found);
    tp_matcher_free(m);
    tp_trie_free(trie);
}

static void test_longest_marker(void) {
    uint8_t marker[TP_TRIE_MAX_MARKER_LEN];
    uint8_t input[301];
    const uint8_t *ptrs[1] = {marker};
    size_t lens[1] = {sizeof marker};
    tp_trie *trie = NULL;
    tp_matcher *m;
    match_list found = {NULL, 0, 0};
    size_t i, holdback_errors = 0;
    tp_match expected[] = {{0, 45, 301}};

    memset(marker, 'k', sizeof marker - 1);
    marker[sizeof marker - 1] = '!';
    memset(input, 'k', sizeof input - 1);
    input[sizeof input - 1] = '!';
    REQUIRE(tp_trie_new(ptrs, lens, 1, &trie, NULL) == TP_OK);
    REQUIRE(trie != NULL);
    m = new_matcher(trie);
    for (i = 0; i < sizeof input - 1; i++) {
        size_t expected_holdback = i + 1 < sizeof marker - 1 ? i + 1 : sizeof marker - 1;
        feed_checked(m, input + i, 1, 1, &found);
        if (tp_matcher_holdback(m) != expected_holdback) holdback_errors++;
    }
    CHECK_EQ(holdback_errors, 0);
    CHECK_EQ(found.n, 0);
    feed_checked(m, input + sizeof input - 1, 1, 1, &found);
    CHECK_MATCHES(found.items, found.n, expected, 1);
    CHECK_EQ(tp_matcher_holdback(m), 0);
    finish_checked(m, 1, &found);
    CHECK_MATCHES(found.items, found.n, expected, 1);
    list_free(&found);
    tp_matcher_free(m);
    tp_trie_free(trie);
}

static const char *const realistic_markers[] = {
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
    "<think>\n",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁calls▁end｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁sep｜>",
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "<|im_end|>",
    "<function=",
    "</function>",
};

static const char realistic_text[] =
    "<think>\nThe user wants the weather. I should call <tool the tool.</think>\n"
    "Sure <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}"
    "</tool_call> and <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>"
    "search\n```json\n{\"q\": \"<tool_c\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    " [TOOL_CALLS] <<|python_tag|> <｜tool▁ <function=f></function> </tool_cal <|im_end|><think>";

static void test_splits_agree(void) {
    size_t n_markers = sizeof realistic_markers / sizeof *realistic_markers;
    marker_set set = markers_from_strings(realistic_markers, n_markers);
    tp_trie *trie = trie_from_set(&set);
    const uint8_t *input = (const uint8_t *)realistic_text;
    size_t len = sizeof realistic_text - 1;
    tp_match *model = (tp_match *)malloc(len * sizeof *model);
    size_t holdback, n_model;
    match_list whole = {NULL, 0, 0};
    static const size_t chunks[] = {1, 2, 3, 4, 5, 7, 16, 0};
    static const size_t caps[] = {1, 2, 64};
    size_t c, k;

    REQUIRE(model != NULL);
    n_model = model_matches(&set, input, len, 1, model, &holdback);
    CHECK(n_model >= 14);
    run_chunked(trie, input, len, 0, 64, &whole);
    CHECK_MATCHES(whole.items, whole.n, model, n_model);
    for (c = 0; c < sizeof chunks / sizeof *chunks; c++) {
        for (k = 0; k < sizeof caps / sizeof *caps; k++) {
            match_list found = {NULL, 0, 0};
            size_t before = check_failures;
            run_chunked(trie, input, len, chunks[c], caps[k], &found);
            CHECK_MATCHES(found.items, found.n, whole.items, whole.n);
            if (check_failures != before)
                fprintf(stderr, "    (chunk %lu, cap %lu)\n", (unsigned long)chunks[c],
                        (unsigned long)caps[k]);
            list_free(&found);
        }
    }
    list_free(&whole);
    free(model);
    tp_trie_free(trie);
    markers_free(&set);
}

/* Every prefix of every feed schedule must report exactly the certain matches and the
 * holdback of the model, for many random marker sets and inputs over a small alphabet (which
 * makes overlaps, shared prefixes and held matches common). */
static void test_random_against_model(void) {
    check_rng rng = {0x9e3779b97f4a7c15ULL};
    enum { TRIALS = 3000, MAX_MARKERS = 6, MAX_MARKER_LEN = 5, MAX_INPUT = 48 };
    uint8_t marker_bytes[MAX_MARKERS][MAX_MARKER_LEN];
    const uint8_t *ptrs[MAX_MARKERS];
    size_t lens[MAX_MARKERS];
    uint8_t input[MAX_INPUT];
    tp_match model[MAX_INPUT];
    unsigned long reported = 0;
    int trial;

    for (trial = 0; trial < TRIALS && check_failures < 20; trial++) {
        marker_set set;
        size_t n_markers = 1 + check_rng_below(&rng, MAX_MARKERS);
        size_t alphabet = 2 + check_rng_below(&rng, 3);
        size_t len = check_rng_below(&rng, MAX_INPUT + 1);
        size_t i, n = 0, cap, holdback, n_model;
        tp_trie *trie;

        /* Distinct markers. */
        while (n < n_markers) {
            size_t mlen = 1 + check_rng_below(&rng, MAX_MARKER_LEN), j, dup = 0;
            for (j = 0; j < mlen; j++)
                marker_bytes[n][j] = (uint8_t)('a' + check_rng_below(&rng, alphabet));
            for (j = 0; j < n; j++)
                if (lens[j] == mlen && memcmp(marker_bytes[j], marker_bytes[n], mlen) == 0) dup = 1;
            if (dup) continue;
            ptrs[n] = marker_bytes[n];
            lens[n] = mlen;
            n++;
        }
        for (i = 0; i < len; i++) input[i] = (uint8_t)('a' + check_rng_below(&rng, alphabet));
        set.ptrs = ptrs;
        set.lens = lens;
        set.n = n_markers;
        trie = trie_from_set(&set);

        for (cap = 1; cap <= 16; cap += 15) {
            tp_matcher *m = new_matcher(trie);
            match_list found = {NULL, 0, 0};
            size_t done = 0, before = check_failures;
            while (done < len) {
                size_t chunk = 1 + check_rng_below(&rng, 6);
                if (chunk > len - done) chunk = len - done;
                feed_checked(m, input + done, chunk, cap, &found);
                done += chunk;
                n_model = model_matches(&set, input, done, 0, model, &holdback);
                if (cap > 1) {
                    /* 16 is room for every match one feed can decide (at most the held bytes
                     * plus the chunk), so each feed reports all that became certain. */
                    CHECK_MATCHES(found.items, found.n, model, n_model);
                    CHECK_EQ(tp_matcher_holdback(m), holdback);
                } else {
                    /* A full array may leave certain matches for the next call. */
                    CHECK(found.n <= n_model && same_matches(found.items, found.n, model, found.n));
                }
            }
            finish_checked(m, cap, &found);
            n_model = model_matches(&set, input, len, 1, model, &holdback);
            CHECK_MATCHES(found.items, found.n, model, n_model);
            reported += (unsigned long)found.n;
            if (check_failures != before) {
                fprintf(stderr, "    (trial %d, cap %lu) markers:", trial, (unsigned long)cap);
                for (i = 0; i < n_markers; i++)
                    fprintf(stderr, " %.*s", (int)lens[i], (const char *)ptrs[i]);
                fprintf(stderr, "; input: %.*s\n", (int)len, (const char *)input);
            }
            list_free(&found);
            tp_matcher_free(m);
        }
        tp_trie_free(trie);
    }
    CHECK(reported > 1000); /* the generator does produce matches */
}

int main(void) {
    static const check_test tests[] = {
        CHECK_TEST(test_construction_errors), CHECK_TEST(test_marker_count_limits),
        CHECK_TEST(test_accessors),           CHECK_TEST(test_documented_example),
        CHECK_TEST(test_leftmost_longest),    CHECK_TEST(test_small_out_arrays),
        CHECK_TEST(test_finish_reset),        CHECK_TEST(test_longest_marker),
        CHECK_TEST(test_splits_agree),        CHECK_TEST(test_random_against_model),
    };
    return check_main("test_trie", tests, sizeof tests / sizeof *tests);
}
