"""List prices of the Claude models, per million tokens: the one table offline costs use.

Source: Anthropic's pricing page, https://platform.claude.com/docs/en/about-claude/pricing
("Model pricing": base input, 5-minute cache writes, 1-hour cache writes, cache hits and
refreshes, output). The page's rule: a 5-minute cache write costs 1.25x the base input, a
1-hour write 2x, a cache hit 0.1x (the newest generations publish their own, lower, hit
price). The rows for the newest models (Opus 5.5, Sonnet 5) are the ones the bundled Claude
Code CLI (2.1.332) charges itself: measured by serving it one reply of a million tokens of
each kind from the scripted model and reading ``total_cost_usd`` (Opus 5.5: $4 input,
$0.20 cache read, $5 cache write, $20 output; Sonnet 5: $2, $0.20, $2.50, $10), so the
cost the CLI reports for an offline run and the cost computed here agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULT_MODEL", "PRICES", "Price", "cost_of", "price_of"]


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens of each kind."""

    input: float
    output: float
    cache_read: float
    write_5m: float
    write_1h: float


def _rule(base: float, output: float, read: float | None = None) -> Price:
    """A row by the page's multipliers (1.25x, 2x, 0.1x unless the row says otherwise)."""
    return Price(base, output, base / 10 if read is None else read, base * 1.25, base * 2)


#: Model id prefix -> price. Looked up by the longest prefix of the model's id.
PRICES: dict[str, Price] = {
    "claude-opus-5-5": _rule(4.0, 20.0, read=0.20),
    "claude-opus-5": _rule(5.0, 25.0),
    "claude-opus-4-8": _rule(5.0, 25.0),
    "claude-opus-4-7": _rule(5.0, 25.0),
    "claude-opus-4-6": _rule(5.0, 25.0),
    "claude-opus-4-5": _rule(5.0, 25.0),
    "claude-opus-4-1": _rule(15.0, 75.0),
    "claude-opus-4": _rule(15.0, 75.0),
    "claude-sonnet-5": _rule(2.0, 10.0, read=0.20),
    "claude-sonnet-4": _rule(3.0, 15.0),
    "claude-haiku-4-5": _rule(1.0, 5.0),
    "claude-haiku-3-5": _rule(0.80, 4.0),
}
#: What the bundled CLI asks for when no model is set (and so what offline runs bill).
DEFAULT_MODEL = "claude-opus-5-5"


def price_of(model: str | None) -> Price:
    """The price of ``model`` (the default model's for an unknown or missing id)."""
    name = (model or DEFAULT_MODEL).lower()
    for prefix in sorted(PRICES, key=len, reverse=True):
        if name.startswith(prefix):
            return PRICES[prefix]
    return PRICES[DEFAULT_MODEL]


def cost_of(usage: Mapping[str, Any], model: str | None = None) -> float:
    """Dollars one reply's API ``usage`` costs at list prices.

    Cache writes are split by TTL when ``usage["cache_creation"]`` says how (the API's
    ``ephemeral_5m_input_tokens`` / ``ephemeral_1h_input_tokens``); otherwise all are
    5-minute writes, the default TTL.
    """
    price = price_of(model)

    def count(field: str, where: Mapping[str, Any] = usage) -> int:
        value = where.get(field)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    written = count("cache_creation_input_tokens")
    split = usage.get("cache_creation")
    hour = count("ephemeral_1h_input_tokens", split) if isinstance(split, Mapping) else 0
    hour = min(hour, written)
    dollars = (
        count("input_tokens") * price.input
        + count("output_tokens") * price.output
        + count("cache_read_input_tokens") * price.cache_read
        + (written - hour) * price.write_5m
        + hour * price.write_1h
    )
    return dollars / 1_000_000
