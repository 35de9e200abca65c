"""Pure-Python twin of the incremental JSON scanner (csrc/json.c).

It is the executable specification (docs/primitives.md): one byte at a time, the same
states, verdicts, offsets, error reasons and partial view as the C scanner.
"""

from __future__ import annotations

from typing import Literal

from .._common import as_bytes

Dialect = Literal["strict", "lenient", "python"]

DEFAULT_MAX_DEPTH = 512
MAX_DEPTH_CEILING = 1 << 20

RELAXATION_NAMES = (
    "trailing_comma",
    "single_quote",
    "unquoted_key",
    "python_literal",
    "control_character",
    "lone_surrogate",
    "missing_comma",
)
_R_TRAILING_COMMA, _R_SINGLE_QUOTE, _R_UNQUOTED_KEY = 1, 2, 4
_R_PYTHON_LITERAL, _R_CONTROL_CHARACTER, _R_LONE_SURROGATE = 8, 16, 32
_R_MISSING_COMMA = 64

# States, named as in json.c.
(
    _VALUE,
    _VALUE_OR_CLOSE,
    _KEY_OR_CLOSE,
    _KEY,
    _COLON,
    _AFTER,
    _IDENT,
    _STR,
    _ESC,
    _HEX,
    _SURR_BSL,
    _SURR_U,
    _UTF8,
    _NUM_MINUS,
    _NUM_ZERO,
    _NUM_INT,
    _NUM_DOT,
    _NUM_FRAC,
    _NUM_E,
    _NUM_ESIGN,
    _NUM_EXP,
    _LIT,
    _DONE,
    _ERROR,
) = range(24)

_HEX_U4, _HEX_LOW4, _HEX_X2, _HEX_U8 = range(4)
_HEX_DIGITS = {_HEX_U4: 4, _HEX_LOW4: 4, _HEX_X2: 2, _HEX_U8: 8}

_OBJECT, _ARRAY, _TUPLE = ord("}"), ord("]"), ord(")")

_LITERALS = (b"true", b"false", b"null", b"True", b"False", b"None")
_WS = frozenset(b" \t\n\r")
_DIGITS = frozenset(b"0123456789")
_IDENT_START = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_$")
_IDENT_CHARS = _IDENT_START | _DIGITS
_JSON_ESCAPES = frozenset(b'"\\/bfnrt')
_HEX_VALUES = {c: int(chr(c), 16) for c in b"0123456789abcdefABCDEF"}
_NUMBER_END_STATES = frozenset((_NUM_ZERO, _NUM_INT, _NUM_FRAC, _NUM_EXP))
_NUMBER_OPEN_STATES = frozenset((_NUM_MINUS, _NUM_DOT, _NUM_E, _NUM_ESIGN))


class _Fail(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason


def _utf8_lead(b: int) -> tuple[int, int, int] | None:
    """(continuation bytes left, lowest and highest next byte) for a lead byte."""
    if 0xC2 <= b <= 0xDF:
        return 1, 0x80, 0xBF
    if b == 0xE0:
        return 2, 0xA0, 0xBF
    if b == 0xED:
        return 2, 0x80, 0x9F
    if 0xE1 <= b <= 0xEF:
        return 2, 0x80, 0xBF
    if b == 0xF0:
        return 3, 0x90, 0xBF
    if 0xF1 <= b <= 0xF3:
        return 3, 0x80, 0xBF
    if b == 0xF4:
        return 3, 0x80, 0x8F
    return None


class JsonScanner:
    """Scans one JSON value incrementally; see docs/primitives.md."""

    def __init__(self, dialect: Dialect = "strict", max_depth: int = DEFAULT_MAX_DEPTH) -> None:
        if dialect not in ("strict", "lenient", "python"):
            raise ValueError(f"unknown JSON dialect {dialect!r}")
        if not isinstance(max_depth, int) or not 1 <= max_depth <= MAX_DEPTH_CEILING:
            raise ValueError(f"max_depth must be 1..{MAX_DEPTH_CEILING}")
        self.dialect: Dialect = dialect
        self.max_depth = max_depth
        self.reset()

    def reset(self) -> None:
        self._stack: list[int] = []
        self._state = _VALUE
        self._finished = False
        self._final = "need_more"
        self._is_key = False
        self._quote = ord('"')
        self._hex_kind = 0
        self._hex_left = 0
        self._code = 0
        self._utf8_left = 0
        self._utf8_lo = 0
        self._utf8_hi = 0
        self._lit = 0
        self._lit_pos = 0
        self._relax = 0
        self._pos = 0
        self._end: int | None = None
        self._error: tuple[int, str] | None = None

    # -- results -------------------------------------------------------------------

    @property
    def end(self) -> int | None:
        return self._end

    @property
    def error(self) -> tuple[int, str] | None:
        return self._error

    @property
    def position(self) -> int:
        return self._pos

    @property
    def depth(self) -> int:
        return len(self._stack)

    @property
    def relaxations(self) -> tuple[str, ...]:
        return tuple(n for bit, n in enumerate(RELAXATION_NAMES) if self._relax >> bit & 1)

    @property
    def repaired(self) -> bool:
        return self._relax != 0

    def _verdict(self) -> str:
        if self._state == _DONE:
            return "complete"
        if self._state == _ERROR:
            return "error"
        return "need_more"

    # -- feeding -------------------------------------------------------------------

    def feed(self, data: bytes | str) -> str:
        if self._finished:
            raise ValueError("feed() after finish(); call reset() to scan again")
        buf = as_bytes(data)
        if self._state in (_DONE, _ERROR):
            return self._verdict()
        i = 0
        n = len(buf)
        try:
            while i < n:
                i = self._step(buf[i], i)
                if self._state == _DONE:
                    break
        except _Fail as fail:
            self._state = _ERROR
            self._error = (self._pos + i, fail.reason)
        self._pos += i
        return self._verdict()

    def _value_done(self, i: int) -> None:
        """A value ended just before offset i of this feed."""
        if not self._stack:
            self._state = _DONE
            self._end = self._pos + i
        else:
            self._state = _AFTER

    def _step(self, b: int, i: int) -> int:
        """Handles byte b at index i of the current feed; returns the next index."""
        strict = self.dialect == "strict"
        python = self.dialect == "python"
        state = self._state
        if state in (_VALUE, _VALUE_OR_CLOSE, _KEY_OR_CLOSE, _KEY, _COLON, _AFTER) and b in _WS:
            return i + 1
        stack = self._stack
        top = stack[-1] if stack else 0

        if state == _VALUE_OR_CLOSE and b == top:
            return self._close(i)
        if state == _VALUE and stack and top != _OBJECT and b in (_ARRAY, _TUPLE):
            if b != top:
                raise _Fail("unexpected_byte")
            if strict:
                raise _Fail("trailing_comma")
            if not python:
                self._relax |= _R_TRAILING_COMMA
            return self._close(i)
        if state in (_VALUE, _VALUE_OR_CLOSE):
            return self._open_value(b, i)

        if state == _KEY and b == _OBJECT:
            if strict:
                raise _Fail("trailing_comma")
            if not python:
                self._relax |= _R_TRAILING_COMMA
            return self._close(i)
        if state == _KEY_OR_CLOSE and b == _OBJECT:
            return self._close(i)
        if state in (_KEY, _KEY_OR_CLOSE):
            if b in b"\"'":
                self._is_key = True
                return self._open_string(b, i)
            if self.dialect == "lenient" and b in _IDENT_START:
                self._relax |= _R_UNQUOTED_KEY
                self._state = _IDENT
                return i + 1
            raise _Fail("unexpected_byte")

        if state == _IDENT:
            if b in _IDENT_CHARS:
                return i + 1
            if b == ord(":"):
                self._state = _VALUE
                return i + 1
            if b in _WS:
                self._state = _COLON
                return i
            raise _Fail("unexpected_byte")

        if state == _COLON:
            if b != ord(":"):
                raise _Fail("unexpected_byte")
            self._state = _VALUE
            return i + 1

        if state == _AFTER:
            if b == ord(","):
                self._state = _KEY if top == _OBJECT else _VALUE
                return i + 1
            if b == top:
                return self._close(i)
            if self.dialect == "lenient":
                # a comma left out: the next member's key, or an array's next string,
                # object or array (a number or a literal after one is no clear start)
                if top == _OBJECT:
                    if b in b"\"'" or b in _IDENT_START:
                        self._relax |= _R_MISSING_COMMA
                        self._state = _KEY
                        return i
                elif b in b"\"'{[":
                    self._relax |= _R_MISSING_COMMA
                    self._state = _VALUE
                    return i
            raise _Fail("unexpected_byte")

        if state == _STR:
            return self._string_byte(b, i)
        if state == _UTF8:
            if not self._utf8_lo <= b <= self._utf8_hi:
                raise _Fail("invalid_utf8")
            self._utf8_lo, self._utf8_hi = 0x80, 0xBF
            self._utf8_left -= 1
            if self._utf8_left == 0:
                self._state = _STR
            return i + 1
        if state == _ESC:
            return self._escape_byte(b, i)
        if state == _HEX:
            return self._hex_byte(b, i)
        if state == _SURR_BSL:
            if b == ord("\\"):
                self._state = _SURR_U
                return i + 1
            self._lone_surrogate()
            self._state = _STR
            return self._string_byte(b, i)
        if state == _SURR_U:
            if b == ord("u"):
                return self._open_hex(_HEX_LOW4, i)
            self._lone_surrogate()
            self._state = _ESC
            return self._escape_byte(b, i)

        if state in _NUMBER_END_STATES or state in _NUMBER_OPEN_STATES:
            return self._number_byte(state, b, i)

        if state == _LIT:
            lit = _LITERALS[self._lit]
            if b != lit[self._lit_pos]:
                raise _Fail("invalid_literal")
            self._lit_pos += 1
            if self._lit_pos == len(lit):
                self._value_done(i + 1)
            return i + 1
        raise AssertionError("unreachable scanner state")

    def _open_value(self, b: int, i: int) -> int:
        strict = self.dialect == "strict"
        python = self.dialect == "python"
        if b in b"{[" or (b == ord("(") and python):
            if len(self._stack) == self.max_depth:
                raise _Fail("limit")
            if b == ord("{"):
                self._stack.append(_OBJECT)
                self._state = _KEY_OR_CLOSE
            else:
                self._stack.append(_ARRAY if b == ord("[") else _TUPLE)
                self._state = _VALUE_OR_CLOSE
            return i + 1
        if b in b"\"'":
            self._is_key = False
            return self._open_string(b, i)
        if b == ord("-") or (b == ord("+") and python):  # Python takes a unary plus
            self._state = _NUM_MINUS
            return i + 1
        if b == ord("0"):
            self._state = _NUM_ZERO
            return i + 1
        if ord("1") <= b <= ord("9"):
            self._state = _NUM_INT
            return i + 1
        if b in b"tfn":  # also in python: models writing Python calls use JSON's literals
            self._lit = b"tfn".index(b)
        elif b in b"TFN" and not strict:
            if not python:
                self._relax |= _R_PYTHON_LITERAL
            self._lit = 3 + b"TFN".index(b)
        else:
            raise _Fail("unexpected_byte")
        self._lit_pos = 1
        self._state = _LIT
        return i + 1

    def _open_string(self, quote: int, i: int) -> int:
        if quote == ord("'"):
            if self.dialect == "strict":
                raise _Fail("unexpected_byte")
            if self.dialect == "lenient":
                self._relax |= _R_SINGLE_QUOTE
        self._quote = quote
        self._state = _STR
        return i + 1

    def _close(self, i: int) -> int:
        self._stack.pop()
        self._value_done(i + 1)
        return i + 1

    def _string_byte(self, b: int, i: int) -> int:
        if b == self._quote:
            if self._is_key:
                self._state = _COLON
            else:
                self._value_done(i + 1)
            return i + 1
        if b == ord("\\"):
            self._state = _ESC
            return i + 1
        if b >= 0x80:
            return self._utf8_start(b, i)
        if b < 0x20:
            if self.dialect == "strict":
                raise _Fail("control_character")
            if self.dialect == "python":
                if b in b"\n\r":
                    raise _Fail("control_character")
            else:
                self._relax |= _R_CONTROL_CHARACTER
        return i + 1

    def _utf8_start(self, b: int, i: int) -> int:
        lead = _utf8_lead(b)
        if lead is None:
            raise _Fail("invalid_utf8")
        self._utf8_left, self._utf8_lo, self._utf8_hi = lead
        self._state = _UTF8
        return i + 1

    def _escape_byte(self, b: int, i: int) -> int:
        if self.dialect == "python":
            if b in b"xuU":
                kind = _HEX_X2 if b == ord("x") else _HEX_U4 if b == ord("u") else _HEX_U8
                return self._open_hex(kind, i)
            if b >= 0x80:
                return self._utf8_start(b, i)
            self._state = _STR
            return i + 1
        if b == ord("u"):
            return self._open_hex(_HEX_U4, i)
        if b == ord("'"):
            if self.dialect == "strict":
                raise _Fail("invalid_escape")
            self._relax |= _R_SINGLE_QUOTE
        elif b not in _JSON_ESCAPES:
            raise _Fail("invalid_escape")
        self._state = _STR
        return i + 1

    def _open_hex(self, kind: int, i: int) -> int:
        self._hex_kind = kind
        self._hex_left = _HEX_DIGITS[kind]
        self._code = 0
        self._state = _HEX
        return i + 1

    def _lone_surrogate(self) -> None:
        if self.dialect == "strict":
            raise _Fail("lone_surrogate")
        self._relax |= _R_LONE_SURROGATE

    def _hex_doomed(self) -> str | None:
        """The error every completion of the digits so far ends in (checked per digit)."""
        shift = 4 * self._hex_left
        lo = self._code << shift
        hi = lo + (1 << shift) - 1
        strict = self.dialect == "strict"
        if self._hex_kind == _HEX_U8 and lo > 0x10FFFF:
            return "invalid_escape"
        if self._hex_kind == _HEX_U4 and strict and 0xDC00 <= lo and hi <= 0xDFFF:
            return "lone_surrogate"
        if self._hex_kind == _HEX_LOW4 and strict and (hi < 0xDC00 or lo > 0xDFFF):
            return "lone_surrogate"
        return None

    def _hex_byte(self, b: int, i: int) -> int:
        digit = _HEX_VALUES.get(b)
        if digit is None:
            raise _Fail("invalid_escape")
        self._code = self._code << 4 | digit
        self._hex_left -= 1
        doomed = self._hex_doomed()
        if doomed is not None:
            raise _Fail(doomed)
        if self._hex_left:
            return i + 1
        code, kind = self._code, self._hex_kind
        if kind == _HEX_X2:
            self._state = _STR
        elif kind == _HEX_U8:
            if 0xD800 <= code <= 0xDFFF:
                self._relax |= _R_LONE_SURROGATE
            self._state = _STR
        elif kind == _HEX_LOW4 and 0xDC00 <= code <= 0xDFFF:
            self._state = _STR
        else:
            # lenient or python: the pending high surrogate, or this low one, is alone
            if kind == _HEX_LOW4 or 0xDC00 <= code <= 0xDFFF:
                self._relax |= _R_LONE_SURROGATE
            self._state = _SURR_BSL if 0xD800 <= code <= 0xDBFF else _STR
        return i + 1

    def _number_byte(self, state: int, b: int, i: int) -> int:
        digit = b in _DIGITS
        if state == _NUM_MINUS:
            if not digit:
                raise _Fail("invalid_number")
            self._state = _NUM_ZERO if b == ord("0") else _NUM_INT
            return i + 1
        if state == _NUM_DOT:
            if not digit:
                raise _Fail("invalid_number")
            self._state = _NUM_FRAC
            return i + 1
        if state == _NUM_E and b in b"+-":
            self._state = _NUM_ESIGN
            return i + 1
        if state in (_NUM_E, _NUM_ESIGN):
            if not digit:
                raise _Fail("invalid_number")
            self._state = _NUM_EXP
            return i + 1
        if state == _NUM_ZERO and digit:
            raise _Fail("leading_zero")
        if digit and state != _NUM_ZERO:
            return i + 1
        if state in (_NUM_ZERO, _NUM_INT) and b == ord("."):
            self._state = _NUM_DOT
            return i + 1
        if state != _NUM_EXP and b in b"eE":
            self._state = _NUM_E
            return i + 1
        # The number ends before b; b is handled in the state that follows.
        self._value_done(i)
        if self._state == _DONE:
            return i
        return self._step(b, i)

    def finish(self) -> str:
        if self._finished:
            return self._final
        if self._state in _NUMBER_END_STATES and not self._stack:
            self._state = _DONE
            self._end = self._pos
        self._finished = True
        if self._state == _DONE:
            self._final = "complete"
        elif self._state == _ERROR:
            self._final = "error"
        else:
            self._final = "incomplete"
        return self._final

    # -- partial view --------------------------------------------------------------

    def closing(self) -> str | None:
        suffix = self.closing_bytes()
        return None if suffix is None else suffix.decode("utf-8", "surrogateescape")

    def closing_bytes(self) -> bytes | None:
        lexical = self._lexical_closing()
        if lexical is None:
            return None
        if self._state == _DONE:
            return lexical
        return lexical + bytes(reversed(self._stack))

    def _lexical_closing(self) -> bytes | None:
        state = self._state
        strict = self.dialect == "strict"
        top = self._stack[-1] if self._stack else 0
        if state in (_DONE, _VALUE_OR_CLOSE, _KEY_OR_CLOSE, _AFTER) or state in _NUMBER_END_STATES:
            return b""
        if state == _ERROR:
            return None
        if state == _VALUE:
            return b"" if top in (_ARRAY, _TUPLE) and not strict else b"0"
        if state in _NUMBER_OPEN_STATES:
            return b"0"
        if state == _KEY:
            return b'"":0' if strict else b""
        if state in (_IDENT, _COLON):
            return b":0"
        if state == _LIT:
            return _LITERALS[self._lit][self._lit_pos :]
        # Inside a string: finish the token in progress, then the string.
        if state == _STR:
            token = b""
        elif state == _ESC:
            token = b"\\"
        elif state == _UTF8:
            token = bytes([self._utf8_lo] + [0x80] * (self._utf8_left - 1))
        elif state == _SURR_BSL:
            token = b"\\udc00" if strict else b""
        elif state == _SURR_U:
            token = b"udc00" if strict else b"\\"
        else:
            token = self._hex_closing().encode("ascii")
        tail = bytes([self._quote]) + (b":0" if self._is_key else b"")
        return token + tail

    def _hex_closing(self) -> str:
        """The smallest valid completion of the digits (viable: _hex_doomed passed)."""
        left, kind = self._hex_left, self._hex_kind
        strict = self.dialect == "strict"
        code = self._code << (4 * left)
        if kind == _HEX_LOW4 and strict:
            code = max(code, 0xDC00)
        digits = f"{code:08x}"[8 - left :] if left else ""
        if kind == _HEX_U4 and strict and 0xD800 <= code <= 0xDBFF:
            digits += "\\udc00"
        return digits
