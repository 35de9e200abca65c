/* test_m3value.c: the MiniMax-M3 value converter (csrc/m3value.h): tag trees to JSON by the
 * schema at each place, malformed tags, schema nodes, and any input (truncated anywhere)
 * converting to JSON or to "malformed" without reading outside it. */
#include "m3value.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "stream.h"
#include "text.h"

#define NS "]<]minimax[>["

static void *heap_alloc(void *ctx, size_t size) {
    (void)ctx;
    return malloc(size);
}

static void *heap_realloc(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    return realloc(ptr, size);
}

static void heap_free(void *ctx, void *ptr) {
    (void)ctx;
    free(ptr);
}

/* The converters append to buffers that grow through their owner's allocator: here, the heap. */
static const tp_allocator heap = {heap_alloc, heap_realloc, heap_free, NULL};

static void put_u32(tp_buf *b, uint32_t v) {
    uint8_t le[4];
    le[0] = (uint8_t)v, le[1] = (uint8_t)(v >> 8), le[2] = (uint8_t)(v >> 16),
    le[3] = (uint8_t)(v >> 24);
    REQUIRE(tp_buf_append(b, le, 4) == TP_OK);
}

/* A node with one type, no properties, no items. */
static void leaf_node(tp_buf *b, uint32_t type) {
    put_u32(b, 1);
    put_u32(b, type);
    put_u32(b, 0);
    put_u32(b, 0);
}

/* An object node: {"city": string, "floor": integer}. */
static void object_node(tp_buf *b) {
    tp_buf child = TP_BUF_INIT(&heap);
    put_u32(b, 1);
    put_u32(b, TP_TYPE_OBJECT);
    put_u32(b, 2);
    put_u32(b, 4);
    REQUIRE(tp_buf_append(b, "city", 4) == TP_OK);
    leaf_node(&child, TP_TYPE_STRING);
    put_u32(b, (uint32_t)child.len);
    REQUIRE(tp_buf_append(b, child.data, child.len) == TP_OK);
    child.len = 0;
    put_u32(b, 5);
    REQUIRE(tp_buf_append(b, "floor", 5) == TP_OK);
    leaf_node(&child, TP_TYPE_INTEGER);
    put_u32(b, (uint32_t)child.len);
    REQUIRE(tp_buf_append(b, child.data, child.len) == TP_OK);
    put_u32(b, 0);
    tp_buf_free(&child);
}

/* An array node whose items are object_node. */
static void array_node(tp_buf *b) {
    tp_buf items = TP_BUF_INIT(&heap);
    put_u32(b, 1);
    put_u32(b, TP_TYPE_ARRAY);
    put_u32(b, 0);
    object_node(&items);
    put_u32(b, (uint32_t)items.len);
    REQUIRE(tp_buf_append(b, items.data, items.len) == TP_OK);
    tp_buf_free(&items);
}

static tp_json *scanner(void) {
    tp_json *s = NULL;
    REQUIRE(tp_json_new(TP_JSON_STRICT, TP_JSON_DEFAULT_MAX_DEPTH, &s) == TP_OK);
    return s;
}

/* Converts text with the node (NULL and known 0: not in the schema); expected NULL: malformed. */
static void check_case(const tp_buf *node, int known, const char *text, const char *expected) {
    tp_json *s = scanner();
    tp_buf out = TP_BUF_INIT(&heap);
    uint32_t types[1];
    int ok = -1;
    types[0] = TP_TYPE_OBJECT;
    if (node && node->len >= 8)
        types[0] = (uint32_t)node->data[4] | (uint32_t)node->data[5] << 8; /* its one type */
    REQUIRE(tp_m3_value_to_json(&out, s, types, 1, node ? node->data : NULL, node ? node->len : 0,
                                known, (const uint8_t *)text, strlen(text), &ok) == TP_OK);
    if (expected) {
        CHECK_EQ(ok, 1);
        CHECK_BYTES(out.data ? (const void *)out.data : "", out.len, expected, strlen(expected));
    } else {
        CHECK_EQ(ok, 0);
    }
    if (check_failures) fprintf(stderr, "    input: %s\n", text);
    tp_buf_free(&out);
    tp_json_free(s);
}

static void test_by_schema(void) {
    tp_buf object = TP_BUF_INIT(&heap), array = TP_BUF_INIT(&heap);
    object_node(&object);
    array_node(&array);
    check_case(&object, 1, NS "<city>Paris" NS "</city>\n" NS "<floor> 3 " NS "</floor>",
               "{\"city\": \"Paris\", \"floor\": 3}");
    check_case(&object, 1, NS "<floor>x" NS "</floor>", NULL); /* x is no integer */
    check_case(&object, 1, NS "<floor>5.0" NS "</floor>", "{\"floor\": 5.0}"); /* a whole one */
    check_case(&object, 1, NS "<floor>2.5" NS "</floor>", NULL);
    check_case(&object, 1, "", "{}");
    check_case(&object, 1, " \n", "{}");
    check_case(&object, 1, "{\"a\": 1}", "{\"a\": 1}"); /* JSON text, typed as a flat value */
    check_case(&object, 1, NS "<item>1" NS "</item>", "{\"item\": \"1\"}");
    check_case(&array, 1, "", "[]");
    check_case(&array, 1,
               NS "<item>" NS "<city>A" NS "</city>" NS "</item>" NS "<item>" NS "<floor>2" NS
                  "</floor>" NS "</item>",
               "[{\"city\": \"A\"}, {\"floor\": 2}]");
    check_case(&array, 1, NS "<city>A" NS "</city>", NULL); /* an array child not <item> */
    tp_buf_free(&object);
    tp_buf_free(&array);
}

static void test_by_tags(void) {
    check_case(NULL, 0, "plain", "\"plain\"");
    check_case(NULL, 0, "", "\"\"");
    check_case(NULL, 0, NS "<item>1" NS "</item>" NS "<item>" NS "</item>", "[\"1\", \"\"]");
    check_case(NULL, 0, NS "<a>1" NS "</a>" NS "<item>2" NS "</item>",
               "{\"a\": \"1\", \"item\": \"2\"}");
    check_case(NULL, 0, NS "<a>" NS "<b>" NS "</b>" NS "</a>", "{\"a\": {\"b\": \"\"}}");
}

static void test_malformed(void) {
    check_case(NULL, 0, NS "<a>1" NS "</b>", NULL);
    check_case(NULL, 0, "x" NS "<a>1" NS "</a>", NULL);
    check_case(NULL, 0, NS "<a>1" NS "</a>x", NULL);
    check_case(NULL, 0, NS "<a>1", NULL);
    check_case(NULL, 0, NS "<a>1" NS "</a", NULL);
    check_case(NULL, 0, NS "<>1" NS "</>", NULL);
    check_case(NULL, 0, NS "</a>", NULL);
    check_case(NULL, 0, NS, NULL);
    check_case(NULL, 0, NS "<", NULL);
    check_case(NULL, 0, NS "<a" NS ">1" NS "</a>", NULL);
}

static void test_depth_limit(void) {
    char *text = (char *)malloc((TP_M3_MAX_DEPTH + 2) * 40);
    size_t levels, k;
    REQUIRE(text != NULL);
    for (levels = TP_M3_MAX_DEPTH; levels <= TP_M3_MAX_DEPTH + 1; levels++) {
        text[0] = '\0';
        for (k = 0; k < levels; k++) strcat(text, NS "<a>");
        strcat(text, "x");
        for (k = 0; k < levels; k++) strcat(text, NS "</a>");
        {
            tp_json *s = scanner();
            tp_buf out = TP_BUF_INIT(&heap);
            int ok = -1;
            REQUIRE(tp_m3_value_to_json(&out, s, NULL, 0, NULL, 0, 0, (const uint8_t *)text,
                                        strlen(text), &ok) == TP_OK);
            CHECK_EQ(ok, levels <= TP_M3_MAX_DEPTH);
            tp_buf_free(&out);
            tp_json_free(s);
        }
    }
    free(text);
}

static void test_schema_nodes(void) {
    tp_buf array = TP_BUF_INIT(&heap);
    size_t cut;
    array_node(&array);
    CHECK(tp_m3_schema_valid(array.data, array.len, 0));
    for (cut = 0; cut < array.len; cut++) CHECK(!tp_m3_schema_valid(array.data, cut, 0));
    CHECK(!tp_m3_schema_valid(array.data, array.len, TP_M3_MAX_DEPTH)); /* too deep */
    tp_buf_free(&array);
}

/* Random texts of tag pieces, every prefix of each: JSON or malformed, never a crash. */
static void test_random_inputs(void) {
    static const char *pieces[] = {NS, "<", "</", ">", "item", "a", " ", "1", "\xc3", "]"};
    check_rng rng = {0x9e3779b97f4a7c15ull};
    tp_buf object = TP_BUF_INIT(&heap), array = TP_BUF_INIT(&heap);
    tp_json *s = scanner(), *verify = scanner();
    unsigned long ok_count = 0;
    int trial;
    object_node(&object);
    array_node(&array);
    for (trial = 0; trial < 3000; trial++) {
        uint8_t text[512];
        size_t len = 0, n = check_rng_next(&rng) % 24, k, cut;
        for (k = 0; k < n; k++) {
            const char *p = pieces[check_rng_next(&rng) % (sizeof pieces / sizeof *pieces)];
            memcpy(text + len, p, strlen(p));
            len += strlen(p);
        }
        for (cut = 0; cut <= len; cut++) {
            const tp_buf *node = trial % 3 == 0 ? &object : trial % 3 == 1 ? &array : NULL;
            uint32_t types[1];
            tp_buf out = TP_BUF_INIT(&heap), clean = TP_BUF_INIT(&heap);
            int ok = -1;
            size_t used = 0;
            types[0] = trial % 3 == 0 ? TP_TYPE_OBJECT : TP_TYPE_ARRAY;
            uint8_t *exact;
            REQUIRE(tp_utf8_replace_append(&clean, text, cut) == TP_OK);
            /* a copy of the exact length: a read past it is a read outside the value */
            exact = (uint8_t *)malloc(clean.len ? clean.len : 1);
            REQUIRE(exact != NULL);
            if (clean.len) memcpy(exact, clean.data, clean.len);
            REQUIRE(tp_m3_value_to_json(&out, s, types, 1, node ? node->data : NULL,
                                        node ? node->len : 0, node != NULL, exact, clean.len,
                                        &ok) == TP_OK);
            free(exact);
            CHECK(ok == 0 || ok == 1);
            if (ok) {
                ok_count++;
                tp_json_reset(verify);
                tp_json_feed(verify, out.data, out.len, &used);
                CHECK(tp_json_finish(verify) == TP_JSON_COMPLETE);
            }
            tp_buf_free(&out);
            tp_buf_free(&clean);
        }
    }
    CHECK(ok_count > 1000);
    tp_json_free(s);
    tp_json_free(verify);
    tp_buf_free(&object);
    tp_buf_free(&array);
}

int main(void) {
    static const check_test tests[] = {
        CHECK_TEST(test_by_schema),   CHECK_TEST(test_by_tags),      CHECK_TEST(test_malformed),
        CHECK_TEST(test_depth_limit), CHECK_TEST(test_schema_nodes), CHECK_TEST(test_random_inputs),
    };
    return check_main("test_m3value", tests, sizeof tests / sizeof *tests);
}
