"""Grammar pieces for calls written as Python: ``name(key=value, ...)`` with Python
literal values, alone or in a list ``[f(a=1), g(b="x")]``."""

from __future__ import annotations

from ..grammar import (
    Node,
    ahead,
    chars,
    choice,
    cut,
    json,
    lit,
    many,
    not_ahead,
    opt,
    recover,
    seq,
    tag,
    ws,
)

IDENTIFIER_START = "A-Za-z_"
IDENTIFIER_REST = "A-Za-z0-9_"


def identifier() -> Node:
    """A Python identifier (ASCII)."""
    return seq(chars(IDENTIFIER_START, min1=True), chars(IDENTIFIER_REST))


def function_name() -> Node:
    """A tool name as a call writes it: an identifier, also with the dots and hyphens that
    tool names carry (``get-weather``, ``ns.tool``)."""
    return seq(chars(IDENTIFIER_START, min1=True), chars(IDENTIFIER_REST + ".-"))


def keyword_arguments() -> Node:
    """``(key=value, ...)``: keyword arguments only, values as Python literals (converted
    to JSON; JSON's true, false and null are taken too); a trailing comma is allowed.  A
    positional argument is invalid arguments.  Once ``key=`` has come, the value is
    final: a bad value is an error where it breaks, never a retry of the text from an
    earlier point."""
    argument = seq(
        tag("param_name", identifier()),
        ws(),
        lit("="),
        cut(),
        ws(),
        tag("param_value", json("python"), decode="python"),
    )
    arguments = seq(argument, many(seq(ws(), lit(","), ws(), argument)), ws(), opt(lit(",")))
    return seq(lit("("), ws(), opt(arguments), ws(), lit(")"))


def python_call() -> Node:
    """``name(key=value, ...)`` without its tool_call tag; committed once ``name(`` has
    come."""
    return seq(tag("tool_name", function_name()), ws(), ahead(lit("(")), cut(), keyword_arguments())


def call_list_start() -> Node:
    """What decides that a list of calls begins: ``[``, a name and ``(``."""
    return seq(lit("["), ws(), function_name(), ws(), lit("("))


# how deep the parentheses inside a broken call are matched while it is skipped
_SKIP_DEPTH = 4
# what a broken call is skipped over without looking inside: anything but quotes,
# parentheses and the "<" that may open a marker
_PLAIN = "\x00-!#-&*-;=-\xff"


def _skipped(stops: tuple[str, ...], depth: int) -> Node:
    """One piece of a broken call being skipped: a quoted string (taken whole, so a
    parenthesis or marker text inside it is not read; one that does not close ends the
    skip), plain text, a "<" that opens no marker of `stops`, or a parenthesized group
    (to `depth` levels; past that an opening parenthesis is plain)."""
    pieces = [
        seq(ahead(choice(lit('"'), lit("'"))), json("python")),
        chars(_PLAIN, min1=True),
    ]
    if stops:
        pieces.append(seq(not_ahead(choice(*(lit(s) for s in stops))), lit("<")))
    else:
        pieces.append(lit("<"))
    if depth > 0:
        pieces.append(seq(lit("("), many(_skipped(stops, depth - 1)), lit(")")))
    else:
        pieces.append(lit("("))
    return choice(*pieces)


def _call_end_ahead(stops: tuple[str, ...]) -> Node:
    """The rest of a call from after its ``(``, skipped: pieces up to a ``)`` followed by
    ``,`` or ``]`` (that ``)`` consumed).  A parenthesis inside a string or a nested group
    does not end it."""
    other_paren = seq(lit(")"), not_ahead(seq(ws(), choice(lit(","), lit("]")))))
    return seq(many(choice(_skipped(stops, _SKIP_DEPTH), other_paren)), lit(")"))


def call_list(
    close: str | None = None, stops: tuple[str, ...] = (), *, empty: bool = False
) -> Node:
    """``[call, call, ...]``, then `close` (the closing marker of its block, if any).

    Each call ends once what follows it is certain (``,``, or ``]`` and `close`), so a list
    cut short delivers only the calls a comma already closed.  Where the text of a call
    up to a ``)`` followed by ``,`` or by ``]`` and `close` has arrived (outside strings
    and nested parentheses, and before a marker of `stops`), a call that breaks reports
    its error and is skipped to that ``)``: the list goes on, and the calls before and
    after it stand.  Otherwise (the output ends first, or a marker comes) a broken call
    fails the list, with one error.  empty: ``[]`` is a list without calls."""
    end = seq(lit("]"), ws(), lit(close)) if close else lit("]")
    call = tag("tool_call", seq(python_call(), ws(), ahead(choice(lit(","), end))))
    head = seq(function_name(), ws(), lit("("))
    rest = _call_end_ahead(stops)
    element = seq(
        ahead(head),
        choice(seq(ahead(seq(head, rest, ws(), choice(lit(","), end))), recover(call, rest)), call),
    )
    calls = seq(element, many(seq(lit(","), ws(), element)), end)
    return seq(lit("["), ws(), choice(end, calls) if empty else calls)
