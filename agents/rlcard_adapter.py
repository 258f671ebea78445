"""rlcard's Dou Dizhu rule agent (``DouDizhuRuleAgentV1``) as a batched :class:`~agents.base.Agent`.

Optional: install with ``pip install rlcard==1.2.0`` (the ``peers`` extra, see
``benchmarks/requirements-peers.txt``). The adapter rebuilds, for each
decision, the raw observation the rlcard agent reads: ``current_hand`` (rlcard's
card string, ``3..9TJQKA2`` then ``B`` small joker, ``R`` big joker),
``trace`` (the card-play moves of the hand as ``(seat, action)``),
``actions`` (the legal moves as rlcard strings, ascending action id),
``landlord`` and ``self``. The move it returns is mapped back to an action id.

Where rlcard's game has no counterpart:

- **bidding and doubling** (rlcard's Dou Dizhu has neither): delegated to
  :class:`agents.rule.RuleAgent`'s hand-strength rule, so both sides of a
  ``rule`` vs ``rlcard`` study bid and double alike;
- **combinations rlcard does not know** (both jokers as the two kickers,
  ``7777+X+D``, under the standard rules): left out of the legal list given
  to it; if an opponent plays one, the adapter passes;
- the agent's ``np.random.choice`` fallback reads numpy's global generator:
  the adapter seeds it from its own generator for each call and restores it.
"""

from __future__ import annotations

import functools

import numpy as np

from doudizhu_env import engine
from doudizhu_env.actions import NUM_SPECIAL, PASS, action_table
from doudizhu_env.rules import TABLES_KEPT, Rules

from .base import Agent
from .rule import RuleAgent

RLCARD_CHARS = "3456789TJQKA2BR"


def _rlcard():
    try:
        from rlcard.games.doudizhu.utils import CARD_TYPE
        from rlcard.models.doudizhu_rule_models import DouDizhuRuleAgentV1
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(f"the rlcard agent needs rlcard ({err}); pip install rlcard==1.2.0") from err
    return DouDizhuRuleAgentV1, CARD_TYPE[0]


def counts_to_rlcard(counts) -> str:
    """15 rank counts -> rlcard's card string (rank order)."""
    return "".join(RLCARD_CHARS[r] * int(n) for r, n in enumerate(counts))


@functools.lru_cache(maxsize=TABLES_KEPT)
def _strings(rules: Rules) -> tuple[list[str], dict[str, int]]:
    """rlcard string of every action id, and string -> first action id (card actions)."""
    table = action_table(rules)
    names = ["pass"] + [""] * (NUM_SPECIAL - 1) + [counts_to_rlcard(c) for c in table.counts[NUM_SPECIAL:]]
    back: dict[str, int] = {"pass": PASS}
    for a in range(NUM_SPECIAL, len(table)):
        back.setdefault(names[a], a)
    return names, back


class RlcardRuleAgent(Agent):
    """rlcard's ``DouDizhuRuleAgentV1`` for card play, RuleAgent's rule for bids and doubles."""

    name = "rlcard"

    def __init__(self, seed=0):
        agent_cls, self.card_type = _rlcard()
        self.agent = agent_cls()
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self.bidder = RuleAgent()

    def act(self, view: engine.State) -> np.ndarray:
        """Bids and doubles by the rule agent, card play by rlcard's agent."""
        out = np.empty(view.num_games, dtype=np.int64)
        play = np.flatnonzero(view.phase == engine.PLAY)
        other = np.flatnonzero(view.phase != engine.PLAY)
        if len(other):
            out[other] = self.bidder.act(engine.take(view, other))
        if len(play):
            ids, offsets = engine.legal_actions(view)
            for i in play:
                out[i] = self._play(view, int(i), ids[offsets[i] : offsets[i + 1]])
        return out

    def raw_obs(self, view: engine.State, i: int, legal: np.ndarray) -> dict:
        """The raw observation rlcard's rule agent reads, for game ``i``."""
        names, _ = _strings(view.rules)
        seat = int(view.to_act[i])
        n = int(view.history_len[i])
        moves = view.history[i, :n]
        who = view.history_seat[i, :n]
        trace = [(int(s), names[int(a)]) for a, s in zip(moves, who, strict=True)
                 if a == PASS or a >= NUM_SPECIAL]
        actions = [names[int(a)] for a in legal if names[int(a)] in self.card_type or a == PASS]
        return {"current_hand": counts_to_rlcard(view.hands[i, seat]), "trace": trace, "actions": actions,
                "landlord": int(view.landlord[i]), "self": seat}

    def _play(self, view: engine.State, i: int, legal: np.ndarray) -> int:
        """rlcard's move for game ``i``, as an action id (pass on moves rlcard cannot read)."""
        obs = self.raw_obs(view, i, legal)
        target = int(view.to_beat[i])
        names, back = _strings(view.rules)
        if target >= 0 and names[target] not in self.card_type:
            return PASS
        saved = np.random.get_state()
        np.random.seed(int(self.rng.integers(2**32)))
        try:
            move = self.agent.step({"raw_obs": obs})
        finally:
            np.random.set_state(saved)
        a = back.get(move)
        if a is None or a not in legal:  # pragma: no cover - defensive
            return int(legal[-1]) if target < 0 else PASS
        return a
