"""How well a model's hand head predicts the hidden hands, against counting alone.

``python -m benchmarks.hand_head --agent dmc:runs/x/checkpoint.pt`` plays
games with the model (epsilon-greedy, every seat) and, at each card-play
decision, scores two predictions of the two hidden hands (the seat after the
one to act, then the one after it; per rank, how many cards) by their mean
cross-entropy per rank against the true hands:

- the model's hand head (``model.hand_head``, :mod:`agents.dmc`);
- **counting**: the public facts alone, the cards of each rank not yet seen
  by the acting seat dealt at random between the two hidden seats by their
  cards left (hypergeometric, :func:`counting_prior`). In the play phase the
  unseen cards are exactly the two hidden hands (the hole cards are in the
  landlord's hand), so these numbers are the public counts.

A head below counting has learned something from the play itself (who
passed, what was played when); above it, it has not yet learned the counts.
"""

from __future__ import annotations

import argparse
from math import comb

import numpy as np

from agents.dmc import HAND_CLASSES, NETWORKS, DMCAgent, network_of
from agents.registry import make_agent
from doudizhu_arena.options import check_count, check_outputs_and_agents, command_errors
from doudizhu_env import engine
from doudizhu_env.cards import NUM_RANKS
from doudizhu_env.checks import check_seed
from doudizhu_env.driver import drive
from doudizhu_env.observation import observe
from doudizhu_env.rules import Rules
from train.actor import hidden_hands

from . import write_json

#: The most games played at once, and the most decisions per game (every decision's figures are kept).
MAX_GAMES, MAX_STEPS = 100_000, 100_000

_MAX = 40
_COMB = np.array([[comb(a, b) for b in range(_MAX + 1)] for a in range(_MAX + 1)], dtype=np.float64)


def counting_prior(hidden: np.ndarray) -> np.ndarray:
    """``(n, 2, R, HAND_CLASSES)`` probabilities of each count per rank for the two hidden seats of
    ``hidden`` (``(n, 2, R)`` true hands), from their sum per rank and their sizes alone: the
    hypergeometric law of ``k`` of a rank's ``u`` unseen cards among a seat's ``m`` of the ``U``."""
    hidden = hidden.astype(np.int64)
    u = hidden.sum(1)[:, None, :, None]                       # unseen cards of each rank
    m = hidden.sum(2)[:, :, None, None]                       # each hidden seat's cards left
    total = m.sum(1, keepdims=True)
    k = np.arange(HAND_CLASSES)
    rest = m - k
    ok = (k <= u) & (rest >= 0) & (rest <= total - u)
    p = _COMB[u, np.minimum(k, u)] * _COMB[total - u, np.clip(rest, 0, _MAX)] / _COMB[total, m]
    return np.where(ok, p, 0.0)


def cross_entropies(agent: DMCAgent, games: int, steps: int, rng: np.random.Generator) -> dict:
    """Play ``games`` games for ``steps`` decisions each (dealt again as they end) and return the mean
    cross-entropy per rank of the head and of counting over the card-play decisions, with their count."""
    import torch

    model, state = agent.model, engine.reset(rng, games, agent.model.rules)
    head, counted = [], []
    with torch.no_grad():
        for turn in drive(state, np.zeros((games, 3), np.int64), [agent], auto_reset=True, max_steps=steps):
            s = turn.before
            play = np.flatnonzero(s.phase == engine.PLAY)
            if len(play):
                truth = hidden_hands(s, play).astype(np.int64)
                logp = head_log_probs(model, observe(engine.take(s, play)), network_of(s)[play])
                picked = np.take_along_axis(logp, truth[..., None], -1)[..., 0]
                head.append(-picked.mean((1, 2)))
                prior = np.take_along_axis(counting_prior(truth), truth[..., None], -1)[..., 0]
                counted.append(-np.log(np.maximum(prior, 1e-12)).mean((1, 2)))
    head_ce, counting_ce = np.concatenate(head), np.concatenate(counted)
    return {"decisions": len(head_ce), "head_ce": float(head_ce.mean()),
            "counting_ce": float(counting_ce.mean()),
            "head_better_share": float((head_ce < counting_ce).mean())}


def head_log_probs(model, obs: np.ndarray, network: np.ndarray) -> np.ndarray:
    """The hand head's ``(n, 2, R, HAND_CLASSES)`` log-probabilities for observations ``obs`` of
    decisions of the networks ``network``."""
    import torch

    x = torch.from_numpy(obs.astype(np.float32))
    out = np.zeros((len(obs), 2, NUM_RANKS, HAND_CLASSES))
    for index in np.unique(network):
        rows = np.flatnonzero(network == index)
        net = model.nets[NETWORKS[index]]
        out[rows] = torch.log_softmax(net.hand_logits(net.embed(x[torch.from_numpy(rows)])), -1).numpy()
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hand_head",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--agent", required=True, help="a DMC agent whose model has a hand head (dmc:PATH)")
    parser.add_argument("--games", type=int, default=256, help="games played at once")
    parser.add_argument("--steps", type=int, default=200, help="decisions per game")
    parser.add_argument("--epsilon", type=float, default=0.01, help="the agent's exploration while playing")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="write the figures as JSON")
    args = parser.parse_args(argv)
    with command_errors(parser):  # every option, output and the agent before the first game
        check_count(args.games, "--games", 1, MAX_GAMES, "the games are played at once")
        check_count(args.steps, "--steps", 1, MAX_STEPS, "every decision's figures are kept")
        if not 0.0 <= args.epsilon <= 1.0:
            raise ValueError(f"--epsilon must be a probability in 0..1, got {args.epsilon}")
        check_seed(args.seed, "--seed")
        rules = Rules.preset("standard")
        check_outputs_and_agents({"--json": args.json}, [args.agent], [rules])
        agent = make_agent(args.agent, rules=rules)
        if not isinstance(agent, DMCAgent) or not agent.model.cfg.hand_head:
            raise ValueError(f"--agent must be a DMC agent whose model has a hand head (model.hand_head: "
                             f"true), got {args.agent!r}")
    rng = np.random.default_rng(args.seed)
    figures = cross_entropies(DMCAgent(agent.model, args.epsilon, rng), args.games, args.steps, rng)
    print(f"{figures['decisions']:,} card-play decisions: cross-entropy per rank of the hidden hands, "
          f"hand head {figures['head_ce']:.3f}, counting alone {figures['counting_ce']:.3f} "
          f"(the head lower on {figures['head_better_share']:.1%} of them)")
    if args.json:
        write_json(args.json, {"agent": args.agent, **figures})
    return figures


if __name__ == "__main__":
    main()
