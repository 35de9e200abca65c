/* trie.c: Aho-Corasick marker automaton with leftmost-longest streaming matches.
 *
 * The automaton is a full DFA over byte classes (bytes that occur in no marker share
 * class 0), so one table lookup per byte.  Per state it stores the longest marker
 * that ends there and "live": the length of the longest suffix of the state's string
 * that can still grow into a marker.  A complete marker is held while a live suffix
 * starts at or before it (a longer or earlier match could still win); once decided,
 * matching restarts at its end and the few bytes consumed past it are rescanned from
 * a small fixed buffer.  The state's string is a prefix of some marker, so those bytes
 * are rebuilt from the marker pool: nothing is copied per byte. */
#include "trie.h"

#include <string.h>

#include "alloc.h"

#define NO_STATE UINT32_MAX
#define SCRATCH_CAP (TP_TRIE_MAX_MARKER_LEN + 4)

struct tp_trie {
    size_t n_markers;
    size_t max_len;
    uint8_t *pool;        /* all markers, concatenated */
    uint32_t *marker_off; /* n_markers + 1 offsets into pool */
    uint32_t n_states;
    uint32_t n_classes;
    uint16_t byte_class[256]; /* up to 257 classes when every byte occurs in a marker */
    uint8_t root_stays[256]; /* 1: from the root, this byte leads back to the root */
    int single_first;        /* the only byte that leaves the root, or -1 */
    uint32_t *delta;         /* n_states * n_classes */
    uint16_t *depth;
    uint16_t *live;
    int32_t *match_id; /* longest marker that is a suffix of the state's string, or -1 */
    uint16_t *match_len;
    uint32_t *str_off; /* pool offset of a marker whose prefix is the state's string */
    tp_allocator alloc;
};

struct tp_matcher {
    /* What a feed of plain text reads and writes (tp_matcher_all_plain, tp_matcher_skip), in
     * the first cache line: many streams' matchers are fed in one batch step. */
    const tp_trie *trie;
    uint32_t state;
    int finished;
    int has_cand;
    uint64_t fed;  /* bytes fed */
    uint64_t scan; /* offset of the next byte the automaton reads */
    /* Bytes to rescan after a decided match: scratch[scratch_pos..scratch_len) sit at
     * offsets scratch_base + index. */
    size_t scratch_pos, scratch_len;
    tp_match cand;
    uint64_t scratch_base;
    uint8_t scratch[SCRATCH_CAP];
    void *allocation; /* what to free: where its aligned storage begins (NULL: placed) */
    tp_allocator alloc;
};

static void trie_release(tp_trie *t) {
    tp_allocator a = t->alloc;
    tp_free(&a, t->pool);
    tp_free(&a, t->marker_off);
    tp_free(&a, t->delta);
    tp_free(&a, t->depth);
    tp_free(&a, t->live);
    tp_free(&a, t->match_id);
    tp_free(&a, t->match_len);
    tp_free(&a, t->str_off);
    tp_free(&a, t);
}

void tp_trie_free(tp_trie *trie) {
    if (trie) trie_release(trie);
}

static tp_status validate(const uint8_t *const *markers, const size_t *lens, size_t n,
                          size_t *bad_index, size_t *total) {
    size_t i, j;
    *total = 0;
    if (n == 0 || n > TP_TRIE_MAX_MARKERS || !markers || !lens) {
        *bad_index = n;
        return TP_ERR_ARG;
    }
    for (i = 0; i < n; i++) {
        if (lens[i] == 0 || lens[i] > TP_TRIE_MAX_MARKER_LEN || !markers[i]) {
            *bad_index = i;
            return TP_ERR_ARG;
        }
        *total += lens[i];
    }
    /* Duplicates: quadratic, but n is at most a few thousand and this runs once. */
    for (i = 1; i < n; i++) {
        for (j = 0; j < i; j++) {
            if (lens[i] == lens[j] && memcmp(markers[i], markers[j], lens[i]) == 0) {
                *bad_index = i;
                return TP_ERR_ARG;
            }
        }
    }
    return TP_OK;
}

/* The markers, concatenated into the pool, and the byte classes: class 0 for bytes in no
 * marker. */
static tp_status copy_markers(tp_trie *t, const uint8_t *const *markers, const size_t *lens,
                              size_t n, size_t total) {
    size_t i, k;
    uint32_t nc = 1;
    t->pool = (uint8_t *)tp_alloc(&t->alloc, total);
    t->marker_off = (uint32_t *)tp_alloc_array(&t->alloc, n + 1, sizeof(uint32_t));
    if (!t->pool || !t->marker_off) return TP_ERR_NOMEM;
    for (i = 0, k = 0; i < n; i++) {
        t->marker_off[i] = (uint32_t)k;
        memcpy(t->pool + k, markers[i], lens[i]);
        k += lens[i];
        if (lens[i] > t->max_len) t->max_len = lens[i];
    }
    t->marker_off[n] = (uint32_t)k;
    for (k = 0; k < total; k++) {
        uint8_t b = t->pool[k];
        if (t->byte_class[b] == 0) t->byte_class[b] = (uint16_t)nc++;
    }
    t->n_classes = nc;
    return TP_OK;
}

/* What building the automaton needs besides the trie itself, for max_states states. */
typedef struct build_scratch {
    uint32_t *fail, *queue;
    uint8_t *has_child;
} build_scratch;

/* The per-state tables, sized for the worst case: one state per marker byte, plus the
 * root.  Every transition starts undefined, every state without a match. */
static tp_status alloc_tables(tp_trie *t, build_scratch *b, uint32_t max_states) {
    const tp_allocator *a = &t->alloc;
    size_t k, nc = t->n_classes;
    t->delta = (uint32_t *)tp_alloc_array(a, (size_t)max_states * nc, sizeof(uint32_t));
    t->depth = (uint16_t *)tp_alloc_array_zeroed(a, max_states, sizeof(uint16_t));
    t->live = (uint16_t *)tp_alloc_array_zeroed(a, max_states, sizeof(uint16_t));
    t->match_id = (int32_t *)tp_alloc_array(a, max_states, sizeof(int32_t));
    t->match_len = (uint16_t *)tp_alloc_array_zeroed(a, max_states, sizeof(uint16_t));
    t->str_off = (uint32_t *)tp_alloc_array_zeroed(a, max_states, sizeof(uint32_t));
    b->fail = (uint32_t *)tp_alloc_array_zeroed(a, max_states, sizeof(uint32_t));
    b->queue = (uint32_t *)tp_alloc_array(a, max_states, sizeof(uint32_t));
    b->has_child = (uint8_t *)tp_alloc_zeroed(a, max_states);
    if (!t->delta || !t->depth || !t->live || !t->match_id || !t->match_len || !t->str_off ||
        !b->fail || !b->queue || !b->has_child)
        return TP_ERR_NOMEM;
    for (k = 0; k < (size_t)max_states * nc; k++) t->delta[k] = NO_STATE;
    for (k = 0; k < max_states; k++) t->match_id[k] = -1;
    return TP_OK;
}

/* The goto function: the plain trie of the markers. */
static void add_markers(tp_trie *t, build_scratch *b, const size_t *lens, size_t n) {
    uint32_t nc = t->n_classes;
    size_t i, k;
    t->n_states = 1;
    for (i = 0; i < n; i++) {
        const uint8_t *m = t->pool + t->marker_off[i];
        uint32_t s = 0;
        for (k = 0; k < lens[i]; k++) {
            uint32_t *slot = &t->delta[(size_t)s * nc + t->byte_class[m[k]]];
            if (*slot == NO_STATE) {
                uint32_t fresh = t->n_states++;
                *slot = fresh;
                t->depth[fresh] = (uint16_t)(k + 1);
                t->str_off[fresh] = t->marker_off[i];
                b->has_child[s] = 1;
            }
            s = *slot;
        }
        t->match_id[s] = (int32_t)i;
        t->match_len[s] = (uint16_t)lens[i];
    }
}

/* Failure links in breadth-first order complete the DFA; the per-state facts that follow
 * the failure chain are derived in the same pass (parents come first). */
static void link_failures(tp_trie *t, build_scratch *b) {
    uint32_t nc = t->n_classes, head = 0, tail = 0, s, c;
    uint32_t *fail = b->fail, *queue = b->queue;
    for (c = 0; c < nc; c++) {
        uint32_t *slot = &t->delta[c];
        if (*slot == NO_STATE) {
            *slot = 0;
        } else {
            fail[*slot] = 0;
            queue[tail++] = *slot;
        }
    }
    t->live[0] = 0;
    while (head < tail) {
        s = queue[head++];
        if (t->match_id[s] < 0) {
            t->match_id[s] = t->match_id[fail[s]];
            t->match_len[s] = t->match_len[fail[s]];
        }
        t->live[s] = b->has_child[s] ? t->depth[s] : t->live[fail[s]];
        for (c = 0; c < nc; c++) {
            uint32_t *slot = &t->delta[(size_t)s * nc + c];
            uint32_t via_fail = t->delta[(size_t)fail[s] * nc + c];
            if (*slot == NO_STATE) {
                *slot = via_fail;
            } else {
                fail[*slot] = via_fail;
                queue[tail++] = *slot;
            }
        }
    }
}

/* What the fast paths ask of the root: which bytes stay there, and the only byte that
 * leaves it, if one alone does.  The transition table gives back the worst case's rows
 * the markers did not use (it stays as it is when that fails). */
static void finish_root(tp_trie *t) {
    size_t used = (size_t)t->n_states * t->n_classes * sizeof(uint32_t);
    uint32_t *tight = (uint32_t *)tp_realloc(&t->alloc, t->delta, used);
    int firsts = 0;
    size_t k;
    if (tight) t->delta = tight;
    t->single_first = -1;
    for (k = 0; k < 256; k++) {
        t->root_stays[k] = t->delta[t->byte_class[k]] == 0;
        if (!t->root_stays[k]) {
            firsts++;
            t->single_first = (int)k;
        }
    }
    if (firsts != 1) t->single_first = -1;
}

tp_status tp_trie_new(const uint8_t *const *markers, const size_t *lens, size_t n, tp_trie **out,
                      size_t *bad_index) {
    return tp_trie_new_with(NULL, markers, lens, n, out, bad_index);
}

tp_status tp_trie_new_with(const tp_allocator *alloc, const uint8_t *const *markers,
                           const size_t *lens, size_t n, tp_trie **out, size_t *bad_index) {
    size_t total, unused_index;
    build_scratch b = {NULL, NULL, NULL};
    tp_allocator a;
    tp_trie *t;
    tp_status st;

    if (!out) return TP_ERR_ARG;
    *out = NULL;
    if (!bad_index) bad_index = &unused_index;
    TP_TRY(tp_allocator_init(&a, alloc));
    st = validate(markers, lens, n, bad_index, &total);
    if (st != TP_OK) return st;

    t = (tp_trie *)tp_alloc_zeroed(&a, sizeof *t);
    if (!t) return TP_ERR_NOMEM;
    t->alloc = a;
    t->n_markers = n;
    st = copy_markers(t, markers, lens, n, total);
    if (st == TP_OK) st = alloc_tables(t, &b, (uint32_t)total + 1);
    if (st == TP_OK) {
        add_markers(t, &b, lens, n);
        link_failures(t, &b);
        finish_root(t);
    }
    tp_free(&a, b.fail);
    tp_free(&a, b.queue);
    tp_free(&a, b.has_child);
    if (st != TP_OK) {
        trie_release(t);
        return st;
    }
    *out = t;
    return TP_OK;
}

size_t tp_trie_count(const tp_trie *trie) { return trie->n_markers; }

size_t tp_trie_max_length(const tp_trie *trie) { return trie->max_len; }

const uint8_t *tp_trie_marker(const tp_trie *trie, size_t id, size_t *len) {
    if (id >= trie->n_markers) return NULL;
    if (len) *len = trie->marker_off[id + 1] - trie->marker_off[id];
    return trie->pool + trie->marker_off[id];
}

tp_status tp_matcher_new(const tp_trie *trie, tp_matcher **out) {
    return tp_matcher_new_with(NULL, trie, NULL, out);
}

tp_status tp_matcher_new_in(const tp_trie *trie, tp_place *place, tp_matcher **out) {
    return tp_matcher_new_with(NULL, trie, place, out);
}

tp_status tp_matcher_new_with(const tp_allocator *alloc, const tp_trie *trie, tp_place *place,
                              tp_matcher **out) {
    tp_allocator a;
    tp_matcher *m;
    void *allocation;
    if (!trie || !out) return TP_ERR_ARG;
    TP_TRY(tp_allocator_init(&a, alloc));
    m = (tp_matcher *)tp_place_take(&a, place, sizeof *m, &allocation);
    if (!m) return TP_ERR_NOMEM;
    m->allocation = allocation;
    m->alloc = a;
    m->trie = trie;
    tp_matcher_reset(m);
    *out = m;
    return TP_OK;
}

void tp_matcher_free(tp_matcher *m) {
    tp_allocator a;
    if (!m) return;
    a = m->alloc;
    tp_free(&a, m->allocation);
}

void tp_matcher_reset(tp_matcher *m) {
    m->state = 0;
    m->fed = 0;
    m->scan = 0;
    m->has_cand = 0;
    m->finished = 0;
    m->scratch_base = 0;
    m->scratch_pos = m->scratch_len = 0;
}

/* Loads scratch with the bytes from the decided match's end up to the scan position.
 * They are the tail of `prev`'s string (a marker prefix) followed by `extra` bytes. */
static void load_rescan(tp_matcher *m, uint32_t prev, const uint8_t *extra, size_t n_extra) {
    const tp_trie *t = m->trie;
    uint64_t prev_end = m->scan - n_extra;
    uint64_t from = m->cand.end;
    size_t n_prev = (size_t)(prev_end - from);
    const uint8_t *str = t->pool + t->str_off[prev];
    memcpy(m->scratch, str + (t->depth[prev] - n_prev), n_prev);
    memcpy(m->scratch + n_prev, extra, n_extra);
    m->scratch_base = from;
    m->scratch_pos = 0;
    m->scratch_len = n_prev + n_extra;
}

/* Runs the automaton over one byte at offset m->scan.  Returns 1 and writes *out when a
 * held match is decided; matching then restarts at its end. */
static int step(tp_matcher *m, uint8_t b, int from_scratch, tp_match *out) {
    const tp_trie *t = m->trie;
    uint32_t prev = m->state;
    uint32_t s = t->delta[(size_t)prev * t->n_classes + t->byte_class[b]];
    int32_t id = t->match_id[s];
    m->state = s;
    m->scan++;
    if (id >= 0) {
        uint64_t start = m->scan - t->match_len[s];
        if (!m->has_cand || start <= m->cand.start) {
            m->has_cand = 1;
            m->cand.id = (uint32_t)id;
            m->cand.start = start;
            m->cand.end = m->scan;
        }
    }
    if (!m->has_cand || m->scan - t->live[s] <= m->cand.start) return 0;
    /* Decided: nothing that starts at or before the held match can still grow. */
    *out = m->cand;
    m->has_cand = 0;
    m->state = 0;
    if (m->cand.end < m->scan) {
        if (from_scratch) {
            m->scratch_pos = (size_t)(m->cand.end - m->scratch_base);
        } else {
            load_rescan(m, prev, &b, 1);
        }
    }
    m->scan = m->cand.end;
    return 1;
}

/* Rescans pending scratch bytes while there is room for matches. */
static size_t drain_scratch(tp_matcher *m, tp_match *out, size_t cap, size_t n) {
    while (m->scratch_pos < m->scratch_len && n < cap) {
        uint8_t b = m->scratch[m->scratch_pos++];
        n += (size_t)step(m, b, 1, &out[n]);
    }
    return n;
}

/* Bytes from buf[0] that leave an idle matcher at its root. */
static size_t root_run(const tp_trie *t, const uint8_t *buf, size_t len) {
    size_t skip = 0;
    if (t->single_first >= 0) {
        const uint8_t *hit = (const uint8_t *)memchr(buf, t->single_first, len);
        return hit ? (size_t)(hit - buf) : len;
    }
    while (skip < len && t->root_stays[buf[skip]]) skip++;
    return skip;
}

static int idle_at_root(const tp_matcher *m) {
    return !m->finished && m->state == 0 && !m->has_cand && m->scratch_pos == m->scratch_len;
}

int tp_matcher_all_plain(const tp_matcher *m, const uint8_t *buf, size_t len) {
    const tp_trie *t = m->trie;
    size_t k;
    unsigned stays = 1;
    if (!idle_at_root(m)) return 0;
    if (len > 16) return root_run(t, buf, len) == len;
    for (k = 0; k < len; k++) stays &= t->root_stays[buf[k]]; /* no branch per byte */
    return (int)stays;
}

void tp_matcher_skip(tp_matcher *m, size_t n) {
    m->fed += n;
    m->scan += n;
}

size_t tp_matcher_feed(tp_matcher *m, const uint8_t *buf, size_t len, tp_match *out, size_t cap,
                       size_t *n_out) {
    const tp_trie *t = m->trie;
    size_t i = 0, n = 0;
    if (m->finished || cap == 0) {
        if (n_out) *n_out = 0;
        return 0;
    }
    n = drain_scratch(m, out, cap, n);
    while (i < len && n < cap) {
        if (m->state == 0 && !m->has_cand && m->scratch_pos == m->scratch_len) {
            /* Fast path: skip bytes that cannot start a marker. */
            size_t skip = root_run(t, buf + i, len - i);
            i += skip;
            m->fed += skip;
            m->scan += skip;
            if (i == len) break;
        }
        m->fed++;
        if (step(m, buf[i++], 0, &out[n])) {
            n++;
            n = drain_scratch(m, out, cap, n);
        }
    }
    if (n_out) *n_out = n;
    return i;
}

tp_status tp_matcher_finish(tp_matcher *m, tp_match *out, size_t cap, size_t *n_out) {
    const tp_trie *t = m->trie;
    size_t n = 0;
    if (n_out) *n_out = 0;
    if (m->finished) return TP_OK;
    for (;;) {
        n = drain_scratch(m, out, cap, n);
        if (m->scratch_pos < m->scratch_len) break; /* out is full */
        if (!m->has_cand) {
            m->finished = 1;
            m->state = 0;
            break;
        }
        if (n == cap) break;
        /* End of input decides the held match; rescan what followed it. */
        out[n++] = m->cand;
        m->has_cand = 0;
        if (m->cand.end < m->scan) {
            uint32_t s = m->state;
            size_t n_tail = (size_t)(m->scan - m->cand.end);
            memcpy(m->scratch, t->pool + t->str_off[s] + (t->depth[s] - n_tail), n_tail);
            m->scratch_base = m->cand.end;
            m->scratch_pos = 0;
            m->scratch_len = n_tail;
        }
        m->state = 0;
        m->scan = m->cand.end;
    }
    if (n_out) *n_out = n;
    return m->finished ? TP_OK : TP_ERR_NOSPACE;
}

int tp_matcher_finished(const tp_matcher *m) { return m->finished; }

uint64_t tp_matcher_position(const tp_matcher *m) { return m->fed; }

size_t tp_matcher_holdback(const tp_matcher *m) {
    if (m->finished) return 0;
    return (size_t)(m->fed - (m->scan - m->trie->live[m->state]));
}
