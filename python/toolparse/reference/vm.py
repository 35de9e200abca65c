"""Pure-Python twin of the PEG virtual machine (csrc/vm.c): docs/engine.md specifies it.

The VM runs a compiled format program over input that arrives in pieces.  An instruction
that needs bytes not yet fed suspends the VM (NEED_MORE) and runs again on the next feed;
only finish() turns "not enough input" into failure.  Backtracking is explicit (a choice
stack), and what the parse has decided is handed out as semantic ops once no open
alternative can undo it:

    ("open", role, decode, offset)  a tag opens (role index, decode mode)
    ("text", data)           bytes that belong to the innermost open tag
    ("close", offset)        the innermost tag closes at this stream offset
    ("error", kind, offset)  a failure; the tags opened inside the failed part are aborted
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import grammar as g
from .._common import MAX_MARKER_LENGTH
from ..limits import DEFAULT_LIMITS, MAX_IDLE_STEPS, Limits
from .emitter import split_utf8
from .json import Dialect, JsonScanner
from .trie import MarkerMatcher, MarkerTrie

_WS = frozenset(b" \t\r\n")
_DIALECTS: tuple[Dialect, ...] = ("strict", "lenient", "python")

NEED_MORE = object()
_CUT_OFF = object()  # a stop's lookahead that the end of input cut off

Op = tuple[Any, ...]


@dataclass
class _Choice:
    pc: int
    pos: int
    calls: int
    log: int
    tags: int
    recovers: int


@dataclass
class _Recover:
    handler: int
    calls: int
    choices: int
    tags: int


@dataclass
class _UntilState:
    start: int  # where the text began
    matcher: MarkerMatcher
    scan_from: int  # absolute offset of the matcher's first byte
    fed_to: int  # absolute offset up to which the matcher has been fed
    pending: list[tuple[int, int, int]]  # matches reported and not yet decided
    cut_done: bool = False
    follow_scanned: int = 0  # whitespace after the pending stop checked up to here


@dataclass
class _CharsState:
    start: int


@dataclass
class _JsonState:
    scanner: JsonScanner
    start: int
    kind_checked: bool = False


class VM:
    """One parse of one stream."""

    def __init__(self, program: g.Program, entry: str, limits: Limits = DEFAULT_LIMITS) -> None:
        if entry not in program.entries:
            raise ValueError(f"the program has no entry {entry!r}")
        self.code = program.code
        self.strings = program.strings
        self.string_index = {text: k for k, text in enumerate(program.strings)}
        # special-token markers: strings that match only where their special token was
        # fed, and the stream offsets where special tokens start (ascending)
        self.special_strings: frozenset[int] = frozenset()
        self.special_starts: list[int] = []
        self.stopsets = program.stopsets
        self.tries = [MarkerTrie([s.marker for s in stops]) for stops in program.stopsets]
        self.limits = limits
        self.window = bytearray()
        self.base = 0  # absolute offset of window[0]
        self.eof = False
        self.pc = program.entries[entry]
        self.pos = 0
        self.calls: list[int] = []
        self.choices: list[_Choice] = []
        # Entries below cut_level were cut: they stay for COMMIT to pop, but a failure
        # unwinds through them, and they hold nothing back.
        self.cut_level = 0
        self.recovers: list[_Recover] = []
        # ("open", pos, role, decode), ("close", pos), ("error", pos, kind, offset), ("abort", ...)
        self.log: list[tuple[Any, ...]] = []
        self.tags = 0  # tags open in the parse so far
        self.sub: _UntilState | _JsonState | _CharsState | None = None
        self.finished = False  # END reached or the parse failed for good
        self.cut_short = False  # the input ended because the output was cut off
        # The first failure for lack of input since the last error: what an error then is.
        self.ran_out: tuple[str, int] | None = None
        # emission
        self.emitted_log = 0
        self.emitted_pos = 0
        self.emit_tags = 0
        self.ops: list[Op] = []  # drained, not yet handed over
        # Whether the open call's tool declares a parameter of this name: the event
        # builder knows (declared_param() asks it, once the ops so far are applied).
        self.declares: Callable[[bytes], bool] = lambda name: True
        # Whether text, where the input ended, may be what is left of a declared name
        # followed by an end text (asked the same way).
        self.declares_cut: Callable[[bytes, bytes], bool] = lambda text, end: False

    # -- input ---------------------------------------------------------------------------

    @property
    def avail(self) -> int:
        """Absolute offset just past the input fed so far."""
        return self.base + len(self.window)

    def feed(self, data: bytes) -> list[Op]:
        if self.finished:
            return []  # the parse is over (it ended or failed for good): input is ignored
        limit = self.limits.max_stream_bytes
        over = limit is not None and self.avail + len(data) > limit
        if over:
            assert limit is not None
            data = data[: limit - self.avail]  # parse up to the limit, then stop
        self.window += data
        self._run()
        if over and not self.finished:
            assert limit is not None
            self._stop_at_limit("max_stream_bytes", limit)
        return self._settle()

    def finish(self, *, cut_short: bool = False) -> list[Op]:
        """The end of the input; cut_short: the output was cut off (finish reason "length"),
        not stopped by the model."""
        self.eof = True
        self.cut_short = cut_short
        self._run()
        return self._settle()

    def _settle(self) -> list[Op]:
        ops = self.take_ops() + self._drain()
        if self.finished:
            self.release()
        else:
            self._trim_window()
        return ops

    def take_ops(self) -> list[Op]:
        """The ops drained while the VM ran (declared_param() drains before it asks)."""
        ops, self.ops = self.ops, []
        return ops

    def release(self) -> None:
        """The parse is over (or the event builder met a limit): no input fed so far can
        be needed again."""
        self.finished = True
        self.base += len(self.window)
        self.window = bytearray()
        self.pos = self.emitted_pos = self.base
        self.choices.clear()
        self.log.clear()
        self.calls.clear()
        self.recovers.clear()
        self.cut_level = self.emitted_log = 0
        self.special_starts.clear()

    @property
    def held_bytes(self) -> int:
        """Bytes of input held (not yet certain, or needed by an open alternative)."""
        return len(self.window)

    def _byte(self, offset: int) -> int:
        return self.window[offset - self.base]

    def _slice(self, start: int, end: int) -> bytes:
        return bytes(self.window[start - self.base : end - self.base])

    # -- the machine ---------------------------------------------------------------------

    def _run(self) -> None:
        code = self.code
        idle = 0
        furthest = self.pos
        while not self.finished:
            pc = self.pc
            op = code[pc]
            idle += 1
            if idle > MAX_IDLE_STEPS:
                self._stop_at_limit("max_steps", self.pos)
                break
            if op == g.OP_LIT:
                result = self._lit(code[pc + 1])
            elif op == g.OP_UNTIL:
                result = self._until(code[pc + 1], code[pc + 2])
            elif op == g.OP_JSON:
                result = self._json(code[pc + 1])
            elif op == g.OP_CHARS:
                result = self._chars(self.strings[code[pc + 1]], code[pc + 2])
            elif op == g.OP_WS:
                result = self._ws()
            elif op == g.OP_EOF:
                result = self._eof(code[pc + 1])
            else:
                self._control(op, pc)
                continue
            # the undecided output first: fed in pieces, it is met before anything the
            # instruction finds further on (a failure's offset)
            reach = max(self.pos, result[1]) if isinstance(result, tuple) else self.pos
            if len(self.choices) > self.cut_level:
                front = self.choices[self.cut_level].pos
                if reach - front > self.limits.max_pending_bytes:
                    self._stop_at_limit("max_pending_bytes", front)
                    break
            if isinstance(result, tuple) and result[0] in ("limit", "pending_limit"):
                self._stop_at_limit(
                    "max_depth" if result[0] == "limit" else "max_pending_bytes", result[1]
                )
                break
            if result is NEED_MORE:
                break
            if self.pos > furthest:
                furthest, idle = self.pos, 0
            if result is True:
                self.pc = pc + 1 + g.OPERANDS[op]
            else:
                assert isinstance(result, tuple)
                self._fail(*result)

    def _control(self, op: int, pc: int) -> None:
        code = self.code
        arg = code[pc + 1] if g.OPERANDS[op] else 0
        nxt = pc + 1 + g.OPERANDS[op]
        if op == g.OP_CHOICE:
            calls, log, recovers = len(self.calls), len(self.log), len(self.recovers)
            self.choices.append(_Choice(arg, self.pos, calls, log, self.tags, recovers))
            self.pc = nxt
        elif op == g.OP_COMMIT:
            self._pop_choice()
            self.pc = arg
        elif op == g.OP_PCOMMIT:
            # the iteration is done: the loop's choice point is set up (and live) again
            top = self.choices[-1]
            top.pos, top.log, top.tags = self.pos, len(self.log), self.tags
            top.calls, top.recovers = len(self.calls), len(self.recovers)
            self.cut_level = min(self.cut_level, len(self.choices) - 1)
            self.pc = arg
        elif op == g.OP_BCOMMIT:
            self._restore(self._pop_choice())
            self.pc = arg
        elif op == g.OP_FAIL:
            self._fail("unexpected", self.pos)
        elif op == g.OP_FAILTWICE:
            # a negative lookahead whose pattern matched: fail where the lookahead began
            self._restore(self._pop_choice())
            self._fail("unexpected", self.pos)
        elif op == g.OP_JMP:
            self.pc = arg
        elif op == g.OP_CALL:
            self.calls.append(nxt)
            self.pc = arg
        elif op == g.OP_RET:
            self.pc = self.calls.pop()
        elif op == g.OP_CUT:
            self.cut_level = len(self.choices)
            self.pc = nxt
        elif op == g.OP_TOPEN:
            self.log.append(("open", self.pos, arg, code[pc + 2]))
            self.tags += 1
            self.pc = nxt
        elif op == g.OP_CONST:
            self.log.append(("const", self.pos, self.strings[arg]))
            self.pc = nxt
        elif op == g.OP_TCLOSE:
            self.log.append(("close", self.pos))
            self.tags -= 1
            self.pc = nxt
        elif op == g.OP_RECOVER:
            self.recovers.append(_Recover(arg, len(self.calls), len(self.choices), self.tags))
            self.pc = nxt
        elif op == g.OP_RPOP:
            self.recovers.pop()
            self.pc = nxt
        elif op == g.OP_END:
            self.finished = True
        else:
            raise AssertionError(f"bad opcode {op} at {pc}")

    def _pop_choice(self) -> _Choice:
        choice = self.choices.pop()
        self.cut_level = min(self.cut_level, len(self.choices))
        return choice

    def _stop_at_limit(self, limit: str, offset: int) -> None:
        """A limit was exceeded: the parse ends with a limit error where the output stopped
        being certain (what an open alternative had parsed is dropped)."""
        if len(self.choices) > self.cut_level:
            self._restore(self.choices[self.cut_level])
        self.choices.clear()
        self.cut_level = 0
        self.recovers.clear()
        self.sub = None
        self.log.append(("error", self.pos, "limit", offset, limit))
        self.log.append(("abort", self.pos, 0))
        self.tags = 0
        self.finished = True

    def _restore(self, choice: _Choice) -> None:
        self.pos = choice.pos
        del self.calls[choice.calls :]
        del self.log[choice.log :]
        del self.recovers[choice.recovers :]
        self.tags = choice.tags
        self.sub = None

    def _fail(self, kind: str, offset: int) -> None:
        self.sub = None
        if kind == "incomplete" and self.ran_out is None:
            self.ran_out = (kind, offset)
        barrier = self.recovers[-1].choices if self.recovers else 0
        while len(self.choices) > barrier:
            live = len(self.choices) > self.cut_level
            choice = self._pop_choice()
            if live:
                self._restore(choice)
                self.pc = choice.pc
                return
        if self.ran_out is not None:
            # some alternative ran out of input: more input could have matched
            kind, offset = self.ran_out
            self.ran_out = None
        self.log.append(("error", self.pos, kind, offset))
        if self.recovers:
            frame = self.recovers.pop()
            del self.calls[frame.calls :]
            self.log.append(("abort", self.pos, frame.tags))
            self.tags = frame.tags
            self.pc = frame.handler
            return
        self.log.append(("abort", self.pos, 0))
        self.tags = 0
        self.finished = True

    # -- matching instructions: True, NEED_MORE, or (kind, offset) for a failure --------

    def _lit(self, string: int) -> object:
        text = self.strings[string]
        have = self._slice(self.pos, min(self.avail, self.pos + len(text)))
        if have and not self._allowed(string, self.pos):
            return ("unexpected", self.pos)  # a special token's text fed as text is text
        if not text.startswith(have):
            for k, b in enumerate(have):
                if b != text[k]:
                    return ("unexpected", self.pos + k)
        if len(have) < len(text):
            if self.eof:
                return ("incomplete", self.avail)
            return NEED_MORE
        self.pos += len(text)
        return True

    def _ws(self) -> object:
        while self.pos < self.avail and self._byte(self.pos) in _WS:
            self.pos += 1
        if self.pos == self.avail and not self.eof:
            return NEED_MORE
        return True

    def _chars(self, byteset: bytes, flags: int) -> object:
        state = self.sub
        if not isinstance(state, _CharsState):
            state = _CharsState(self.pos)
            self.sub = state
        while self.pos < self.avail:
            b = self._byte(self.pos)
            if not byteset[b >> 3] & (1 << (b & 7)):
                break
            self.pos += 1
        if self.pos == self.avail and not self.eof:
            return NEED_MORE
        self.sub = None
        if flags & g.CHARS_MIN1 and self.pos == state.start:
            return ("incomplete" if self.pos == self.avail else "unexpected", self.pos)
        return True

    # -- special-token markers -----------------------------------------------------------

    def set_special(self, flags: bytes | None) -> None:
        """flags[i] != 0: string i is a special token's text; None turns the rule off."""
        self.special_strings = frozenset(k for k, f in enumerate(flags or b"") if f)

    def mark_special(self, offset: int) -> None:
        if self.finished:
            return  # input is ignored now: nothing to mark
        self.special_starts.append(offset)

    @property
    def fed(self) -> int:
        return self.base + len(self.window)

    def _allowed(self, string: int, offset: int) -> bool:
        if string not in self.special_strings:
            return True
        k = bisect.bisect_left(self.special_starts, offset)
        return k < len(self.special_starts) and self.special_starts[k] == offset

    def _eof(self, flags: int) -> object:
        if self.pos < self.avail:
            return ("unexpected", self.pos)
        if not self.eof:
            return NEED_MORE
        if flags & g.EOF_STOPPED and self.cut_short:
            return ("incomplete", self.pos)
        return True

    def _until(self, stopset: int, flags: int) -> object:
        stops = self.stopsets[stopset]
        state = self.sub
        if not isinstance(state, _UntilState):
            matcher = self.tries[stopset].matcher()
            state = _UntilState(self.pos, matcher, self.pos, self.pos, [])
            self.sub = state
        while True:
            while state.pending:
                marker_id, start, end = state.pending[0]
                stop = stops[marker_id]
                found = (
                    self._follows(stop, end, state)
                    if self._allowed(self.string_index[stop.marker], start)
                    else False
                )
                if found == "limit":
                    self.pos = start  # the text before the candidate stop is certain
                    return ("pending_limit", start)
                if found is NEED_MORE:
                    self.pos = start  # the text before the candidate stop is certain
                    return self._until_wait(state, flags)
                if found is _CUT_OFF:
                    found = bool(flags & g.UNTIL_END_TRIMS)
                if found:
                    return self._until_done(state, flags, start)
                # Not a stop after all: scan again from the byte after its start.
                state.matcher.reset()
                state.scan_from = state.fed_to = start + 1
                state.pending = []
                state.follow_scanned = 0
            if state.fed_to < self.avail:
                data = self._slice(state.fed_to, self.avail)
                state.fed_to = self.avail
                state.pending = self._absolute(state, state.matcher.feed(data))
                state.follow_scanned = 0
                if state.pending:
                    continue
            if self.eof and not state.matcher.finished:
                state.pending = self._absolute(state, state.matcher.finish())
                state.follow_scanned = 0
                if state.pending:
                    continue
            break
        if self.eof:
            if flags & g.UNTIL_NEED_STOP:
                return ("incomplete", self.avail)
            if flags & g.UNTIL_END_TRIMS:
                return self._until_done(state, flags, self._trimmed_end(stops))
            return self._until_done(state, flags, self.avail)
        safe = state.scan_from + state.matcher.position - state.matcher.holdback
        if flags & g.UNTIL_END_TRIMS and safe > self.pos:
            # an incomplete character stays uncertain: the end of input may cut it off
            safe -= len(split_utf8(self._slice(max(self.pos, safe - 4), safe))[1])
        self.pos = max(self.pos, safe)
        return self._until_wait(state, flags)

    def _trimmed_end(self, stops: tuple[g.Stop, ...]) -> int:
        """END_TRIMS at the end of input: where the text ends when its last bytes are a
        proper prefix of a stop (the end cut the stop off), the earliest such start, or
        else an incomplete UTF-8 character (the end cut it off)."""
        for k in range(max(self.pos, self.avail - MAX_MARKER_LENGTH), self.avail):
            tail = self._slice(k, self.avail)
            if any(len(tail) < len(s.marker) and s.marker.startswith(tail) for s in stops):
                return k
        last = self._slice(max(self.pos, self.avail - 4), self.avail)
        return self.avail - len(split_utf8(last)[1])

    @staticmethod
    def _absolute(
        state: _UntilState, matches: list[tuple[int, int, int]]
    ) -> list[tuple[int, int, int]]:
        return [(m, state.scan_from + s, state.scan_from + e) for m, s, e in matches]

    def _until_wait(self, state: _UntilState, flags: int) -> object:
        if flags & g.UNTIL_COMMIT and not state.cut_done and self.pos > state.start:
            self.cut_level = len(self.choices)
            state.cut_done = True
        return NEED_MORE

    def _until_done(self, state: _UntilState, flags: int, stop_at: int) -> object:
        if flags & g.UNTIL_MIN1 and stop_at == state.start:
            return ("unexpected", stop_at)
        self.pos = stop_at
        if flags & g.UNTIL_COMMIT and stop_at > state.start:
            self.cut_level = len(self.choices)
        self.sub = None
        return True

    def _follows(self, stop: g.Stop, offset: int, state: _UntilState) -> object:
        """After a stop's marker: optional whitespace, then one of its follow texts or its
        declared parameters (if it has any); "limit" when the whitespace runs longer than
        the pending limit."""
        if not stop.conditional:
            return True
        marker_end = offset
        offset = max(offset, state.follow_scanned)  # checked by a feed before
        while offset < self.avail and self._byte(offset) in _WS:
            offset += 1
        state.follow_scanned = offset
        if offset - marker_end > self.limits.max_pending_bytes:
            return "limit"
        undecided = False
        if stop.follow:
            have = self._slice(offset, min(self.avail, offset + max(map(len, stop.follow))))
            for text in stop.follow:
                if have.startswith(text):
                    return True
                if text.startswith(have):
                    undecided = True
        for declared in stop.declared:
            # without a prefix, the name comes right after the marker
            found = self._declared(declared, offset if declared.prefix else marker_end)
            if found is True:
                return True
            undecided = undecided or found is NEED_MORE
        if undecided:
            return _CUT_OFF if self.eof else NEED_MORE
        return False

    def _declared(self, declared: g.Declared, offset: int) -> object:
        """Whether prefix, a name the open call's tool declares, and end come at offset
        (NEED_MORE: undecided until more input)."""
        prefix, end = declared.prefix, declared.end
        have = self._slice(offset, min(self.avail, offset + len(prefix)))
        if have != prefix:  # (at the end of input, NEED_MORE: the end cut it off)
            return NEED_MORE if prefix.startswith(have) else False
        start = offset + len(prefix)
        window = self._slice(start, min(self.avail, start + g.MAX_PARAM_NAME + len(end)))
        at = window.find(end)
        if at < 0 or at > g.MAX_PARAM_NAME:
            short = len(window) < g.MAX_PARAM_NAME + len(end)
            if not short or not self.eof:
                return NEED_MORE if short else False
            # the end of input came first: whether it cut a declared name off
            self.ops += self._drain()
            return NEED_MORE if self.declares_cut(window, end) else False
        # the call's name is certain (a cut comes before the value): hand it over first
        self.ops += self._drain()
        return self.declares(window[:at])

    def _json(self, operand: int) -> object:
        state = self.sub
        if not isinstance(state, _JsonState):
            dialect: Dialect = _DIALECTS[operand & 0xFF]
            state = _JsonState(JsonScanner(dialect, self.limits.max_depth), self.pos)
            self.sub = state
        kind = operand >> 8 & 0xFF
        if not state.kind_checked and kind != g.JSON_ANY:
            at = self.pos
            while at < self.avail and self._byte(at) in _WS:
                at += 1
            if at == self.avail:
                if not self.eof:
                    return NEED_MORE
            else:
                want = ord('"') if kind == g.JSON_STRING else ord("{")
                if self._byte(at) != want:
                    self.sub = None
                    return ("invalid_arguments", at)
                state.kind_checked = True
        verdict = "need_more"
        if self.pos < self.avail:
            verdict = state.scanner.feed(self._slice(self.pos, self.avail))
        if verdict == "need_more" and self.eof:
            verdict = state.scanner.finish()
        if verdict == "complete":
            end = state.scanner.end
            assert end is not None
            self.pos = state.start + end
            self.sub = None
            return True
        if verdict == "error":
            error = state.scanner.error
            assert error is not None
            self.pos = state.start + error[0]
            self.sub = None
            return ("limit" if error[1] == "limit" else "invalid_arguments", self.pos)
        if verdict == "incomplete":
            self.pos = self.avail
            self.sub = None
            if operand >> 16 & g.JSON_CLOSE_AT_END:
                return True
            return ("incomplete", self.avail)
        self.pos = state.start + state.scanner.position
        return NEED_MORE

    # -- emission ------------------------------------------------------------------------

    def _frontier(self) -> tuple[int, int]:
        """(position, log length) that no open alternative can undo."""
        if len(self.choices) > self.cut_level:
            bottom = self.choices[self.cut_level]
            return bottom.pos, bottom.log
        return self.pos, len(self.log)

    def frontier_pos(self) -> int:
        return self._frontier()[0]

    def _drain(self) -> list[Op]:
        frontier, log_end = self._frontier()
        ops: list[Op] = []
        while self.emitted_log < log_end:
            entry = self.log[self.emitted_log]
            self._text_to(entry[1], ops)
            kind = entry[0]
            if kind == "open":
                ops.append(("open", entry[2], entry[3], entry[1]))
                self.emit_tags += 1
            elif kind == "close":
                ops.append(("close", entry[1]))
                self.emit_tags -= 1
            elif kind == "error":  # (kind, offset), and the limit's name for a limit
                ops.append(("error", *entry[2:]))
            elif kind == "const":  # text the grammar implies, at this point of the output
                if self.emit_tags:
                    ops.append(("text", entry[2]))
            else:  # abort: the tags above the recovery frame end without closing
                ops.append(("abort", entry[2]))
                self.emit_tags = entry[2]
            self.emitted_log += 1
        self._text_to(frontier, ops)
        return ops

    def _text_to(self, offset: int, ops: list[Op]) -> None:
        if offset <= self.emitted_pos:
            return
        if self.emit_tags:
            ops.append(("text", self._slice(self.emitted_pos, offset)))
        self.emitted_pos = offset

    def _trim_window(self) -> None:
        """Drops input that neither emission nor any open alternative can need again."""
        keep = min(self.emitted_pos, self.frontier_pos())
        drop = keep - self.base
        if drop > 0:
            del self.window[:drop]
            self.base = keep
            if self.special_starts and self.special_starts[0] < keep:
                del self.special_starts[: bisect.bisect_left(self.special_starts, keep)]
