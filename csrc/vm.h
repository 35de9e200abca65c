/* vm.h: the PEG virtual machine (internal), the twin of python/toolparse/reference/vm.py.
 * It runs a program over input that arrives in pieces and hands what no open alternative
 * can undo to the event builder. */
#ifndef TOOLPARSE_VM_H
#define TOOLPARSE_VM_H

#include "emit.h"
#include "program.h"

typedef struct tp_vm tp_vm;

/* The VM borrows program and emitter.  In place where it fits (place may be NULL: pool.h);
 * alloc (not NULL) is copied. */
tp_status tp_vm_new(const tp_allocator *alloc, const tp_program *program, uint32_t entry,
                    tp_emitter *emitter, tp_place *place, tp_vm **out);
void tp_vm_free(tp_vm *vm);
void tp_vm_reset(tp_vm *vm);

tp_status tp_vm_feed(tp_vm *vm, const uint8_t *data, size_t len);
/* The end of the input; cut_short: the output was cut off (finish reason "length"), not
 * stopped by the model. */
tp_status tp_vm_finish(tp_vm *vm, int cut_short);

/* Special-token markers: flags[i] != 0 says program string i is a special token's text,
 * which then matches (as a LIT, or as an UNTIL stop) only where that token was fed; a
 * copy is kept.  NULL turns the rule off.  The caller marks where special tokens start. */
tp_status tp_vm_set_special(tp_vm *vm, const uint8_t *flags, uint32_t n_strings);
tp_status tp_vm_mark_special(tp_vm *vm, uint64_t offset);
/* Limits (see tp_limits): the JSON scanners' depth, how far an open alternative may look
 * past the certain output, all input (0: no limit).  TP_ERR_ARG out of range. */
tp_status tp_vm_set_limits(tp_vm *vm, uint32_t max_depth, uint64_t max_pending,
                           uint64_t max_stream);
/* Bytes of input held (not yet certain, or needed by an open alternative). */
size_t tp_vm_held_bytes(const tp_vm *vm);
/* Bytes fed so far (the offset the next byte will have). */
uint64_t tp_vm_fed(const tp_vm *vm);
/* Asks the cache for what the next feed touches first (no effect on the parse). */
void tp_vm_prefetch(const tp_vm *vm);

#endif
