/* test_pool.c: tp_pool (equal blocks from slabs) and tp_place (structs in a block, or on
 * the heap when they do not fit). */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "json.h"
#include "pool.h"
#include "trie.h"

static int all_zero(const uint8_t *p, size_t n) {
    size_t k;
    for (k = 0; k < n; k++)
        if (p[k]) return 0;
    return 1;
}

static void test_no_block_before_a_size(void) {
    tp_pool *pool = NULL;
    REQUIRE(tp_pool_new(&pool) == TP_OK);
    CHECK_EQ(tp_pool_block_size(pool), 0);
    CHECK(tp_pool_take(pool) == NULL);
    tp_pool_learn(pool, 0); /* no size: still none */
    CHECK_EQ(tp_pool_block_size(pool), 0);
    CHECK_EQ(tp_pool_new(NULL), TP_ERR_ARG);
    tp_pool_free(pool);
    tp_pool_free(NULL);
}

static void test_block_size_is_an_odd_number_of_lines(void) {
    static const size_t asked[] = {1, 64, 65, 128, 3968, 4096, 4097};
    static const size_t lines[] = {1, 1, 3, 3, 63, 65, 65};
    size_t k;
    for (k = 0; k < sizeof asked / sizeof *asked; k++) {
        tp_pool *pool = NULL;
        REQUIRE(tp_pool_new(&pool) == TP_OK);
        tp_pool_learn(pool, asked[k]);
        CHECK_EQ(tp_pool_block_size(pool), lines[k] * 64);
        tp_pool_learn(pool, 100000); /* learnt once */
        CHECK_EQ(tp_pool_block_size(pool), lines[k] * 64);
        tp_pool_free(pool);
    }
}

/* Blocks across several slabs: aligned, zeroed, apart, and zeroed again when reused. */
static void test_blocks_are_aligned_zeroed_and_apart(void) {
    enum { N = 1500 }; /* more blocks of 4 KiB than a 2 MiB slab holds */
    static uint8_t *blocks[N];
    tp_pool *pool = NULL;
    size_t size, k;
    REQUIRE(tp_pool_new(&pool) == TP_OK);
    tp_pool_learn(pool, 4000);
    size = tp_pool_block_size(pool);
    for (k = 0; k < N; k++) {
        blocks[k] = (uint8_t *)tp_pool_take(pool);
        REQUIRE(blocks[k] != NULL);
        CHECK_EQ((uintptr_t)blocks[k] % TP_CACHE_LINE, 0);
        CHECK(all_zero(blocks[k], size));
        memset(blocks[k], (int)(k % 255) + 1, size); /* a block overlapping another shows */
    }
    CHECK_EQ(tp_pool_live(pool), N);
    for (k = 0; k < N; k++) {
        size_t j;
        for (j = 0; j < size; j++)
            if (blocks[k][j] != (uint8_t)(k % 255 + 1)) break;
        CHECK_EQ(j, size);
    }
    for (k = 0; k < N; k += 2) tp_pool_give_back(pool, blocks[k]);
    CHECK_EQ(tp_pool_live(pool), N / 2);
    for (k = 0; k < N; k += 2) {
        blocks[k] = (uint8_t *)tp_pool_take(pool);
        REQUIRE(blocks[k] != NULL);
        CHECK(all_zero(blocks[k], size));
    }
    CHECK_EQ(tp_pool_live(pool), N);
    tp_pool_give_back(pool, NULL); /* nothing to give back */
    for (k = 0; k < N; k++) tp_pool_give_back(pool, blocks[k]);
    CHECK_EQ(tp_pool_live(pool), 0);
    tp_pool_free(pool);
}

/* A block larger than a slab's share still comes (a slab then holds a few). */
static void test_large_blocks(void) {
    tp_pool *pool = NULL;
    uint8_t *a, *b;
    size_t size;
    REQUIRE(tp_pool_new(&pool) == TP_OK);
    tp_pool_learn(pool, (size_t)1 << 20);
    size = tp_pool_block_size(pool);
    a = (uint8_t *)tp_pool_take(pool);
    b = (uint8_t *)tp_pool_take(pool);
    REQUIRE(a != NULL && b != NULL);
    CHECK(a + size <= b || b + size <= a);
    a[size - 1] = b[size - 1] = 1;
    tp_pool_give_back(pool, a);
    tp_pool_give_back(pool, b);
    tp_pool_free(pool);
}

/* Takes from a place come from its block while they fit, then from the heap; wanted adds
 * up every take in whole lines either way. */
static void test_place_fills_its_block_then_the_heap(void) {
    tp_pool *pool = NULL;
    tp_place place = {NULL, NULL, 0};
    uint8_t *block, *first, *second, *third;
    void *allocation = (void *)&place;
    REQUIRE(tp_pool_new(&pool) == TP_OK);
    tp_pool_learn(pool, 256);
    block = (uint8_t *)tp_pool_take(pool);
    REQUIRE(block != NULL);
    place.next = block;
    place.end = block + tp_pool_block_size(pool); /* 5 lines */
    first = (uint8_t *)tp_place_take(NULL, &place, 100, &allocation);
    CHECK(first == block && allocation == NULL);
    second = (uint8_t *)tp_place_take(NULL, &place, 128, &allocation);
    CHECK(second == block + 128 && allocation == NULL);
    third = (uint8_t *)tp_place_take(NULL, &place, 129, &allocation); /* 3 lines: 1 left */
    REQUIRE(third != NULL);
    CHECK(allocation != NULL);
    CHECK((third < block || third >= block + 320) && (uintptr_t)third % 64 == 0);
    CHECK(all_zero(third, 129));
    free(allocation);
    CHECK_EQ(place.wanted, 128 + 128 + 192);
    third = (uint8_t *)tp_place_take(NULL, &place, 64, &allocation); /* the last line still fits */
    CHECK(third == block + 256 && allocation == NULL);
    third = (uint8_t *)tp_place_take(NULL, NULL, 10, &allocation); /* no place: the heap */
    REQUIRE(third != NULL && allocation != NULL);
    free(allocation);
    third = (uint8_t *)tp_place_take(NULL, &place, SIZE_MAX, &allocation); /* never wraps */
    CHECK(third == NULL && allocation == NULL);
    tp_pool_give_back(pool, block);
    tp_pool_free(pool);
}

/* A scanner and a matcher built in a block work like ones on the heap, and free nothing. */
static void test_structs_in_a_block(void) {
    static const uint8_t marker[] = "<tool_call>";
    const uint8_t *markers[1] = {marker};
    size_t lens[1] = {sizeof marker - 1};
    tp_pool *pool = NULL;
    tp_place place = {NULL, NULL, 0};
    tp_trie *trie = NULL;
    tp_matcher *m = NULL;
    tp_json *s = NULL;
    tp_match out[2];
    size_t n_out = 0, consumed = 0;
    uint8_t *block;
    static const uint8_t text[] = "a <tool_call>";
    static const uint8_t doc[] = "{\"a\": [1, {}]}";
    REQUIRE(tp_trie_new(markers, lens, 1, &trie, NULL) == TP_OK);
    REQUIRE(tp_pool_new(&pool) == TP_OK);
    tp_pool_learn(pool, 4096);
    block = (uint8_t *)tp_pool_take(pool);
    REQUIRE(block != NULL);
    place.next = block;
    place.end = block + tp_pool_block_size(pool);
    REQUIRE(tp_matcher_new_in(trie, &place, &m) == TP_OK);
    REQUIRE(tp_json_new_in(TP_JSON_STRICT, 64, &place, &s) == TP_OK);
    CHECK((uint8_t *)m == block);
    CHECK((uint8_t *)s > block && (uint8_t *)s < block + tp_pool_block_size(pool));
    tp_matcher_feed(m, text, sizeof text - 1, out, 2, &n_out);
    CHECK_EQ(n_out, 1);
    CHECK_EQ(out[0].start, 2);
    CHECK_EQ(tp_json_feed(s, doc, sizeof doc - 1, &consumed), TP_JSON_COMPLETE);
    CHECK_EQ(consumed, sizeof doc - 1);
    CHECK_EQ(tp_json_depth_room(s), 64);
    CHECK_EQ(tp_json_set_max_depth(s, 65), TP_ERR_ARG); /* past its room */
    CHECK_EQ(tp_json_set_max_depth(s, 0), TP_ERR_ARG);
    CHECK_EQ(tp_json_set_max_depth(s, 1), TP_OK);
    tp_json_reset(s);
    CHECK_EQ(tp_json_feed(s, (const uint8_t *)"[[", 2, &consumed), TP_JSON_ERROR);
    tp_matcher_free(m); /* in the block: nothing to free */
    tp_json_free(s);
    tp_pool_give_back(pool, block);
    tp_pool_free(pool);
    tp_trie_free(trie);
}

int main(void) {
    static const check_test tests[] = {
        CHECK_TEST(test_no_block_before_a_size),
        CHECK_TEST(test_block_size_is_an_odd_number_of_lines),
        CHECK_TEST(test_blocks_are_aligned_zeroed_and_apart),
        CHECK_TEST(test_large_blocks),
        CHECK_TEST(test_place_fills_its_block_then_the_heap),
        CHECK_TEST(test_structs_in_a_block),
    };
    return check_main("test_pool", tests, sizeof tests / sizeof *tests);
}
