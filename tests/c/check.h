/* check.h: a tiny assertion helper for the plain-C tests.
 *
 * CHECK* macros record a failure (naming the test, the line and the expression) and go on, so
 * one run reports every broken check.  REQUIRE stops the program: it guards results that the
 * rest of a test cannot do without, such as an allocation.  check_main() runs the tests and
 * returns the exit status. */
#ifndef TOOLPARSE_TEST_CHECK_H
#define TOOLPARSE_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *check_current_test = "(none)";
static unsigned long check_count;
static unsigned long check_failures;

static inline void check_report(const char *file, int line, const char *what) {
    check_failures++;
    fprintf(stderr, "%s:%d: [%s] check failed: %s\n", file, line, check_current_test, what);
}

#define CHECK(cond)                                           \
    do {                                                      \
        check_count++;                                        \
        if (!(cond)) check_report(__FILE__, __LINE__, #cond); \
    } while (0)

/* Compares as unsigned 64-bit integers and prints both sides on failure. */
#define CHECK_EQ(actual, expected)                                                   \
    do {                                                                             \
        unsigned long long check_a_ = (unsigned long long)(actual);                  \
        unsigned long long check_e_ = (unsigned long long)(expected);                \
        check_count++;                                                               \
        if (check_a_ != check_e_) {                                                  \
            check_report(__FILE__, __LINE__, #actual " == " #expected);              \
            fprintf(stderr, "    actual %llu, expected %llu\n", check_a_, check_e_); \
        }                                                                            \
    } while (0)

/* Compares byte strings given as (pointer, length) pairs; NULL pointers compare unequal. */
#define CHECK_BYTES(actual, actual_len, expected, expected_len)                 \
    do {                                                                        \
        const void *check_ap_ = (actual);                                       \
        const void *check_ep_ = (expected);                                     \
        size_t check_al_ = (actual_len), check_el_ = (expected_len);            \
        check_count++;                                                          \
        if (check_ap_ == NULL || check_ep_ == NULL || check_al_ != check_el_ || \
            memcmp(check_ap_, check_ep_, check_el_) != 0) {                     \
            check_report(__FILE__, __LINE__, #actual " == " #expected);         \
            check_print_bytes("    actual   ", check_ap_, check_al_);           \
            check_print_bytes("    expected ", check_ep_, check_el_);           \
        }                                                                       \
    } while (0)

#define CHECK_STR(actual, expected)                                                              \
    do {                                                                                         \
        const char *check_as_ = (actual);                                                        \
        const char *check_es_ = (expected);                                                      \
        CHECK_BYTES(check_as_, check_as_ ? strlen(check_as_) : 0, check_es_, strlen(check_es_)); \
    } while (0)

#define REQUIRE(cond)                                    \
    do {                                                 \
        check_count++;                                   \
        if (!(cond)) {                                   \
            check_report(__FILE__, __LINE__, #cond);     \
            fprintf(stderr, "    required; stopping\n"); \
            exit(EXIT_FAILURE);                          \
        }                                                \
    } while (0)

static inline void check_print_bytes(const char *label, const void *data, size_t len) {
    const unsigned char *bytes = (const unsigned char *)data;
    size_t i;
    fputs(label, stderr);
    if (bytes == NULL) {
        fputs("(null)\n", stderr);
        return;
    }
    fputc('"', stderr);
    for (i = 0; i < len && i < 200; i++) {
        if (bytes[i] == '"' || bytes[i] == '\\')
            fprintf(stderr, "\\%c", bytes[i]);
        else if (bytes[i] >= 0x20 && bytes[i] < 0x7f)
            fputc(bytes[i], stderr);
        else
            fprintf(stderr, "\\x%02x", bytes[i]);
    }
    fprintf(stderr, "\"%s (%lu bytes)\n", i < len ? "..." : "", (unsigned long)len);
}

typedef struct check_test {
    const char *name;
    void (*run)(void);
} check_test;

#define CHECK_TEST(fn) {#fn, fn}

static inline int check_main(const char *program, const check_test *tests, size_t n_tests) {
    size_t i;
    unsigned long failed_tests = 0;
    for (i = 0; i < n_tests; i++) {
        unsigned long failures_before = check_failures;
        check_current_test = tests[i].name;
        tests[i].run();
        if (check_failures != failures_before) failed_tests++;
    }
    printf("%s: %lu checks, %lu failed\n", program, check_count, check_failures);
    printf("%s: %lu passed, %lu failed\n", program, (unsigned long)n_tests - failed_tests,
           failed_tests);
    return check_failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* A small deterministic generator (xorshift64*), so random tests repeat exactly. */
typedef struct check_rng {
    unsigned long long state;
} check_rng;

static inline unsigned long long check_rng_next(check_rng *rng) {
    rng->state ^= rng->state >> 12;
    rng->state ^= rng->state << 25;
    rng->state ^= rng->state >> 27;
    return rng->state * 2685821657736338717ULL;
}

/* Uniform-enough integer in [0, bound); bound > 0. */
static inline size_t check_rng_below(check_rng *rng, size_t bound) {
    return (size_t)((check_rng_next(rng) >> 11) % bound);
}

#endif
