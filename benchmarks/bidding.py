"""How well a DMC agent's bidding and doubling Q-values predict the results of its hands.

Plays ``--deals`` games with bidding, the agent at one seat (rotating over the
seats) and the opponent at the other two, and for every bidding and doubling
decision of the agent keeps the Q-values of its legal actions, the action it
chose, and the result the hand gave that seat, as a training target (the
objective of the checkpoint's run, ``logadp`` by default; the bids of a hand
that was redealt are worth 0, as in training). Prints, per action, how often it
was chosen, the mean Q and the mean result when chosen, the bias and RMSE of
Q against the result, and the correlation of Q(chosen) with the result; and
how often each side doubles, per role. For a policy (a PPO checkpoint: its
scores are logits), also the probability it gives ``double`` at its doubling
decisions, per role: the median, the mean and the share of decisions below 5%.

With ``--farmer-doubling`` it also measures what the agent's doubling as a
farmer is worth: the same deals played again by the agent with every farmer's
double replaced by "no double" (:class:`NeverDoubleAsFarmer`; bidding and
play unchanged, so the same hands reach the doubling phase), and the agent's
points per farmer hand in the two passes, paired by deal.

With ``--farmer-teams`` it separates a farmer's play from the hands it is
dealt: the same deals played three times, with 0, 1 and 2 of the seats
held by the agent (rotating over the seats), and in each pass the hands where
an opponent won the bidding: the farmers' points per hand and how often that
landlord won (:func:`farmer_teams`). Where two agent farmers do no better than
two opponent farmers, a farmer's result with bidding is set by the hands the
opponent chose to bid on, not by the farmers' play.

Run (from the repository root)::

    python -m benchmarks.bidding --agent pretrained --opponent rule --deals 4000
    python -m benchmarks.bidding --agent dmc:runs/default/checkpoint.pt --json bidding.json
    python -m benchmarks.bidding --agent pretrained --deals 4000 --farmer-doubling
    python -m benchmarks.bidding --agent pretrained --deals 4000 --farmer-teams
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from agents.base import Agent
from agents.dmc import DMCAgent, network_of
from agents.policy import segment_log_softmax
from agents.registry import make_agent
from doudizhu_arena.arena import mean_ci
from doudizhu_arena.options import check_count, check_outputs_and_agents, command_errors
from doudizhu_env import engine
from doudizhu_env.actions import DOUBLE, NO_DOUBLE, SPECIAL_NAMES
from doudizhu_env.checks import check_seed
from doudizhu_env.driver import drive, play_out
from doudizhu_env.engine import ROLE_NAMES, role_of
from doudizhu_env.observation import seat_view
from doudizhu_env.rewards import OBJECTIVES
from doudizhu_env.rules import Rules
from train.buffer import objective_targets

from . import write_json

#: The most deals of one analysis (they are played at once, as one batch of games).
MAX_DEALS = 100_000


def agent_seats(num_games: int, count: int) -> np.ndarray:
    """``(num_games, 3)`` bool: which seats the agent holds when it has ``count`` (0 to 3) of them,
    rotating over the games (game ``g``'s first agent seat is ``g % 3``)."""
    first = np.arange(num_games)[:, None] % 3
    return (np.arange(3)[None, :] - first) % 3 < count


def play(agent: Agent, opponent: Agent, num_games: int, rules: Rules, seed: int) -> engine.State:
    """The final state of ``num_games`` hands with bidding, the agent at seat ``game % 3`` and the
    opponent at the others (the seats of :func:`play_and_record`), played by the shared driver."""
    state = engine.reset(np.random.default_rng(seed), num_games, rules)
    return play_out(state, (~agent_seats(num_games, 1)).astype(np.int64), [agent, opponent])[0]


def play_and_record(agent: DMCAgent, opponent, num_games: int, rules: Rules, seed: int) -> dict:
    """Play the games; every bidding/doubling decision as rows of arrays (see the module docstring)."""
    state = engine.reset(np.random.default_rng(seed), num_games, rules)
    seat_player = (~agent_seats(num_games, 1)).astype(np.int64)  # 0: the agent, 1: the opponent
    rec = {k: [] for k in ("game", "seat", "network", "action", "q", "best_other", "redeals", "mine",
                           "p_double")}
    for turn in drive(state, seat_player, [agent, opponent]):
        games = np.flatnonzero(turn.live)
        mine = seat_player[games, turn.before.to_act[games]] == 0
        if mine.any():
            view = seat_view(turn.before, games[mine])
            ids, offsets = engine.legal_actions(view)
            q = agent.action_values(view, ids, offsets)
            p = double_probability(q, ids, offsets) if agent.model.score_kind == "logits" else None
            _keep(rec, view, games[mine], turn.actions[games[mine]], ids, offsets, q, True, p)
        if (~mine).any():
            view = seat_view(turn.before, games[~mine])
            _keep(rec, view, games[~mine], turn.actions[games[~mine]], None, None, None, False, None)
        state = turn.after
    out = {k: np.asarray(v) for k, v in rec.items()}
    out["landlord"] = state.landlord[out["game"]]
    out["points"] = state.scores[out["game"], out["seat"]]
    out["final_redeals"] = state.redeals[out["game"]]
    return out


def double_probability(scores: np.ndarray, ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per decision, the softmax probability of ``double`` over its legal actions' ``scores`` (a
    policy's logits); NaN where ``double`` is not legal."""
    n = len(offsets) - 1
    seg = np.repeat(np.arange(n), np.diff(offsets))
    probs = segment_log_softmax(torch.from_numpy(np.asarray(scores)), torch.from_numpy(seg), n).exp().numpy()
    out = np.full(n, np.nan)
    out[seg[ids == DOUBLE]] = probs[ids == DOUBLE]
    return out


class NeverDoubleAsFarmer(Agent):
    """``base``'s decisions, except that as a farmer it never doubles ("no double" instead)."""

    def __init__(self, base: Agent):
        self.base = base

    def reset(self) -> None:
        self.base.reset()

    def act(self, view: engine.State) -> np.ndarray:
        actions = np.array(self.base.act(view), dtype=np.int64)
        farmer = (view.phase == engine.DOUBLING) & (view.to_act != view.landlord)
        actions[farmer & (actions == DOUBLE)] = NO_DOUBLE
        return actions


def farmer_doubling_worth(agent: Agent, opponent_spec: str, num_games: int, rules: Rules, seed: int) -> dict:
    """The agent's points per hand as a farmer, as it plays and with :class:`NeverDoubleAsFarmer`,
    on the same deals (a fresh opponent for each pass), and their paired difference (95% interval).

    The agent must be deterministic (a greedy DMC agent is), so that both passes bid alike."""
    final = {}
    for name, player in (("as_played", agent), ("never", NeverDoubleAsFarmer(agent))):
        final[name] = play(player, make_agent(opponent_spec, rules=rules, seed=seed), num_games, rules, seed)
    games, seats = np.arange(num_games), np.arange(num_games) % 3
    a, b = final["as_played"], final["never"]
    if not np.array_equal(a.landlord, b.landlord):
        raise ValueError("the two passes bid differently: the agent (or the opponent) is not deterministic")
    farmer = (a.landlord >= 0) & (a.landlord != seats) & ~a.truncated
    pa, pb = a.scores[games, seats][farmer], b.scores[games, seats][farmer]
    diff = mean_ci(pb - pa)
    return {"farmer_hands": int(farmer.sum()), "adp_farmer": float(pa.mean()),
            "adp_farmer_never": float(pb.mean()), "difference": diff["mean"], "difference_ci": diff["ci"],
            "changed_hands": int((a.doubles[games, seats][farmer] == 1).sum())}


def farmer_teams(agent: Agent, opponent_spec: str, num_games: int, rules: Rules, seed: int) -> dict:
    """Farmers against an opponent landlord, with bidding, by how many of the three seats the agent
    holds (0, 1, 2: :func:`agent_seats`; the same deals each time, a fresh opponent per pass): over
    the hands an opponent won the bidding, the farmers' mean points per hand (95% interval) and
    the landlord's share of wins. With 0 seats it is the opponent against itself."""
    out, games = {}, np.arange(num_games)
    for count in (0, 1, 2):
        mine = agent_seats(num_games, count)
        state = engine.reset(np.random.default_rng(seed), num_games, rules)
        opponent = make_agent(opponent_spec, rules=rules, seed=seed)
        final = play_out(state, (~mine).astype(np.int64), [agent, opponent])[0]
        landlord = np.maximum(final.landlord, 0)
        kept = (final.landlord >= 0) & ~final.truncated & ~mine[games, landlord]
        farmers = (final.scores[games, (landlord + 1) % 3] + final.scores[games, (landlord + 2) % 3]) / 2
        adp = mean_ci(farmers[kept].astype(np.float64))
        out[f"agent_seats_{count}"] = {
            "hands": int(kept.sum()), "farmer_adp": adp["mean"], "farmer_adp_ci": adp["ci"],
            "landlord_wp": float((final.scores[games, landlord][kept] > 0).mean()) if kept.any() else 0.0}
    return out


def _keep(rec, view, games, actions, ids, offsets, q, mine: bool, p_double) -> None:
    """Append the bidding and doubling decisions among ``games`` to ``rec`` (``p_double``: a
    policy's probability of ``double`` at each, or None)."""
    network = network_of(view)
    keep = np.flatnonzero(network <= 1)
    for i in keep:
        chosen, best_other = np.nan, np.nan
        if q is not None:
            lo, hi = offsets[i], offsets[i + 1]
            chosen = float(q[lo:hi][ids[lo:hi] == actions[i]][0])
            others = q[lo:hi][ids[lo:hi] != actions[i]]
            best_other = float(others.max()) if len(others) else np.nan
        for key, value in (("game", games[i]), ("seat", view.to_act[i]), ("network", network[i]),
                           ("action", actions[i]), ("q", chosen), ("best_other", best_other),
                           ("redeals", view.redeals[i]), ("mine", mine),
                           ("p_double", np.nan if p_double is None else p_double[i])):
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
    for index, name in ((0, "bidding"), (1, "doubling")):
        rows = mine & (rec["network"] == index)
        if rows.sum() > 2:
            out[f"corr_{name}"] = float(np.corrcoef(rec["q"][rows], target[rows])[0, 1])
    doubling = rec["network"] == 1
    for who, side in (("agent", mine), ("opponent", ~mine)):
        for r, name in enumerate(ROLE_NAMES):
            rows = doubling & side & (role == r)
            if rows.any():
                out["doubling"][f"{who}/{name}"] = float((rec["action"][rows] == 5).mean())
    p = rec["p_double"]
    for r, name in enumerate(ROLE_NAMES):
        rows = doubling & mine & (role == r) & np.isfinite(p)
        if rows.any():
            out.setdefault("policy_doubling", {})[name] = {
                "decisions": int(rows.sum()), "median": float(np.median(p[rows])),
                "mean": float(p[rows].mean()), "below_5pc": float((p[rows] < 0.05).mean())}
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
    if "policy_doubling" in summary:
        lines.append("the policy's probability of double: " + ", ".join(
            f"{k} median {f['median']:.3f} mean {f['mean']:.3f}, {f['below_5pc']:.1%} below 5% "
            f"({f['decisions']:,} decisions)" for k, f in summary["policy_doubling"].items()))
    return "\n".join(lines)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bidding", description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="pretrained", help="a DMC agent spec (pretrained, dmc:PATH)")
    parser.add_argument("--opponent", default="rule")
    parser.add_argument("--deals", type=int, default=4000, help=f"deals, 2 to {MAX_DEALS:,} (default 4000)")
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--objective", default=None, choices=list(OBJECTIVES),
                        help="the targets' objective (default: the checkpoint's run's, else logadp)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--farmer-doubling", action="store_true",
                        help="also play the deals again with the agent never doubling as a farmer and "
                             "compare its points as a farmer")
    parser.add_argument("--farmer-teams", action="store_true",
                        help="also play the deals with 0, 1 and 2 agent seats and compare the farmers' "
                             "points against an opponent landlord")
    parser.add_argument("--json", help="write the figures as JSON")
    args = parser.parse_args(argv)
    with command_errors(parser):  # every option, output and agent before the first game
        check_count(args.deals, "--deals", 2, MAX_DEALS, "the deals are played at once, as one batch")
        check_seed(args.seed, "--seed")
        rules = Rules.preset(args.rules)
        check_outputs_and_agents({"--json": args.json}, [args.agent, args.opponent], [rules])
        agent = make_agent(args.agent, rules=rules)
        if not isinstance(agent, DMCAgent):
            raise ValueError(f"--agent must be a DMC agent (pretrained, dmc:PATH), got {args.agent!r}")
        opponent = make_agent(args.opponent, rules=rules, seed=args.seed)
    objective = args.objective or "logadp"
    rec = play_and_record(agent, opponent, args.deals, rules, args.seed)
    summary = summarize(rec, objective)
    summary.update(agent=args.agent, opponent=args.opponent, deals=args.deals, objective=objective)
    print(format_summary(summary))
    if args.farmer_doubling:
        worth = farmer_doubling_worth(agent, args.opponent, args.deals, rules, args.seed)
        summary["farmer_doubling"] = worth
        print(f"as a farmer ({worth['farmer_hands']:,} hands, {worth['changed_hands']:,} of them doubled): "
              f"ADP {worth['adp_farmer']:+.3f} as played, {worth['adp_farmer_never']:+.3f} never doubling; "
              f"never doubling minus as played {worth['difference']:+.3f} ± {worth['difference_ci']:.3f}")
    if args.farmer_teams:
        summary["farmer_teams"] = teams = farmer_teams(agent, args.opponent, args.deals, rules, args.seed)
        print(f"farmers against a {args.opponent} landlord, by the agent's seats:")
        for key, f in teams.items():
            print(f"  {key.removeprefix('agent_seats_')} of 3: {f['hands']:,} hands, farmer ADP "
                  f"{f['farmer_adp']:+.3f} ± {f['farmer_adp_ci']:.3f}, landlord won {f['landlord_wp']:.1%}")
    if args.json:
        write_json(args.json, summary)
    return summary


if __name__ == "__main__":
    main()
