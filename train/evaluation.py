"""Evaluation of a trained agent against the baselines, through the arena.

Used by the training loop (periodic and final evaluations, logged to
TensorBoard) and importable on its own. Each evaluation is a duplicate match
(``agents.arena.run_arena``, rotation of ``(agent, baseline, baseline)``
over the seats on the same deals), so every deal is played with the agent in
each seat.
"""

from __future__ import annotations

from agents.arena import format_report, run_arena
from agents.base import Agent
from agents.registry import make_agent
from doudizhu_env.rules import Rules

AGENT = "dmc"


def evaluate_against(agent: Agent, rules: Rules, opponents: list[str], num_deals: int, seed: int = 0) -> dict:
    """``{opponent: {"wp": .., "adp": .., "wp_landlord": .., ...}}`` of ``agent`` against each baseline."""

    def factory(spec, rules, seed):
        return agent if spec == AGENT else make_agent(spec, rules=rules, seed=seed)

    out = {}
    for opponent in opponents:
        report = run_arena((AGENT, opponent, opponent), num_deals, rules, seed=seed, agent_factory=factory)
        entry = report["agents"][AGENT]
        figures = {"wp": entry["all"]["wp"]["mean"], "adp": entry["all"]["adp"]["mean"]}
        for role in ("landlord", "farmer"):
            figures[f"wp_{role}"] = entry[role]["wp"]["mean"]
            figures[f"adp_{role}"] = entry[role]["adp"]["mean"]
        out[opponent] = figures
        out[opponent]["table"] = format_report(report)
    return out


def format_table(report: dict) -> str:
    """The evaluation tables, one per baseline."""
    return "\n\n".join(f"against {opponent} (agent = {AGENT}):\n{figures['table']}"
                       for opponent, figures in report.items())
