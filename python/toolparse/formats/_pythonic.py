"""Grammar pieces for calls written as Python: ``name(key=value, ...)`` with Python
literal values, alone or in a list ``[f(a=1), g(b="x")]``."""

from __future__ import annotations

from ..grammar import Node, ahead, chars, choice, cut, json, lit, many, opt, seq, tag, ws

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


def call_list() -> Node:
    """``[call, call, ...]``.  Each call ends once what follows it is certain (``,`` or
    ``]``), so a list cut short delivers only the calls a comma already closed."""
    call = tag("tool_call", seq(python_call(), ws(), ahead(choice(lit(","), lit("]")))))
    return seq(lit("["), ws(), call, many(seq(lit(","), ws(), call)), lit("]"))
