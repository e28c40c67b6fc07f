"""Readable text for one game of a batch: what a seat may see, with card names."""
from __future__ import annotations

from .core import GameBatch, Phase
from .core.cards import card_name, cards_of


_DECISIONS = {Phase.PLAY: "play", Phase.CHOOSE_HAND: "choose a card to take",
              Phase.CHOOSE_FLIP: "choose a card to take", Phase.GO_STOP: "say go or stop"}


def _names(board: int) -> str:
    return ", ".join(card_name(c) for c in cards_of(board)) or "-"


def render_table(batch: GameBatch, i: int, viewer: int) -> str:
    """Game ``i`` as seen by seat ``viewer``: layout, own hand, other hands' sizes and shaken
    cards, capture piles, scores, gos, shakes, bombs, pass tokens, and whose decision it is."""
    rules, players = batch.rules, batch.rules.players
    stock_left = int(batch.stock_len[i] - batch.stock_pos[i])
    lines = [
        f"Go-Stop, {players} players; stock {stock_left} cards; "
        + ("hand over" if batch.done[i] else f"seat {int(batch.seat[i])} to {_DECISIONS[Phase(batch.phase[i])]}"),
        f"layout: {_names(int(batch.layout[i]))}",
    ]
    for seat in range(players):
        hand = int(batch.hands[i, seat])
        if seat == viewer:
            shown = f"hand: {_names(hand)}"
        else:
            shaken = int(batch.revealed[i, seat]) & hand
            shown = f"hand: {bin(hand).count('1')} cards" + (f", shown: {_names(shaken)}" if shaken else "")
        lines += [
            f"seat {seat}{' (you)' if seat == viewer else ''}: score {int(batch.scores[i, seat])}, "
            f"gos {int(batch.gos[i, seat])}, shakes {int(batch.shakes[i, seat])}, "
            f"bombs {int(batch.bombs[i, seat])}, pass tokens {int(batch.pass_tokens[i, seat])}",
            f"  {shown}",
            f"  pile: {_names(int(batch.piles[i, seat]))}",
        ]
    if batch.phase[i] in (Phase.CHOOSE_HAND, Phase.CHOOSE_FLIP):
        lines.append(f"choose one of: {_names(int(batch.candidates[i]))}")
    if batch.done[i]:
        lines.append(f"hand over: payments {batch.payments[i].tolist()} (target {rules.target_score})")
    return "\n".join(lines)
