"""A protocol's output-token budget: where a request sets its limit, where a stream reports
what it spent. The gate's rule ``tokens-spent`` reads them (a stop reason can say the turn
ended well while the output ran into the limit: a server that rewrites ``length`` into
``tool_calls`` would otherwise execute a call cut mid-arguments).

Data only: each spec declares its paths (:attr:`.ProtocolSpec.token_budget`); nothing here
knows a protocol.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import product
from typing import Any

from msgspec import Struct

Path = tuple[str, ...]


def _at(value: Any, path: Path) -> Any:
    for name in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(name)
    return value


def proto3(*camel: str) -> tuple[Path, ...]:
    """A path of camelCase names in every spelling proto3 JSON accepts: each name either as
    written or in snake_case, level by level (``generationConfig.max_output_tokens`` too)."""
    def snake(name: str) -> str:
        return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
    return tuple(dict.fromkeys(product(*((name, snake(name)) for name in camel))))


def _count(value: Any) -> int | None:
    """A token count is a non-negative integer (``True`` is not one)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None


class TokenBudget(Struct, frozen=True):
    """Where one protocol's request limits the output tokens and its usage counts them."""

    limits: tuple[Path, ...]
    """Paths into the request body to an output-token limit. When several are set (Chat's
    ``max_tokens`` beside ``max_completion_tokens``), the smallest binds. A value that is not
    a positive integer sets no limit (Ollama's ``num_predict`` -1 means unlimited)."""
    spent: tuple[Path, ...]
    """Paths into the usage the stream reports, summed: the tokens counted against that limit
    (Gemini counts thoughts against ``maxOutputTokens`` beside the candidates' tokens)."""
    echoed: tuple[Path, ...] = ()
    """Paths into the object that carries the stream's usage to where it echoes the request's
    limit (Responses' response object: ``max_output_tokens``). A capture with no request is
    judged by it; with both, the smaller binds (a server may lower what was asked)."""

    choices: tuple[Path, ...] = ()
    """Paths into the request body to how many choices it asks for (Chat's ``n``, Gemini's
    ``candidateCount``). The usage sums every choice while the limit binds each one, so a sum
    at the limit cannot tell which choice ran into it, and a sum below it shows that none did:
    the sum is held to the limit itself (a turn of several whole choices may be refused; a cut
    one never runs), and the detail says that the count covers them all."""
    after_terminal: bool = False
    """The stream reports its usage only after its terminal signal (Bedrock Converse's
    ``metadata`` follows ``messageStop``): every call is decided before the count exists, so
    the rule never reads this budget; a count that reaches it is said afterwards
    (:mod:`..gate.late`), and the README's table says so."""

    def echo(self, carrier: Any) -> int | None:
        """The limit the object carrying the usage echoes (:attr:`echoed`), or None."""
        found = [n for n in (_count(_at(carrier, path)) for path in self.echoed) if n]
        return min(found) if found else None

    def used(self, usage: Mapping[str, Any]) -> int | None:
        """The tokens ``usage`` counts against the limit, or None when it counts none."""
        found = [n for n in (_count(_at(usage, path)) for path in self.spent) if n is not None]
        return sum(found) if found else None

    def overrun(self, body: Any, usage: Mapping[str, Any],
                echoed: int | None = None) -> Overrun | None:
        """The overrun when the reported usage reaches the budget (:meth:`binding`), else
        None."""
        bound = self.binding(body, echoed)
        used = self.used(usage)
        if bound is None or used is None or used < bound[0]:
            return None
        return Overrun(used, *bound)

    def binding(self, body: Any, echoed: int | None = None) -> tuple[int, str] | None:
        """(budget, where it was set) for the usage: the smallest limit the request sets or the
        stream ``echoed``; None when no limit is known. Where the request asks for several
        choices, the source says that the count sums them (see :attr:`choices`)."""
        limits = [(n, f"{'.'.join(path)} {n} in the request") for path in self.limits
                  if (n := _count(_at(body, path)))]
        if echoed:
            where = ".".join(self.echoed[0]) if len(self.echoed) == 1 else "the limit"
            limits.append((echoed, f"{where} {echoed} the stream echoed"))
        if not limits:
            return None
        limit, source = min(limits)
        choices = self._choices(body)
        if choices > 1:
            source = (f"{source}; the count sums {choices} choices, so any of them may "
                      "have run into it")
        return limit, source

    def _choices(self, body: Any) -> int:
        counts = [n for n in (_count(_at(body, path)) for path in self.choices) if n]
        return max(counts) if counts else 1

    def tally(self, body: Any, usage: Mapping[str, Any],
              echoed: int | None = None) -> dict[str, Any]:
        """The output tokens as a record (``replay --json``'s turn): ``used`` and ``budget``
        (None where unknown), ``source`` (where the budget was set), ``reached``."""
        bound, used = self.binding(body, echoed), self.used(usage)
        return {"used": used, "budget": bound[0] if bound else None,
                "source": bound[1] if bound else None,
                "reached": bound is not None and used is not None and used >= bound[0]}

    def account(self, body: Any, usage: Mapping[str, Any], echoed: int | None = None) -> str:
        """One line on the output tokens: the count against the budget and where it was set,
        or which of the two is missing (the debugger's expert info says it)."""
        tally = self.tally(body, usage, echoed)
        used, budget, source = tally["used"], tally["budget"], tally["source"]
        if budget is None and used is None:
            return "no output count reported, and no limit known (no request, or none set)"
        if budget is None:
            return f"{used} output tokens; no limit known (no request, or none set)"
        if used is None:
            return f"no output count reported; the budget is {budget} ({source})"
        at = "" if not tally["reached"] else (": at the limit, so the output was cut there"
                                              if self._choices(body) == 1
                                              else ": at the limit, so a choice may have been cut")
        return f"{used} of {budget} output tokens ({source}){at}"


class Overrun(Struct, frozen=True):
    """Usage that reached the budget: the tokens counted, the budget, and where it was set."""

    used: int
    budget: int
    source: str
    """Which limit bound, with its value (``max_tokens 16 in the request``)."""
