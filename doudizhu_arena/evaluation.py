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

from agents.base import Agent
from agents.registry import make_agent
from doudizhu_arena.arena import MODES, REPORT_ROLES, format_report, mode_rules, run_arena
from doudizhu_env.rules import Rules

AGENT = "dmc"


def evaluate_against(agent: Agent | str, rules: Rules, opponents: list[str], num_deals: int, seed: int = 0,
                     modes: tuple[str, ...] = MODES, workers: int = 1) -> dict:
    """``{f"{baseline}/{mode}": {"wp": .., "adp": .., "wp_landlord": .., ..., "table": str}}``.

    ``agent`` is an agent object (played in this process) or an agent spec
    (:func:`agents.registry.make_agent`; each of ``workers`` processes builds its own).
    """
    if isinstance(agent, str):
        name, factory = agent, None
    else:
        name = AGENT

        def factory(spec, rules, seed):
            return agent if spec == AGENT else make_agent(spec, rules=rules, seed=seed)

        workers = 1  # an agent object lives in this process
    out = {}
    for opponent in opponents:
        for mode in modes:
            report = run_arena((name, opponent, opponent), num_deals, mode_rules(mode, rules), seed=seed,
                               agent_factory=factory, workers=workers)
            out[f"{opponent}/{mode}"] = _figures(report, name)
    return out


def _figures(report: dict, name: str = AGENT) -> dict:
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


def format_table(report: dict) -> str:
    """The evaluation tables, one per baseline and mode."""
    return "\n\n".join(f"against {key} (agent = {AGENT}):\n{fig['table']}" for key, fig in report.items())
