"""Evaluation of a trained agent against the baselines, through the arena.

Used by the training loop (periodic and final evaluations, logged to
TensorBoard as ``eval/<baseline>/<mode>/<figure>``) and importable on its own.
Each evaluation is a duplicate match (:func:`doudizhu_arena.arena.run_arena`: the
line-up ``(agent, baseline, baseline)`` rotated over the positions on the
same deals) in two modes:

- ``bidding``: the full game; roles come out of the bidding;
- ``fixed_landlord``: the same rules without bidding, the landlord given by
  the deal (as in DouZero's evaluations), so the agent plays each role on
  every deal whatever it would have bid.
"""

from __future__ import annotations

import numpy as np

from agents.base import Agent
from agents.registry import make_agent
from doudizhu_arena.arena import (
    MODES,
    REPORT_ROLES,
    ArenaConfig,
    check_judge_args,
    chunk_jobs,
    deal_means,
    format_report,
    make_deals,
    mean_ci,
    mode_rules,
    play_chunks,
    run_arena,
)
from doudizhu_env.checks import short
from doudizhu_env.rules import Rules

#: The most deals one paired comparison plays (every deal is made before the first game).
MAX_PAIRED_DEALS = 10_000_000



class Evaluation(dict):
    """What :func:`evaluate_against` returns: ``{f"{baseline}/{mode}": figures}``, and in :attr:`agent`
    the name the evaluated agent played under (its tables' rows, :func:`format_table`'s heading)."""

    def __init__(self, agent: str, figures: dict):
        super().__init__(figures)
        self.agent = agent


def evaluate_against(agent: Agent | str, rules: Rules, opponents: list[str], num_deals: int, seed: int = 0,
                     modes: tuple[str, ...] = MODES, workers: int = 1) -> Evaluation:
    """``{f"{baseline}/{mode}": {"wp": .., "adp": .., "wp_landlord": .., ..., "table": str}}``.

    ``agent`` is an agent object (played in this process, under its own :attr:`~agents.base.Agent.name`:
    ``dmc``, ``ppo``, ...) or an agent spec (:func:`agents.registry.make_agent`; each of ``workers``
    processes builds its own).
    """
    if isinstance(agent, str):
        name, factory = agent, None
    else:
        name = agent.name if agent.name not in opponents else f"{agent.name} (evaluated)"

        def factory(spec, rules, seed):
            return agent if spec == name else make_agent(spec, rules=rules, seed=seed)

        workers = 1  # an agent object lives in this process
    out = {}
    for opponent in opponents:
        for mode in modes:
            report = run_arena((name, opponent, opponent), num_deals, mode_rules(mode, rules), seed=seed,
                               agent_factory=factory, workers=workers)
            out[f"{opponent}/{mode}"] = _figures(report, name)
    return Evaluation(name, out)


def _figures(report: dict, name: str) -> dict:
    """The agent's WP and ADP (and their 95% half-intervals ``*_ci``) overall and per role."""
    entry = report["agents"][name]
    figures = {}
    for role in REPORT_ROLES:
        if entry[role]["games"]:
            suffix = "" if role == "all" else f"_{role}"
            for key in ("wp", "adp"):
                figures[key + suffix] = entry[role][key]["mean"]
                figures[f"{key}{suffix}_ci"] = entry[role][key]["ci"]
    bidding = entry["bidding"]
    if bidding["turns"]:
        figures["landlord_share"] = bidding["landlord_share"]
        figures["pass_share"] = bidding["bid_shares"][0]
    figures["table"] = format_report(report, agents=[name])
    return figures


def format_table(report: dict, agent: str | None = None) -> str:
    """The evaluation tables of :func:`evaluate_against`, one per baseline and mode, each headed by the
    evaluated agent's name: ``agent``, by default the report's own (:attr:`Evaluation.agent`)."""
    agent = agent if agent is not None else getattr(report, "agent", None)
    named = f" (agent = {agent})" if agent is not None else ""
    return "\n\n".join(f"against {key}{named}:\n{fig['table']}" for key, fig in report.items())


def paired_with_reference(agent: str, reference: str, rules: Rules, num_deals: int, seed: int = 0,
                          workers: int = 1, chunk_size: int = 200) -> dict:
    """The agent's points minus ``reference``'s in the same seat of the same deal, overall and where
    both ended in the same role: ``{"all" | "landlord" | "farmer" | "landlord_down" | "landlord_up" |
    "farmer_team": mean_ci of per-deal means}`` (each with ``pairs``, the games compared; "farmer" is
    both farmer seats, "landlord_down" and "landlord_up" each one of them, all three with the
    reference as the partner).

    The agent plays the line-up ``(agent, reference, reference)`` rotated over the positions (as
    :func:`evaluate_against`); the reference plays all three seats of the same deals (same engine
    keys: the same redeals). With bidding, roles come from each game's own bidding, so "farmer"
    compares the seats where both the agent and the reference became farmers: "as farmer better
    than the reference in the same seats on the same deals".

    "farmer_team" puts two copies of the agent in both farmer seats, a team, against the reference
    as landlord (the line-up ``(reference, agent, agent)``: once per deal without bidding, rotated
    with it), and compares the farmers' points, per farmer, with the reference's own farmers' where
    the reference's seat became landlord in both games. A farmer seat alone measures how the agent
    plays beside a partner it was not trained with; the team, how it plays beside itself, as in
    DouZero's evaluation of farmers.

    A role where no seat was paired (few deals, with bidding) has ``pairs`` 0 and a NaN mean, written
    as null by :func:`doudizhu_arena.arena.report_json`. The arguments are checked before any game:
    a one-line ``TypeError``/``ValueError`` naming the argument (``num_deals`` 2..10,000,000).
    """
    check_judge_args(num_deals, seed, workers, chunk_size, max_deals=MAX_PAIRED_DEALS)
    for name, spec in (("agent", agent), ("reference", reference)):
        if not isinstance(spec, str) or not spec:
            raise TypeError(f"{name} must be an agent spec, a non-empty string such as 'rule', got "
                            f"{short(spec)}")
    if not isinstance(rules, Rules):
        raise TypeError(f"rules must be a doudizhu_env.rules.Rules (Rules.preset('standard')), got "
                        f"{short(rules)}")
    deals = make_deals(seed, num_deals, rules, chunk_size)
    mine = _played(ArenaConfig((agent, reference, reference), rules, "rotate", seed, chunk_size,
                               names=sorted({agent, reference})), deals, workers)
    theirs = _played(ArenaConfig((reference,) * 3, rules, "none", seed, chunk_size, names=[reference]),
                     deals, workers)
    team = _played(ArenaConfig((reference, agent, agent), rules, "rotate" if rules.bidding else "none", seed,
                               chunk_size, names=sorted({agent, reference})), deals, workers)
    diff, role_a, role_r, deal = _paired_seats(mine, theirs, rules)
    team_diff, role_t, role_tr, team_deal = _paired_seats(team, theirs, rules)
    # the team's points per farmer are minus half the landlord's (the three seats sum to 0)
    rows = {"all": (diff, np.ones(len(diff), bool), deal),
            "landlord": (diff, (role_a == 0) & (role_r == 0), deal),
            "farmer": (diff, (role_a >= 1) & (role_r >= 1), deal),
            "landlord_down": (diff, (role_a == 1) & (role_r == 1), deal),
            "landlord_up": (diff, (role_a == 2) & (role_r == 2), deal),
            "farmer_team": (-team_diff / 2, (role_t == 0) & (role_tr == 0), team_deal)}
    return {name: mean_ci(deal_means(d, value, mask, num_deals)) | {"pairs": int(mask.sum())}
            for name, (value, mask, d) in rows.items()}


def _paired_seats(mine: list, theirs: list, rules: Rules) -> tuple[np.ndarray, ...]:
    """Per game of ``mine`` (chunk results of a rotated or unrotated line-up), the points of the seat
    of its first position minus the reference's (``theirs``, one game per deal) in the same seat of
    the same deal, the two games' roles of that seat, and the deal of each game."""
    diffs, roles_a, roles_r, deal_of = [], [], [], []
    for a, r in zip(mine, theirs, strict=True):
        n, games = len(r.deal), len(a.deal)
        position = np.arange(games) // n  # games ordered by rotation, then deal
        seat = position if rules.bidding else np.argmax(a.roles == position[:, None], axis=1)
        same = np.tile(np.arange(n), games // n)  # the reference's game of the same deal
        diffs.append(a.scores[np.arange(games), seat] - r.scores[same, seat])
        roles_a.append(a.roles[np.arange(games), seat])
        roles_r.append(r.roles[same, seat])
        deal_of.append(a.deal)
    return tuple(np.concatenate(x) for x in (diffs, roles_a, roles_r, deal_of))


def _played(cfg: ArenaConfig, deals: list, workers: int) -> list:
    """The chunk results of ``deals`` under ``cfg``, in order."""
    return list(play_chunks(chunk_jobs(cfg, deals), workers))
