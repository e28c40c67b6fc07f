"""The tables of the rules page (``docs/rules.md``), generated from the engine.

The page is prose with generated blocks, each between ``<!-- generated: NAME -->`` and
``<!-- end: NAME -->``: the card catalogue, the action ids, and the rule options with both
presets' values. ``tests/test_docs.py`` fails when a block differs
from what this module makes of the code; ``python -m gostop_env.rules_page docs/rules.md``
rewrites them in place.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

from .core import actions as A
from .core import cards as C
from .core.rules import PRESET_PLAYERS, PRESETS, Rules

KIND_NAMES = {C.Kind.BRIGHT: "bright", C.Kind.ANIMAL: "animal", C.Kind.RIBBON: "ribbon", C.Kind.JUNK: "junk"}


def cards_table() -> str:
    """Every card: id, month, name, kind, junk value, and the sets it belongs to."""
    sets = {card: f"{name} ribbons" for name, group in C.RIBBON_GROUPS.items() for card in group}
    sets |= {card: "godori bird" for card in C.GODORI_BIRDS}
    sets[C.RAIN_BRIGHT] = "the rain bright"
    rows = ["| id | card | kind | junk value | set |", "|---|---|---|---|---|"]
    for card in range(C.NUM_CARDS):
        kind = KIND_NAMES.get(C.KINDS[card], "joker")
        value = int(C.JUNK_VALUE[card])
        rows.append(f"| {card} | {C.card_name(card)} | {kind} | {value or ''} | {sets.get(card, '')} |")
    return "\n".join(rows)


def actions_table() -> str:
    """The 125 action ids by range, with the first and last name of each range."""
    ranges = (
        (A.PLAY, A.PLAY + C.NUM_CARDS - 1, "play the card of that id from hand"),
        (A.SHAKE, A.BOMB - 1, "shake the month (id − 50: 0 is January)"),
        (A.BOMB, A.PASS - 1, "bomb the month (id − 62)"),
        (A.PASS, A.PASS, "pass: spend a pass token, only flip"),
        (A.CHOOSE, A.CHOOSE + C.NUM_MONTH_CARDS - 1, "choose the layout card id − 75"),
        (A.GO, A.GO, "go"),
        (A.STOP, A.STOP, "stop"),
    )
    rows = ["| ids | action | e.g. |", "|---|---|---|"]
    for first, last, what in ranges:
        ids = f"{first}" if first == last else f"{first}–{last}"
        rows.append(f"| {ids} | {what} | {A.action_name(first)} |")
    return "\n".join(rows)


def options_table() -> str:
    """Every rule option with its meaning and its value under each preset, for each player
    count it is played by."""
    meanings = _attribute_docs(Rules.__doc__ or "")
    presets = {(name, players): Rules.preset(name, players) for name in PRESETS for players in PRESET_PLAYERS[name]}
    columns = [f"{name}, {players}" for name, players in presets]
    columns[0] += " players"
    rows = ["| option | meaning | " + " | ".join(columns) + " |", "|---" * (len(columns) + 2) + "|"]
    for option in Rules.__dataclass_fields__:
        values = [f"`{getattr(rules, option)}`" for rules in presets.values()]
        rows.append(f"| `{option}` | {meanings[option]} | {' | '.join(values)} |")
    return "\n".join(rows)


def _attribute_docs(doc: str) -> dict[str, str]:
    """``{name: text}`` from a docstring's ``Attributes:`` section (continuation lines joined)."""
    section = doc.split("Attributes:", 1)[1]
    meanings: dict[str, str] = {}
    for name, text in re.findall(r"^\s{8}(\w+): (.*?)(?=^\s{8}\w+: |\Z)", section, re.S | re.M):
        meanings[name] = " ".join(text.split()).replace("``", "`").replace("|", "/")
    return meanings


BLOCKS: dict[str, Callable[[], str]] = {
    "cards": cards_table,
    "actions": actions_table,
    "options": options_table,
}


def render(page: str) -> str:
    """``page`` with every generated block rewritten from the code."""
    for name, make in BLOCKS.items():
        start, end = f"<!-- generated: {name} -->", f"<!-- end: {name} -->"
        if start not in page or end not in page:
            raise ValueError(f"the page has no block {name!r} ({start} ... {end})")
        head, rest = page.split(start, 1)
        page = f"{head}{start}\n{make()}\n{end}{rest.split(end, 1)[1]}"
    return page


def main(argv: list[str]) -> int:
    """Rewrite the generated blocks of the page at ``argv[0]``."""
    if len(argv) != 1:
        print("usage: python -m gostop_env.rules_page docs/rules.md", file=sys.stderr)
        return 2
    path = Path(argv[0])
    path.write_text(render(path.read_text()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
