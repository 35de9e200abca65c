/* vm.c: the PEG virtual machine; docs/engine.md specifies it and
 * python/toolparse/reference/vm.py is its twin.
 *
 * State is data: a pc, explicit call / choice / recovery stacks, a log of tag events, and
 * the sub-state of a suspended UNTIL or JSON instruction; no C recursion.  An instruction
 * that needs bytes not fed yet suspends the VM and runs again on the next feed. */
#include "vm.h"

#include "json.h"
#include "text.h"

enum { R_OK, R_NEED, R_FAIL };

enum { LOG_OPEN, LOG_CLOSE, LOG_ERROR, LOG_ABORT, LOG_CONST };
enum { SUB_NONE, SUB_UNTIL, SUB_JSON, SUB_CHARS };
/* A failure that ends the parse: a stop's follow text did not come within the pending
 * limit (whitespace after the marker is held while the stop is undecided). */
#define FAIL_PENDING_LIMIT 0x100u
/* Not a failure of the parse: handing what is certain to the event builder ran out of
 * memory (a declared_param() lookahead asks it mid-run). */
#define FAIL_NOMEM 0x101u

typedef struct choice {
    uint32_t pc;
    uint64_t pos;
    size_t calls, log, recovers;
    uint32_t tags;
} choice;

typedef struct recovery {
    uint32_t handler;
    size_t calls, choices;
    uint32_t tags;
} recovery;

typedef struct log_entry {
    uint8_t kind;
    uint32_t a, b; /* OPEN: role, decode; ERROR: kind; ABORT: depth; CONST: string */
    uint64_t pos, offset;
} log_entry;

#define AT(v, type, i) TP_VEC_AT(v, type, i)

/* What UNTIL or JSON waits in: its stop set's matcher, or the JSON scanner. */
typedef union plain_target {
    tp_matcher *matcher;
    tp_json *scanner;
} plain_target;

struct tp_vm {
    /* At rest (rest_check): the one cache line a feed of plain text reads and writes.  A
     * batch touches thousands of streams per step, and each line is a likely miss. */
    int rest; /* SUB_UNTIL or SUB_JSON: waiting there with nothing undecided; else 0 */
    uint32_t emit_tags;
    plain_target rest_in;
    tp_emitter *emitter;
    uint64_t base; /* stream offset of window.data[0] */
    uint64_t pos;
    uint64_t fed_to;      /* UNTIL: input fed to the matcher up to here */
    uint64_t emitted_pos; /* emitted up to here */
    uint64_t max_stream;  /* tp_limits; 0: none */
    /* what the other fast path (feed_plain) reads besides */
    const uint32_t *code;
    uint32_t pc;
    int sub; /* the suspended instruction, if any */
    int eof, finished;
    int has_pending; /* UNTIL: a stop candidate is held in pending */
    int kind_checked; /* JSON: the kind of value required was checked */
    size_t cut_level;     /* choices below it were cut */
    size_t emitted_log;
    tp_buf window;
    tp_vec choices, log;
    tp_matcher **matchers; /* UNTIL: one per stop set */
    tp_json *scanners[3];  /* JSON */
    tp_vec special_starts; /* where special tokens start (ascending, trimmed with the window) */
    /* the rest */
    const tp_program *prog;
    uint32_t n_code, entry;
    int cut_short; /* the input ended because the output was cut off */
    tp_vec calls, recovers;
    uint32_t tags;
    uint64_t sub_start;
    /* UNTIL */
    uint64_t scan_from;
    int cut_done;
    tp_match pending;
    /* failure of the last matching instruction */
    uint32_t fail_kind;
    uint64_t fail_offset;
    /* the first failure for lack of input since the last error: what an error then is */
    int ran_out;
    uint64_t ran_out_offset;
    /* special-token markers: which strings need a special token */
    uint8_t *special_strings;
    uint32_t n_special_strings;
    /* limits (tp_limits) */
    uint64_t max_pending;
    uint64_t follow_scanned; /* whitespace after the pending stop checked up to here */
    void *allocation; /* what to free: where its aligned storage begins (NULL: placed) */
    void *matchers_allocation; /* the same for the matchers' table */
    tp_allocator alloc;
};

tp_status tp_vm_new(const tp_allocator *alloc, const tp_program *program, uint32_t entry,
                    tp_emitter *emitter, tp_place *place, tp_vm **out) {
    /* aligned, so that the fields a feed at rest touches share one cache line */
    void *allocation;
    tp_vm *vm = (tp_vm *)tp_place_take(alloc, place, sizeof(tp_vm), &allocation);
    uint32_t k, n_sets = tp_program_stopset_count(program);
    if (!vm) return TP_ERR_NOMEM;
    vm->allocation = allocation;
    vm->alloc = *alloc;
    vm->window.alloc = vm->choices.alloc = vm->log.alloc = &vm->alloc;
    vm->special_starts.alloc = vm->calls.alloc = vm->recovers.alloc = &vm->alloc;
    vm->prog = program;
    vm->code = tp_program_code(program, &vm->n_code);
    vm->entry = entry;
    vm->emitter = emitter;
    vm->matchers = (tp_matcher **)tp_place_take(alloc, place, (n_sets + 1) * sizeof(tp_matcher *),
                                                &vm->matchers_allocation);
    if (!vm->matchers) goto nomem;
    for (k = 0; k < n_sets; k++) {
        if (tp_matcher_new_with(alloc, tp_program_stopset(program, k)->trie, place,
                                &vm->matchers[k]) != TP_OK)
            goto nomem;
    }
    for (k = 0; k < 3; k++) {
        if (tp_json_new_with(alloc, (tp_json_dialect)k, TP_DEFAULT_MAX_DEPTH, place,
                             &vm->scanners[k]) != TP_OK)
            goto nomem;
    }
    vm->max_pending = TP_DEFAULT_MAX_PENDING_BYTES;
    /* the window always has storage, so offsets into it are never taken from NULL */
    if (tp_buf_reserve(&vm->window, 256) != TP_OK) goto nomem;
    tp_vm_reset(vm);
    *out = vm;
    return TP_OK;
nomem:
    tp_vm_free(vm);
    return TP_ERR_NOMEM;
}

void tp_vm_free(tp_vm *vm) {
    tp_allocator a;
    uint32_t k;
    if (!vm) return;
    a = vm->alloc;
    if (vm->matchers) {
        for (k = 0; k < tp_program_stopset_count(vm->prog); k++) tp_matcher_free(vm->matchers[k]);
    }
    tp_free(&a, vm->matchers_allocation);
    for (k = 0; k < 3; k++) tp_json_free(vm->scanners[k]);
    tp_buf_free(&vm->window);
    tp_vec_free(&vm->calls);
    tp_vec_free(&vm->choices);
    tp_vec_free(&vm->recovers);
    tp_vec_free(&vm->log);
    tp_free(&a, vm->special_strings);
    tp_vec_free(&vm->special_starts);
    tp_free(&a, vm->allocation);
}

tp_status tp_vm_set_special(tp_vm *vm, const uint8_t *flags, uint32_t n_strings) {
    uint8_t *copy = NULL;
    if (flags && n_strings) {
        copy = (uint8_t *)tp_alloc(&vm->alloc, n_strings);
        if (!copy) return TP_ERR_NOMEM;
        memcpy(copy, flags, n_strings);
    }
    tp_free(&vm->alloc, vm->special_strings);
    vm->special_strings = copy;
    vm->n_special_strings = copy ? n_strings : 0;
    return TP_OK;
}

tp_status tp_vm_set_limits(tp_vm *vm, uint32_t max_depth, uint64_t max_pending,
                           uint64_t max_stream) {
    tp_json *scanners[3] = {NULL, NULL, NULL};
    uint32_t k;
    tp_status st = TP_OK;
    int in_place = 1;
    if (max_depth < 1 || max_depth > TP_JSON_MAX_DEPTH_CEILING || max_pending < 1)
        return TP_ERR_ARG;
    for (k = 0; k < 3; k++) in_place = in_place && max_depth <= tp_json_depth_room(vm->scanners[k]);
    if (in_place) { /* the scanners keep their place (a pool's block) */
        for (k = 0; k < 3; k++) {
            tp_json_reset(vm->scanners[k]);
            tp_json_set_max_depth(vm->scanners[k], max_depth);
        }
    } else {
        for (k = 0; k < 3 && st == TP_OK; k++)
            st = tp_json_new_with(&vm->alloc, (tp_json_dialect)k, max_depth, NULL, &scanners[k]);
        if (st != TP_OK) {
            for (k = 0; k < 3; k++) tp_json_free(scanners[k]);
            return st;
        }
        for (k = 0; k < 3; k++) {
            tp_json_free(vm->scanners[k]);
            vm->scanners[k] = scanners[k];
        }
    }
    vm->rest = 0; /* it may wait in a scanner just freed */
    vm->max_pending = max_pending;
    vm->max_stream = max_stream;
    return TP_OK;
}

size_t tp_vm_held_bytes(const tp_vm *vm) { return vm->window.len; }

tp_status tp_vm_mark_special(tp_vm *vm, uint64_t offset) {
    vm->rest = 0; /* the next feed must see the mark */
    if (vm->finished) return TP_OK; /* input is ignored now: nothing to mark */
    return tp_vec_push(&vm->special_starts, sizeof offset, &offset);
}

uint64_t tp_vm_fed(const tp_vm *vm) { return vm->base + vm->window.len; }

void tp_vm_prefetch(const tp_vm *vm) {
    const char *fields = (const char *)vm;
    int line;
    if (vm->rest) { /* a feed of plain text reads only the state it waits in */
        TP_PREFETCH(vm->rest_in.matcher);
        return;
    }
    for (line = 1; line < 4; line++) TP_PREFETCH(fields + TP_CACHE_LINE * line);
    TP_PREFETCH(vm->window.data + vm->window.len);
    TP_PREFETCH(vm->log.data);
}

void tp_vm_reset(tp_vm *vm) {
    vm->rest = 0;
    vm->window.len = 0;
    vm->base = 0;
    vm->eof = vm->finished = vm->cut_short = 0;
    vm->pc = vm->entry;
    vm->pos = 0;
    vm->calls.len = vm->choices.len = vm->recovers.len = vm->log.len = 0;
    vm->special_starts.len = 0;
    vm->cut_level = 0;
    vm->tags = 0;
    vm->sub = SUB_NONE;
    vm->ran_out = 0;
    vm->emitted_log = 0;
    vm->emitted_pos = 0;
    vm->emit_tags = 0;
}

static inline uint64_t avail(const tp_vm *vm) { return vm->base + vm->window.len; }

static inline const uint8_t *at(const tp_vm *vm, uint64_t offset) {
    return vm->window.data + (offset - vm->base);
}

static int fail_with(tp_vm *vm, uint32_t kind, uint64_t offset) {
    vm->fail_kind = kind;
    vm->fail_offset = offset;
    return R_FAIL;
}

static tp_status log_push(tp_vm *vm, uint8_t kind, uint32_t a, uint32_t b, uint64_t offset) {
    log_entry entry;
    entry.kind = kind;
    entry.a = a;
    entry.b = b;
    entry.pos = vm->pos;
    entry.offset = offset;
    return tp_vec_push(&vm->log, sizeof entry, &entry);
}

static void pop_choice(tp_vm *vm, choice *out) {
    vm->choices.len--;
    if (out) *out = AT(vm->choices, choice, vm->choices.len);
    if (vm->cut_level > vm->choices.len) vm->cut_level = vm->choices.len;
}

static void restore(tp_vm *vm, const choice *c) {
    vm->pos = c->pos;
    if (vm->calls.len > c->calls) vm->calls.len = c->calls;
    if (vm->log.len > c->log) vm->log.len = c->log;
    if (vm->recovers.len > c->recovers) vm->recovers.len = c->recovers;
    vm->tags = c->tags;
    vm->sub = SUB_NONE;
}

static tp_status fail(tp_vm *vm, uint32_t kind, uint64_t offset) {
    size_t barrier = 0;
    vm->sub = SUB_NONE;
    if (kind == TP_PE_INCOMPLETE && !vm->ran_out) {
        vm->ran_out = 1;
        vm->ran_out_offset = offset;
    }
    if (vm->recovers.len) barrier = AT(vm->recovers, recovery, vm->recovers.len - 1).choices;
    while (vm->choices.len > barrier) {
        int live = vm->choices.len > vm->cut_level;
        choice c;
        pop_choice(vm, &c);
        if (live) {
            restore(vm, &c);
            vm->pc = c.pc;
            return TP_OK;
        }
    }
    if (vm->ran_out) {
        /* some alternative ran out of input: more input could have matched */
        kind = TP_PE_INCOMPLETE;
        offset = vm->ran_out_offset;
        vm->ran_out = 0;
    }
    TP_TRY(log_push(vm, LOG_ERROR, kind, 0, offset));
    if (vm->recovers.len) {
        recovery r = AT(vm->recovers, recovery, --vm->recovers.len);
        if (vm->calls.len > r.calls) vm->calls.len = r.calls;
        TP_TRY(log_push(vm, LOG_ABORT, r.tags, 0, 0));
        vm->tags = r.tags;
        vm->pc = r.handler;
        return TP_OK;
    }
    TP_TRY(log_push(vm, LOG_ABORT, 0, 0, 0));
    vm->tags = 0;
    vm->finished = 1;
    return TP_OK;
}

/* -- matching instructions ----------------------------------------------------------------- */

/* Whether string may match at offset: always, unless it is a special token's text, which
 * matches only where that token was fed (a special token starts there). */
static int string_allowed(const tp_vm *vm, uint32_t string, uint64_t offset) {
    size_t lo = 0, hi = vm->special_starts.len;
    if (string >= vm->n_special_strings || !vm->special_strings[string]) return 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t start = AT(vm->special_starts, uint64_t, mid);
        if (start == offset) return 1;
        if (start < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

static int op_lit(tp_vm *vm, uint32_t string) {
    uint32_t len, k;
    const uint8_t *text = tp_program_string(vm->prog, string, &len);
    uint64_t have = avail(vm) - vm->pos;
    const uint8_t *p = at(vm, vm->pos);
    uint32_t n = have < len ? (uint32_t)have : len;
    /* a special token's text fed as ordinary text is text, not the marker */
    if (have && !string_allowed(vm, string, vm->pos))
        return fail_with(vm, TP_PE_UNEXPECTED, vm->pos);
    for (k = 0; k < n; k++) {
        if (p[k] != text[k]) return fail_with(vm, TP_PE_UNEXPECTED, vm->pos + k);
    }
    if (n < len) return vm->eof ? fail_with(vm, TP_PE_INCOMPLETE, avail(vm)) : R_NEED;
    vm->pos += len;
    return R_OK;
}

static int op_ws(tp_vm *vm) {
    uint64_t end = avail(vm);
    while (vm->pos < end && tp_is_space(*at(vm, vm->pos))) vm->pos++;
    return vm->pos == end && !vm->eof ? R_NEED : R_OK;
}

static int op_eof(tp_vm *vm, uint32_t flags) {
    if (vm->pos < avail(vm)) return fail_with(vm, TP_PE_UNEXPECTED, vm->pos);
    if (!vm->eof) return R_NEED;
    if ((flags & TP_EOF_STOPPED) && vm->cut_short) return fail_with(vm, TP_PE_INCOMPLETE, vm->pos);
    return R_OK;
}

/* The longest run of bytes from a set; a suspended run goes on from vm->pos. */
static int op_chars(tp_vm *vm, uint32_t string, uint32_t flags) {
    const uint8_t *set = tp_program_string(vm->prog, string, NULL);
    uint64_t end = avail(vm);
    if (vm->sub != SUB_CHARS) {
        vm->sub = SUB_CHARS;
        vm->sub_start = vm->pos;
    }
    while (vm->pos < end) {
        uint8_t b = *at(vm, vm->pos);
        if (!(set[b >> 3] & (1u << (b & 7)))) break;
        vm->pos++;
    }
    if (vm->pos == end && !vm->eof) return R_NEED;
    vm->sub = SUB_NONE;
    if ((flags & TP_CHARS_MIN1) && vm->pos == vm->sub_start) {
        return fail_with(vm, vm->pos == end ? TP_PE_INCOMPLETE : TP_PE_UNEXPECTED, vm->pos);
    }
    return R_OK;
}

static tp_status drain(tp_vm *vm);

/* Whether a declared_param() lookahead comes at offset: its prefix, a name the open call's
 * tool declares, its end.  1 yes, 0 no, -1 undecided until more input, -3 out of memory.
 * The call's name is certain by then (a cut comes before the value), so what is certain
 * is handed to the event builder first, and it answers. */
static int declared_follows(tp_vm *vm, uint32_t prefix_index, uint32_t end_index, uint64_t offset) {
    uint64_t end = avail(vm), start, o, stop_at;
    uint32_t plen = 0, elen;
    const uint8_t *prefix = NULL, *close;
    if (prefix_index != TP_NO_STRING) prefix = tp_program_string(vm->prog, prefix_index, &plen);
    close = tp_program_string(vm->prog, end_index, &elen);
    {
        uint64_t have = end - offset;
        uint32_t n = have < plen ? (uint32_t)have : plen;
        if (n && memcmp(at(vm, offset), prefix, n) != 0) return 0;
        if (n < plen) return -1;
    }
    start = offset + plen;
    stop_at = start + TP_MAX_PARAM_NAME; /* the end may begin no later than here */
    for (o = start; o <= stop_at; o++) {
        if (o + elen > end) {
            uint64_t name = start - vm->base;
            if (!vm->eof) return -1;
            /* the end of input came first: whether it cut a declared name off */
            if (drain(vm) != TP_OK) return -3;
            return tp_emitter_declares_cut(vm->emitter, vm->window.data + name,
                                           (size_t)(end - start), close, elen)
                       ? -1
                       : 0;
        }
        if (memcmp(at(vm, o), close, elen) == 0) {
            uint64_t name = start - vm->base;
            if (drain(vm) != TP_OK) return -3;
            return tp_emitter_declares(vm->emitter, vm->window.data + name, (size_t)(o - start));
        }
    }
    return 0;
}

/* After a stop's marker: optional whitespace, then one of its follow literals or its
 * declared parameters.  1 yes, 0 no, -1 undecided until more input, -2 more whitespace
 * than the pending limit, -3 out of memory, -4 the end of input cut the lookahead off. */
static int follows(tp_vm *vm, const tp_stop *stop, uint64_t offset) {
    uint64_t end = avail(vm), marker_end = offset;
    uint32_t f;
    int undecided = 0;
    if (stop->n_follow == 0 && stop->n_declared == 0) return 1;
    if (vm->follow_scanned > offset) offset = vm->follow_scanned; /* checked by a feed before */
    while (offset < end && tp_is_space(*at(vm, offset))) offset++;
    vm->follow_scanned = offset;
    if (offset - marker_end > vm->max_pending) return -2;
    for (f = 0; f < stop->n_follow; f++) {
        uint32_t len;
        const uint8_t *text = tp_program_string(vm->prog, stop->follow[f], &len);
        uint64_t have = end - offset;
        uint32_t n = have < len ? (uint32_t)have : len;
        if (memcmp(at(vm, offset), text, n) != 0) continue;
        if (n == len) return 1;
        undecided = 1;
    }
    for (f = 0; f < stop->n_declared; f++) {
        uint32_t prefix = stop->declared[2 * f], close = stop->declared[2 * f + 1];
        /* without a prefix, the name comes right after the marker */
        int found =
            declared_follows(vm, prefix, close, prefix == TP_NO_STRING ? marker_end : offset);
        if (found == 1 || found == -3) return found;
        if (found == -1) undecided = 1;
    }
    return undecided ? (vm->eof ? -4 : -1) : 0;
}

static void until_commit(tp_vm *vm, uint32_t flags) {
    if ((flags & TP_UNTIL_COMMIT) && !vm->cut_done && vm->pos > vm->sub_start) {
        vm->cut_level = vm->choices.len;
        vm->cut_done = 1;
    }
}

static int until_done(tp_vm *vm, uint32_t flags, uint64_t stop_at) {
    if ((flags & TP_UNTIL_MIN1) && stop_at == vm->sub_start)
        return fail_with(vm, TP_PE_UNEXPECTED, stop_at);
    vm->pos = stop_at;
    if ((flags & TP_UNTIL_COMMIT) && stop_at > vm->sub_start) vm->cut_level = vm->choices.len;
    vm->sub = SUB_NONE;
    return R_OK;
}

/* END_TRIMS at the end of input: where the text ends when the last bytes are a proper
 * prefix of a stop (the end cut the stop off), the earliest such start, or else an
 * incomplete UTF-8 character (the end cut it off). */
static uint64_t trimmed_end(const tp_vm *vm, const tp_stopset *set) {
    uint64_t end = avail(vm), k = vm->pos, last = end - k > 4 ? end - 4 : k;
    if (end - k > TP_TRIE_MAX_MARKER_LEN) k = end - TP_TRIE_MAX_MARKER_LEN;
    for (; k < end; k++) {
        uint32_t s;
        for (s = 0; s < set->n_stops; s++) {
            uint32_t len;
            const uint8_t *text = tp_program_string(vm->prog, set->stops[s].marker, &len);
            if (end - k < len && memcmp(at(vm, k), text, (size_t)(end - k)) == 0) return k;
        }
    }
    return end - tp_utf8_tail(at(vm, last), (size_t)(end - last));
}

/* The matcher found a stop in vm->pending (offsets from scan_from): make them absolute. */
static void hold_match(tp_vm *vm) {
    vm->pending.start += vm->scan_from;
    vm->pending.end += vm->scan_from;
    vm->has_pending = 1;
    vm->follow_scanned = 0;
}

static int op_until(tp_vm *vm, uint32_t set_index, uint32_t flags) {
    const tp_stopset *set = tp_program_stopset(vm->prog, set_index);
    tp_matcher *m = vm->matchers[set_index];
    size_t n;
    if (vm->sub != SUB_UNTIL) {
        tp_matcher_reset(m);
        vm->sub = SUB_UNTIL;
        vm->sub_start = vm->scan_from = vm->fed_to = vm->pos;
        vm->has_pending = vm->cut_done = 0;
    }
    for (;;) {
        if (vm->has_pending) {
            const tp_stop *candidate = &set->stops[vm->pending.id];
            int found = string_allowed(vm, candidate->marker, vm->pending.start)
                            ? follows(vm, candidate, vm->pending.end)
                            : 0;
            if (found == -3) return fail_with(vm, FAIL_NOMEM, vm->pending.start);
            if (found == -4) found = (flags & TP_UNTIL_END_TRIMS) != 0;
            if (found == -2) {
                vm->pos = vm->pending.start; /* the text before the candidate is certain */
                return fail_with(vm, FAIL_PENDING_LIMIT, vm->pending.start);
            }
            if (found < 0) {
                vm->pos = vm->pending.start; /* the text before the candidate is certain */
                until_commit(vm, flags);
                return R_NEED;
            }
            if (found) return until_done(vm, flags, vm->pending.start);
            /* not a stop after all: scan again from the byte after its start */
            tp_matcher_reset(m);
            vm->scan_from = vm->fed_to = vm->pending.start + 1;
            vm->has_pending = 0;
        }
        if (vm->fed_to < avail(vm)) {
            size_t used = tp_matcher_feed(m, at(vm, vm->fed_to), (size_t)(avail(vm) - vm->fed_to),
                                          &vm->pending, 1, &n);
            vm->fed_to += used;
            if (n) {
                hold_match(vm);
                continue;
            }
        }
        if (vm->eof && !tp_matcher_finished(m)) {
            tp_matcher_finish(m, &vm->pending, 1, &n);
            if (n) {
                hold_match(vm);
                continue;
            }
        }
        break;
    }
    if (vm->eof) {
        if (flags & TP_UNTIL_NEED_STOP) return fail_with(vm, TP_PE_INCOMPLETE, avail(vm));
        if (flags & TP_UNTIL_END_TRIMS) return until_done(vm, flags, trimmed_end(vm, set));
        return until_done(vm, flags, avail(vm));
    }
    {
        uint64_t safe = vm->scan_from + tp_matcher_position(m) - tp_matcher_holdback(m);
        if ((flags & TP_UNTIL_END_TRIMS) && safe > vm->pos) {
            /* an incomplete character stays uncertain: the end of input may cut it off */
            uint64_t from = safe - vm->pos > 4 ? safe - 4 : vm->pos;
            safe -= tp_utf8_tail(at(vm, from), (size_t)(safe - from));
        }
        if (safe > vm->pos) vm->pos = safe;
    }
    until_commit(vm, flags);
    return R_NEED;
}

static int op_json(tp_vm *vm, uint32_t operand) {
    tp_json *s = vm->scanners[(operand & 0xFF) % 3];
    uint32_t kind = operand >> 8 & 0xFF;
    tp_json_verdict verdict = TP_JSON_NEED_MORE;
    if (vm->sub != SUB_JSON) {
        tp_json_reset(s);
        vm->sub = SUB_JSON;
        vm->sub_start = vm->pos;
        vm->kind_checked = 0;
    }
    if (!vm->kind_checked && kind != TP_JSON_KIND_ANY) {
        uint64_t o = vm->pos, end = avail(vm);
        while (o < end && tp_is_space(*at(vm, o))) o++;
        if (o == end) {
            if (!vm->eof) return R_NEED;
        } else {
            uint8_t want = kind == TP_JSON_KIND_STRING ? '"' : '{';
            if (*at(vm, o) != want) {
                vm->sub = SUB_NONE;
                return fail_with(vm, TP_PE_INVALID_ARGUMENTS, o);
            }
            vm->kind_checked = 1;
        }
    }
    if (vm->pos < avail(vm))
        verdict = tp_json_feed(s, at(vm, vm->pos), (size_t)(avail(vm) - vm->pos), NULL);
    if (verdict == TP_JSON_NEED_MORE && vm->eof) verdict = tp_json_finish(s);
    switch (verdict) {
    case TP_JSON_COMPLETE:
        vm->pos = vm->sub_start + (uint64_t)tp_json_end(s);
        vm->sub = SUB_NONE;
        return R_OK;
    case TP_JSON_ERROR: {
        uint64_t offset;
        tp_json_reason reason = tp_json_error(s, &offset);
        vm->pos = vm->sub_start + offset;
        vm->sub = SUB_NONE;
        return fail_with(vm, reason == TP_JSON_E_LIMIT ? TP_PE_LIMIT : TP_PE_INVALID_ARGUMENTS,
                         vm->pos);
    }
    case TP_JSON_INCOMPLETE:
        vm->pos = avail(vm);
        vm->sub = SUB_NONE;
        if ((operand >> 16) & TP_JSON_CLOSE_AT_END) return R_OK;
        return fail_with(vm, TP_PE_INCOMPLETE, avail(vm));
    default:
        vm->pos = vm->sub_start + tp_json_position(s);
        return R_NEED;
    }
}

/* -- the loop ------------------------------------------------------------------------------ */

/* A limit was exceeded: the parse ends with a limit error (msg names the limit) where the
 * output stopped being certain: what an open alternative had parsed is dropped. */
static tp_status stop_at_limit(tp_vm *vm, uint32_t msg, uint64_t offset) {
    if (vm->choices.len > vm->cut_level) restore(vm, &AT(vm->choices, choice, vm->cut_level));
    vm->choices.len = vm->recovers.len = 0;
    vm->cut_level = 0;
    vm->sub = SUB_NONE;
    TP_TRY(log_push(vm, LOG_ERROR, TP_PE_LIMIT, msg, offset));
    TP_TRY(log_push(vm, LOG_ABORT, 0, 0, 0));
    vm->tags = 0;
    vm->finished = 1;
    return TP_OK;
}

/* The furthest an alternative that is still open has looked past the certain output. */
static uint64_t undecided_bytes(const tp_vm *vm, uint64_t reach) {
    uint64_t front;
    if (vm->choices.len <= vm->cut_level) return 0;
    front = AT(vm->choices, choice, vm->cut_level).pos;
    return reach > front ? reach - front : 0;
}

static tp_status run(tp_vm *vm) {
    const uint32_t *code = vm->code;
    uint32_t idle = 0;
    uint64_t furthest = vm->pos;
    while (!vm->finished) {
        uint32_t pc = vm->pc, op = code[pc];
        uint32_t next = pc + 1 + tp_op_operands(op); /* the next instruction */
        uint32_t a = pc + 1 < vm->n_code ? code[pc + 1] : 0;
        int r;
        if (++idle > TP_MAX_IDLE_STEPS) return stop_at_limit(vm, TP_MSG_LIMIT, vm->pos);
        switch (op) {
        case TP_OP_LIT:
            r = op_lit(vm, a);
            break;
        case TP_OP_UNTIL:
            r = op_until(vm, a, code[pc + 2]);
            break;
        case TP_OP_JSON:
            r = op_json(vm, a);
            break;
        case TP_OP_CHARS:
            r = op_chars(vm, a, code[pc + 2]);
            break;
        case TP_OP_WS:
            r = op_ws(vm);
            break;
        case TP_OP_EOF:
            r = op_eof(vm, a);
            break;
        case TP_OP_CHOICE: {
            choice c;
            c.pc = a;
            c.pos = vm->pos;
            c.calls = vm->calls.len;
            c.log = vm->log.len;
            c.recovers = vm->recovers.len;
            c.tags = vm->tags;
            TP_TRY(tp_vec_push(&vm->choices, sizeof c, &c));
            vm->pc = next;
            continue;
        }
        case TP_OP_COMMIT:
            if (vm->choices.len) pop_choice(vm, NULL);
            vm->pc = a;
            continue;
        case TP_OP_PCOMMIT:
            if (vm->choices.len) {
                choice *top = &AT(vm->choices, choice, vm->choices.len - 1);
                top->pos = vm->pos;
                top->log = vm->log.len;
                top->tags = vm->tags;
                top->calls = vm->calls.len;
                top->recovers = vm->recovers.len;
                if (vm->cut_level > vm->choices.len - 1) vm->cut_level = vm->choices.len - 1;
            }
            vm->pc = a;
            continue;
        case TP_OP_BCOMMIT:
            if (vm->choices.len) {
                choice c;
                pop_choice(vm, &c);
                restore(vm, &c);
            }
            vm->pc = a;
            continue;
        case TP_OP_FAIL:
            TP_TRY(fail(vm, TP_PE_UNEXPECTED, vm->pos));
            continue;
        case TP_OP_FAILTWICE:
            /* a negative lookahead whose pattern matched: fail where the lookahead began */
            if (vm->choices.len) {
                choice c;
                pop_choice(vm, &c);
                restore(vm, &c);
            }
            TP_TRY(fail(vm, TP_PE_UNEXPECTED, vm->pos));
            continue;
        case TP_OP_JMP:
            vm->pc = a;
            continue;
        case TP_OP_CALL: {
            uint32_t ret = next;
            TP_TRY(tp_vec_push(&vm->calls, sizeof ret, &ret));
            vm->pc = a;
            continue;
        }
        case TP_OP_RET:
            if (vm->calls.len == 0) { /* only a malformed program returns from nowhere */
                vm->finished = 1;
                continue;
            }
            vm->pc = AT(vm->calls, uint32_t, --vm->calls.len);
            continue;
        case TP_OP_CUT:
            vm->cut_level = vm->choices.len;
            vm->pc = next;
            continue;
        case TP_OP_TOPEN:
            TP_TRY(log_push(vm, LOG_OPEN, a, code[pc + 2], 0));
            vm->tags++;
            vm->pc = next;
            continue;
        case TP_OP_CONST:
            TP_TRY(log_push(vm, LOG_CONST, a, 0, 0));
            vm->pc = next;
            continue;
        case TP_OP_TCLOSE:
            TP_TRY(log_push(vm, LOG_CLOSE, 0, 0, 0));
            if (vm->tags) vm->tags--;
            vm->pc = next;
            continue;
        case TP_OP_RECOVER: {
            recovery rec;
            rec.handler = a;
            rec.calls = vm->calls.len;
            rec.choices = vm->choices.len;
            rec.tags = vm->tags;
            TP_TRY(tp_vec_push(&vm->recovers, sizeof rec, &rec));
            vm->pc = next;
            continue;
        }
        case TP_OP_RPOP:
            if (vm->recovers.len) vm->recovers.len--;
            vm->pc = next;
            continue;
        default: /* TP_OP_END */
            vm->finished = 1;
            continue;
        }
        {
            /* the undecided output first: fed in pieces, it is met before anything the
             * instruction finds further on (a failure's offset) */
            uint64_t reach = r == R_FAIL && vm->fail_offset > vm->pos ? vm->fail_offset : vm->pos;
            if (TP_UNLIKELY(r == R_FAIL && vm->fail_kind == FAIL_NOMEM)) return TP_ERR_NOMEM;
            if (TP_UNLIKELY(undecided_bytes(vm, reach) > vm->max_pending))
                return stop_at_limit(vm, TP_MSG_LIMIT_PENDING,
                                     AT(vm->choices, choice, vm->cut_level).pos);
            if (TP_UNLIKELY(r == R_FAIL && vm->fail_kind == TP_PE_LIMIT)) /* nesting */
                return stop_at_limit(vm, TP_MSG_LIMIT_DEPTH, vm->fail_offset);
            if (TP_UNLIKELY(r == R_FAIL && vm->fail_kind == FAIL_PENDING_LIMIT))
                return stop_at_limit(vm, TP_MSG_LIMIT_PENDING, vm->fail_offset);
        }
        if (r == R_NEED) break;
        if (vm->pos > furthest) {
            furthest = vm->pos;
            idle = 0;
        }
        if (r == R_OK) {
            vm->pc = next;
        } else {
            TP_TRY(fail(vm, vm->fail_kind, vm->fail_offset));
        }
    }
    return TP_OK;
}

/* -- emission ------------------------------------------------------------------------------ */

static tp_status text_to(tp_vm *vm, uint64_t offset) {
    if (offset <= vm->emitted_pos) return TP_OK;
    if (vm->emit_tags)
        TP_TRY(tp_emitter_text(vm->emitter, at(vm, vm->emitted_pos),
                               (size_t)(offset - vm->emitted_pos)));
    vm->emitted_pos = offset;
    return TP_OK;
}

static uint64_t frontier(const tp_vm *vm, size_t *log_end) {
    if (vm->choices.len > vm->cut_level) {
        const choice *bottom = &AT(vm->choices, choice, vm->cut_level);
        if (log_end) *log_end = bottom->log;
        return bottom->pos;
    }
    if (log_end) *log_end = vm->log.len;
    return vm->pos;
}

static tp_status drain(tp_vm *vm) {
    size_t log_end, k;
    uint64_t front = frontier(vm, &log_end);
    while (vm->emitted_log < log_end) {
        const log_entry *entry = &AT(vm->log, log_entry, vm->emitted_log);
        TP_TRY(text_to(vm, entry->pos));
        switch (entry->kind) {
        case LOG_OPEN:
            TP_TRY(tp_emitter_open(vm->emitter, entry->a, entry->b, entry->pos));
            vm->emit_tags++;
            break;
        case LOG_CLOSE:
            TP_TRY(tp_emitter_close(vm->emitter, entry->pos));
            if (vm->emit_tags) vm->emit_tags--;
            break;
        case LOG_ERROR:
            TP_TRY(tp_emitter_error(vm->emitter, entry->a, entry->b, entry->offset));
            break;
        case LOG_CONST: /* text the grammar implies, at this point of the output */
            if (vm->emit_tags) {
                uint32_t len;
                const uint8_t *text = tp_program_string(vm->prog, entry->a, &len);
                TP_TRY(tp_emitter_text(vm->emitter, text, len));
            }
            break;
        default:
            TP_TRY(tp_emitter_abort(vm->emitter, entry->a));
            vm->emit_tags = entry->a;
            break;
        }
        vm->emitted_log++;
    }
    TP_TRY(text_to(vm, front));
    /* Forget emitted log entries; saved log lengths shift with them. */
    if (vm->emitted_log > 0 && (vm->emitted_log >= 64 || vm->emitted_log == vm->log.len)) {
        size_t shift = vm->emitted_log;
        memmove(vm->log.data, &AT(vm->log, log_entry, shift),
                (vm->log.len - shift) * sizeof(log_entry));
        vm->log.len -= shift;
        for (k = 0; k < vm->choices.len; k++) {
            choice *c = &AT(vm->choices, choice, k);
            c->log = c->log > shift ? c->log - shift : 0;
        }
        vm->emitted_log = 0;
    }
    return TP_OK;
}

/* Drops input that neither emission nor any open alternative can need again. */
static void trim(tp_vm *vm) {
    uint64_t keep = frontier(vm, NULL);
    size_t drop;
    if (vm->emitted_pos < keep) keep = vm->emitted_pos;
    if (keep <= vm->base) return;
    drop = (size_t)(keep - vm->base);
    /* Move the kept bytes only when that frees at least half the window. */
    if (drop < 4096 && drop * 2 < vm->window.len) return;
    memmove(vm->window.data, vm->window.data + drop, vm->window.len - drop);
    vm->window.len -= drop;
    vm->base = keep;
    if (vm->special_starts.len) { /* forget special tokens before the window */
        size_t gone = 0, n = vm->special_starts.len;
        while (gone < n && AT(vm->special_starts, uint64_t, gone) < keep) gone++;
        memmove(vm->special_starts.data, &AT(vm->special_starts, uint64_t, gone),
                (n - gone) * sizeof(uint64_t));
        vm->special_starts.len = n - gone;
    }
}

/* The parse is over: no input fed so far can be needed again. */
static void release(tp_vm *vm) {
    vm->base += vm->window.len;
    vm->window.len = 0;
    if (vm->window.cap > 4096) { /* give a grown window back; keep it if that fails */
        uint8_t *small = (uint8_t *)tp_realloc(&vm->alloc, vm->window.data, 256);
        if (small) {
            vm->window.data = small;
            vm->window.cap = 256;
        }
    }
    vm->pos = vm->emitted_pos = vm->base;
    vm->choices.len = vm->log.len = vm->calls.len = vm->recovers.len = 0;
    vm->cut_level = vm->emitted_log = 0;
    vm->special_starts.len = 0;
}

/* After the VM ran: hand over what is certain, then forget what is not needed. */
static tp_status settle(tp_vm *vm) {
    TP_TRY(drain(vm));
    if (tp_emitter_stopped(vm->emitter)) vm->finished = 1; /* it met a limit */
    if (vm->finished)
        release(vm);
    else
        trim(vm);
    return TP_OK;
}

/* Whether the VM waits in UNTIL or JSON with nothing undecided before the end of its input
 * (no open alternative, nothing waiting in the log, everything emitted, no stop candidate
 * held, the kind of JSON value checked): what both fast paths ask of the state.  *in is
 * then what it waits in. */
static int waits_plain(const tp_vm *vm, plain_target *in) {
    const uint32_t *at_pc = vm->code + vm->pc;
    uint64_t end = avail(vm);
    if (vm->eof || vm->choices.len > vm->cut_level || vm->emitted_log != vm->log.len ||
        vm->pos != end || vm->emitted_pos != end)
        return 0;
    /* (an END_TRIMS text holds an incomplete character back: never the fast paths) */
    if (vm->sub == SUB_UNTIL && !vm->has_pending && vm->fed_to == end &&
        !(at_pc[2] & TP_UNTIL_END_TRIMS)) {
        in->matcher = vm->matchers[at_pc[1]];
        return 1;
    }
    if (vm->sub == SUB_JSON && (vm->kind_checked || (at_pc[1] >> 8 & 0xFF) == TP_JSON_KIND_ANY)) {
        in->scanner = vm->scanners[(at_pc[1] & 0xFF) % 3];
        return 1;
    }
    return 0;
}

/* The fast path of a feed.  While the VM waits inside UNTIL or JSON and nothing is
 * undecided (no open alternative, nothing waiting in the log, everything before emitted),
 * a feed that the instruction takes whole without a decision (no byte that could start a
 * marker; JSON that neither ends nor fails) is certain output as it comes.  It goes
 * straight to the emitter, past the window, the instruction loop and the drain: the slow
 * path would emit exactly the same.  Returns 0 where it does not apply; the JSON scanner
 * has then seen data, and op_json reads its verdict again without rescanning. */
static int feed_plain(tp_vm *vm, const uint8_t *data, size_t len, tp_status *st) {
    uint64_t end = avail(vm);
    plain_target in;
    if (!waits_plain(vm, &in) || (vm->max_stream && len > vm->max_stream - end)) return 0;
    if (vm->sub == SUB_UNTIL) {
        if (!tp_matcher_all_plain(in.matcher, data, len)) return 0;
        tp_matcher_skip(in.matcher, len);
        vm->fed_to = end + len;
        vm->pos = end + len;
        until_commit(vm, vm->code[vm->pc + 2]);
    } else {
        if (tp_json_feed(in.scanner, data, len, NULL) != TP_JSON_NEED_MORE) return 0;
        vm->pos = end + len; /* the scanner took all of it */
    }
    *st = vm->emit_tags ? tp_emitter_text(vm->emitter, data, len) : TP_OK;
    vm->emitted_pos = vm->base = end + len; /* nothing before is needed again */
    vm->window.len = 0;
    vm->special_starts.len = 0; /* special tokens all start before any marker to come */
    if (tp_emitter_stopped(vm->emitter)) { /* it met a limit */
        vm->finished = 1;
        release(vm);
    }
    return 1;
}

/* Whether the next feed can be feed_plain's without its checks: the state waits_plain
 * asks for, an empty window, and nothing left for feed_plain to do but take the data
 * (UNTIL has committed already). */
static void rest_check(tp_vm *vm) {
    plain_target in;
    vm->rest = 0;
    if (vm->finished || vm->window.len || vm->special_starts.len || !waits_plain(vm, &in)) return;
    if (vm->sub == SUB_UNTIL && (vm->code[vm->pc + 2] & TP_UNTIL_COMMIT) && !vm->cut_done) return;
    vm->rest_in = in;
    vm->rest = vm->sub;
}

/* feed_plain at rest: the same steps, on the one line of state they need.  Returns 0
 * where the data is not plain; the JSON scanner has then seen it, as with feed_plain. */
static inline int feed_at_rest(tp_vm *vm, const uint8_t *data, size_t len, tp_status *st) {
    uint64_t end = vm->base; /* the window is empty */
    if (vm->max_stream && len > vm->max_stream - end) return 0;
    if (vm->rest == SUB_UNTIL) {
        if (!tp_matcher_all_plain(vm->rest_in.matcher, data, len)) return 0;
        tp_matcher_skip(vm->rest_in.matcher, len);
        vm->fed_to = end + len;
    } else if (tp_json_feed(vm->rest_in.scanner, data, len, NULL) != TP_JSON_NEED_MORE) {
        return 0;
    }
    *st = vm->emit_tags ? tp_emitter_text(vm->emitter, data, len) : TP_OK;
    vm->pos = vm->emitted_pos = vm->base = end + len;
    if (tp_emitter_stopped(vm->emitter)) { /* it met a limit */
        vm->finished = 1;
        vm->rest = 0;
        release(vm);
    }
    return 1;
}

static tp_status feed_window(tp_vm *vm, const uint8_t *data, size_t len);

tp_status tp_vm_feed(tp_vm *vm, const uint8_t *data, size_t len) {
    tp_status st;
    if (vm->rest && len) {
        if (feed_at_rest(vm, data, len, &st)) return st;
        vm->rest = 0; /* on to the slow path: feed_plain would only fail again */
        return feed_window(vm, data, len);
    }
    vm->rest = 0;
    if (vm->finished) return TP_OK; /* the parse is over: input is ignored */
    if (len && feed_plain(vm, data, len, &st)) {
        if (st == TP_OK) rest_check(vm);
        return st;
    }
    return feed_window(vm, data, len);
}

/* The slow path of a feed: through the window and the instruction loop. */
static TP_NOINLINE tp_status feed_window(tp_vm *vm, const uint8_t *data, size_t len) {
    int over = 0;
    if (vm->max_stream && len > vm->max_stream - avail(vm)) {
        len = (size_t)(vm->max_stream - avail(vm)); /* parse up to the limit, then stop */
        over = 1;
    }
    TP_TRY(tp_buf_append(&vm->window, data, len));
    TP_TRY(run(vm));
    if (over && !vm->finished) TP_TRY(stop_at_limit(vm, TP_MSG_LIMIT_STREAM, vm->max_stream));
    TP_TRY(settle(vm));
    rest_check(vm);
    return TP_OK;
}

tp_status tp_vm_finish(tp_vm *vm, int cut_short) {
    vm->rest = 0;
    vm->eof = 1;
    vm->cut_short = cut_short;
    TP_TRY(run(vm));
    return settle(vm);
}
