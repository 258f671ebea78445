"""How well a DMC agent's bidding and doubling Q-values predict the results of its hands.

Plays ``--deals`` games with bidding, the agent at one seat (rotating over the
seats) and the opponent at the other two, and for every bidding and doubling
decision of the agent keeps the Q-values of its legal actions, the action it
chose, and the result the hand gave that seat, as a training target (the
objective of the checkpoint's run, ``logadp`` by default; the bids of a hand
that was redealt are worth 0, as in training). Prints, per action, how often it
was chosen, the mean Q and the mean result when chosen, the bias and RMSE of
Q against the result, and the correlation of Q(chosen) with the result; and
how often each side doubles, per role.

Run (from the repository root)::

    python -m benchmarks.bidding --agent pretrained --opponent rule --deals 4000
    python -m benchmarks.bidding --agent dmc:runs/default/checkpoint.pt --json bidding.json
"""

from __future__ import annotations

import argparse

import numpy as np

from agents.dmc import DMCAgent, network_of
from agents.registry import make_agent
from doudizhu_env import engine
from doudizhu_env.actions import SPECIAL_NAMES
from doudizhu_env.engine import ROLE_NAMES, role_of
from doudizhu_env.observation import seat_view
from doudizhu_env.rewards import OBJECTIVES
from doudizhu_env.rules import Rules
from train.buffer import objective_targets

from . import write_json


def play_and_record(agent: DMCAgent, opponent, num_games: int, rules: Rules, seed: int) -> dict:
    """Play the games; every bidding/doubling decision as rows of arrays (see the module docstring)."""
    state = engine.reset(np.random.default_rng(seed), num_games, rules)
    rows = np.arange(num_games)
    agent_seat = rows % 3
    rec = {k: [] for k in ("game", "seat", "network", "action", "q", "best_other", "redeals", "mine")}
    while not state.done.all():
        live, seat = ~state.done, state.to_act
        mine = live & (seat == agent_seat)
        actions = np.zeros(num_games, dtype=np.int64)
        games = np.flatnonzero(mine)
        if len(games):
            view = seat_view(state, games)
            ids, offsets = engine.legal_actions(view)
            q = agent.action_values(view, ids, offsets)
            actions[games] = agent.act(view)
            _keep(rec, view, games, actions[games], ids, offsets, q, True)
        theirs = np.flatnonzero(live & ~mine)
        if len(theirs):
            view = seat_view(state, theirs)
            actions[theirs] = opponent.act(view)
            _keep(rec, view, theirs, actions[theirs], None, None, None, False)
        state = engine.step(state, actions)
    out = {k: np.asarray(v) for k, v in rec.items()}
    out["landlord"] = state.landlord[out["game"]]
    out["points"] = state.scores[out["game"], out["seat"]]
    out["final_redeals"] = state.redeals[out["game"]]
    return out


def _keep(rec, view, games, actions, ids, offsets, q, mine: bool) -> None:
    """Append the bidding and doubling decisions among ``games`` to ``rec``."""
    pos = network_of(view)
    keep = np.flatnonzero(pos <= 1)
    for i in keep:
        chosen, best_other = np.nan, np.nan
        if q is not None:
            lo, hi = offsets[i], offsets[i + 1]
            chosen = float(q[lo:hi][ids[lo:hi] == actions[i]][0])
            others = q[lo:hi][ids[lo:hi] != actions[i]]
            best_other = float(others.max()) if len(others) else np.nan
        for key, value in (("game", games[i]), ("seat", view.to_act[i]), ("network", pos[i]),
                           ("action", actions[i]), ("q", chosen), ("best_other", best_other),
                           ("redeals", view.redeals[i]), ("mine", mine)):
            rec[key].append(value)


def summarize(rec: dict, objective: str) -> dict:
    """The figures of the module docstring, from :func:`play_and_record`'s rows."""
    target = objective_targets(rec["points"], objective)
    target = np.where(rec["redeals"] < rec["final_redeals"], 0.0, target)  # a redealt hand's bids: 0
    role = role_of(rec["seat"], rec["landlord"])
    out = {"actions": {}, "doubling": {}}
    mine = rec["mine"]
    for a in np.unique(rec["action"][mine]):
        rows = mine & (rec["action"] == a)
        err = rec["q"][rows] - target[rows]
        position = mine & (rec["network"] == rec["network"][rows][0])
        out["actions"][SPECIAL_NAMES[a]] = {
            "turns": int(rows.sum()), "share_of_position": float(rows.sum() / position.sum()),
            "mean_q": float(rec["q"][rows].mean()), "mean_result": float(target[rows].mean()),
            "bias": float(err.mean()), "rmse": float(np.sqrt((err**2).mean())),
        }
    for p, name in ((0, "bidding"), (1, "doubling")):
        rows = mine & (rec["network"] == p)
        if rows.sum() > 2:
            out[f"corr_{name}"] = float(np.corrcoef(rec["q"][rows], target[rows])[0, 1])
    doubling = rec["network"] == 1
    for who, side in (("agent", mine), ("opponent", ~mine)):
        for r, name in enumerate(ROLE_NAMES):
            rows = doubling & side & (role == r)
            if rows.any():
                out["doubling"][f"{who}/{name}"] = float((rec["action"][rows] == 5).mean())
    return out


def format_summary(summary: dict) -> str:
    lines = ["| action | turns | share | mean Q | mean result | bias | RMSE |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name, f in summary["actions"].items():
        lines.append(f"| {name} | {f['turns']:,} | {f['share_of_position']:.1%} | {f['mean_q']:+.3f} | "
                     f"{f['mean_result']:+.3f} | {f['bias']:+.3f} | {f['rmse']:.3f} |")
    lines.append("")
    lines.append("correlation of Q(chosen) with the result: " + ", ".join(
        f"{k.removeprefix('corr_')} {v:+.3f}" for k, v in summary.items() if k.startswith("corr_")))
    lines.append("doubling share: " + ", ".join(f"{k} {v:.1%}" for k, v in summary["doubling"].items()))
    return "\n".join(lines)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="pretrained", help="a DMC agent spec (pretrained, dmc:PATH)")
    parser.add_argument("--opponent", default="rule")
    parser.add_argument("--deals", type=int, default=4000)
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--objective", default=None, choices=list(OBJECTIVES),
                        help="the targets' objective (default: the checkpoint's run's, else logadp)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--json", help="write the figures as JSON")
    args = parser.parse_args(argv)
    rules = Rules.preset(args.rules)
    agent = make_agent(args.agent, rules=rules)
    if not isinstance(agent, DMCAgent):
        parser.error(f"--agent must be a DMC agent (pretrained, dmc:PATH), got {args.agent!r}")
    opponent = make_agent(args.opponent, rules=rules, seed=args.seed)
    objective = args.objective or "logadp"
    rec = play_and_record(agent, opponent, args.deals, rules, args.seed)
    summary = summarize(rec, objective)
    summary.update(agent=args.agent, opponent=args.opponent, deals=args.deals, objective=objective)
    print(format_summary(summary))
    if args.json:
        write_json(args.json, summary)
    return summary


if __name__ == "__main__":
    main()
