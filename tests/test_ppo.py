"""PPO with a perfect-information critic (train.ppo): the pieces, the policy's view, tiny runs.

The end-to-end runs use ``configs/tiny.yaml`` with ``learner: ppo`` and evaluation off; each
takes a few seconds.
"""

from __future__ import annotations

import dataclasses
import os
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("yaml")
pytest.importorskip("tensorboard")

from helpers import STANDARD, TINY, scalars, small_config, small_model  # noqa: E402
from test_information_leak import random_positions, swap_hidden  # noqa: E402

from agents.checkpoint import CheckpointError, export_weights, read_checkpoint  # noqa: E402
from agents.dmc import _NOT_HISTORY, DMCAgent, network_of  # noqa: E402
from agents.policy import PolicyAgent, segment_log_softmax  # noqa: E402
from agents.registry import SharedModels, make_agent  # noqa: E402
from doudizhu_env import engine  # noqa: E402
from doudizhu_env.observation import OBS_SIZE, observe  # noqa: E402
from doudizhu_env.rules import Rules  # noqa: E402
from train import run  # noqa: E402
from train.actor import Actor, hidden_hands  # noqa: E402
from train.buffer import EpisodeRecorder, SampleBuffer  # noqa: E402
from train.config import ConfigError, load_config  # noqa: E402
from train.ppo import CRITIC_INPUTS, Critic, PPOLearner, critic_input, gae, hidden_bits  # noqa: E402
from train.run import train  # noqa: E402
from train.samples import Samples, unpack_obs  # noqa: E402

#: The small networks of the training tests, with the MLP history encoder (a tenth of the LSTM's time).
MLP = dataclasses.replace(small_config(), history="mlp")


def tiny_ppo(out_dir, **overrides):
    """The tiny config as a PPO run writing under ``out_dir``, evaluation off unless overridden."""
    values = {"out_dir": str(out_dir), "eval_deals": 0, "learner": "ppo", "games_per_actor": 8,
              "batch_size": 256, "minibatch_size": 128, "total_frames": 1500, **overrides}
    return load_config(TINY, {k: v for k, v in values.items()})


def same_state(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


# -- the pieces -----------------------------------------------------------------


def _gae_by_loop(values, target, steps_left, gamma, lam):
    """GAE written from its definition, one trajectory at a time, from its end."""
    adv = np.zeros(len(values))
    start = 0
    while start < len(values):
        end = start + int(steps_left[start])  # the trajectory's last row
        running = 0.0
        for t in range(end, start - 1, -1):
            following = values[t + 1] if t < end else 0.0
            reward = target[t] if t == end else 0.0
            running = reward + gamma * following - values[t] + gamma * lam * running
            adv[t] = running
        start = end + 1
    return adv


@pytest.mark.parametrize(("gamma", "lam"), [(1.0, 0.95), (0.9, 0.5), (1.0, 1.0), (0.99, 0.0)])
def test_gae_matches_its_definition(gamma, lam):
    rng = np.random.default_rng(3)
    lengths = rng.integers(1, 9, 40)
    steps_left = np.concatenate([np.arange(n)[::-1] for n in lengths])
    values = rng.normal(size=len(steps_left))
    target = np.repeat(rng.normal(size=len(lengths)) * 3, lengths)
    adv, ret = gae(values, target, steps_left, gamma, lam)
    np.testing.assert_allclose(adv, _gae_by_loop(values, target, steps_left, gamma, lam), atol=1e-12)
    np.testing.assert_allclose(ret, adv + values)
    if lam == 1.0 and gamma == 1.0:  # Monte-Carlo: every return is the hand's result
        np.testing.assert_allclose(ret, target)


def test_segment_log_softmax_is_a_softmax_per_segment():
    logits = torch.tensor([1.0, 2.0, 3.0, -1.0, 5.0, 0.5])
    seg = torch.tensor([0, 0, 0, 1, 2, 2])
    out = segment_log_softmax(logits, seg, 3)
    expected = torch.cat([logits[:3].log_softmax(0), logits[3:4].log_softmax(0), logits[4:].log_softmax(0)])
    torch.testing.assert_close(out, expected)


def test_recorder_gives_whole_trajectories_in_order():
    rec = EpisodeRecorder(num_games=2, objective="adp", hidden_hands=True, trajectories=True)
    obs = np.zeros((2, OBS_SIZE), np.float32)
    hidden = np.zeros((2, 2, 15), np.int8)
    # decisions in time order: (game, seat, action, legal ids)
    moves = [(0, 0, 1, [0, 1]), (1, 2, 5, [5]), (0, 1, 2, [2, 3, 4]), (0, 0, 7, [6, 7]), (1, 2, 9, [8, 9])]
    for k, (g, seat, action, legal) in enumerate(moves):
        ids = np.array(legal)
        rec.record(np.array([g]), np.array([seat]), np.array([2]), np.array([action]), obs[:1], hidden[:1],
                   (ids, np.array([0, len(ids)])), warm_start=k == 1,
                   log_prob=np.array([-0.1 * k], np.float32), log_pi=np.array([-0.05 * k], np.float32))
    out = rec.finish(np.array([0, 1]), np.array([[2.0, -1.0, -1.0], [4.0, -2.0, -2.0]], np.float32))
    # game 0 seat 0 (two decisions), game 0 seat 1, game 1 seat 2 (two decisions)
    np.testing.assert_array_equal(out.action, [1, 7, 2, 5, 9])
    np.testing.assert_array_equal(out.steps_left, [1, 0, 0, 1, 0])
    np.testing.assert_array_equal(out.target, [2.0, 2.0, -1.0, -2.0, -2.0])
    np.testing.assert_array_equal(out.legal_count, [2, 2, 3, 1, 2])
    np.testing.assert_array_equal(out.legal, [0, 1, 6, 7, 2, 3, 4, 5, 8, 9])
    np.testing.assert_array_equal(out.warm_start, [False, False, False, True, False])
    np.testing.assert_allclose(out.log_prob, [0.0, -0.3, -0.2, 0.0, -0.4], atol=1e-7)  # taught: 0
    np.testing.assert_allclose(out.log_pi, [0.0, -0.15, -0.1, 0.0, -0.2], atol=1e-7)
    assert (rec.game == -1).all() and all(x is None for x in rec.legal)


def test_recorder_with_trajectories_needs_the_legal_actions():
    rec = EpisodeRecorder(2, trajectories=True)
    with pytest.raises(ValueError, match="legal"):
        rec.record(np.array([0]), np.array([0]), np.array([2]), np.array([1]), np.zeros((1, OBS_SIZE)))


def test_recorder_with_trajectories_needs_the_policys_log_probs():
    rec = EpisodeRecorder(2, trajectories=True)
    legal = (np.array([1, 2]), np.array([0, 2]))
    with pytest.raises(ValueError, match="log_prob"):
        rec.record(np.array([0]), np.array([0]), np.array([2]), np.array([1]), np.zeros((1, OBS_SIZE)),
                   legal=legal)
    with pytest.raises(ValueError, match="log_pi"):  # the behaviour's without the policy's
        rec.record(np.array([0]), np.array([0]), np.array([2]), np.array([1]), np.zeros((1, OBS_SIZE)),
                   legal=legal, log_prob=np.zeros(1, np.float32))
    rec.record(np.array([0]), np.array([0]), np.array([2]), np.array([1]), np.zeros((1, OBS_SIZE)),
               legal=legal, warm_start=True)  # a warm-start agent's decision has none


@pytest.mark.parametrize("epsilon", [0.0, 0.3])
def test_the_actors_log_probs_are_the_behaviour_policys(epsilon):
    """What the actor records: log pi(a|s), the learner's log-softmax of the same weights (the
    ratio's denominator), and log b(a|s) of what drew the action, pi mixed with the uniform
    exploration."""
    cfg = tiny_ppo("unused")
    model = small_model(cfg=MLP, seed=3)
    actor = Actor.from_config(model, cfg, np.random.default_rng(5))
    chunk = actor.collect(300, epsilon=epsilon)
    learner = PPOLearner(model, cfg)
    obs = torch.from_numpy(unpack_obs(chunk.obs))
    rows = np.flatnonzero(~chunk.warm_start)
    hidden = hidden_bits(chunk.hidden_hands, "cpu")
    with torch.no_grad():
        logp = learner.forward(chunk, obs, hidden, chunk.network.astype(np.int64), rows)[0].numpy()
    n = chunk.legal_count[rows]
    eps = actor.agent.epsilons(chunk.network[rows])  # the play's epsilon, the bids' and doublings'
    assert (eps == epsilon).any() and (eps > 0).any()  # the tiny config's bids explore: a mixture either way
    expected = np.log((1 - eps) * np.exp(logp) + eps / n)
    assert len(rows) >= 300 and np.isfinite(chunk.log_prob).all() and np.isfinite(chunk.log_pi).all()
    np.testing.assert_allclose(chunk.log_prob[rows], expected, atol=2e-5)
    np.testing.assert_allclose(chunk.log_pi[rows], logp, atol=2e-5)


def test_take_whole_never_cuts_a_chunk():
    def hands(n):  # n samples of 2 legal actions each
        return Samples(obs=np.zeros((n, 2), np.uint8), action=np.zeros(n, np.int64),
                       network=np.zeros(n, np.int8),
                       target=np.arange(n, dtype=np.float32), legal=np.arange(2 * n),
                       legal_count=np.full(n, 2, np.int32), steps_left=np.zeros(n, np.int16),
                       warm_start=np.zeros(n, bool), log_prob=np.zeros(n, np.float32),
                       log_pi=np.zeros(n, np.float32))

    buf = SampleBuffer(100)
    for n in (3, 4, 5):
        buf.put(hands(n))
    assert buf.take_whole(13) is None
    got = buf.take_whole(5)
    assert len(got.target) == 7 and len(got.legal) == 14 and buf.size == 5
    assert len(buf.take_whole(1).target) == 5 and buf.size == 0


def test_sampled_policy_draws_from_its_softmax():
    model = small_model(cfg=MLP, seed=4)
    state = engine.reset(5, 1, STANDARD)
    for _ in range(3):  # into the play phase
        state = engine.step(state, engine.sample_legal(state, np.random.default_rng(1)))
    while state.phase[0] != engine.PLAY:
        state = engine.step(state, engine.sample_legal(state, np.random.default_rng(2)))
    ids, _, probs = PolicyAgent(model).action_probs(state)
    many = engine.take(state, np.zeros(4000, np.int64))
    drawn = PolicyAgent(model, sample=True, rng=np.random.default_rng(0)).act(many)
    freq = np.array([(drawn == a).mean() for a in ids])
    assert len(ids) > 3 and abs(freq - probs).max() < 0.04
    greedy = PolicyAgent(model).act(state)[0]
    assert greedy == ids[np.argmax(probs)] == DMCAgent(model).act(state)[0]


# -- what the policy sees -------------------------------------------------------


@pytest.mark.parametrize("rules", ["standard", "douzero"])
def test_swapping_hidden_cards_leaves_the_policy_unchanged_in_every_phase(rules):
    """The acting seat's action distribution does not move when the cards it cannot see are
    redistributed between the other seats (and the hole while bidding); the critic's value does."""
    model = small_model(Rules.preset(rules), MLP, seed=1)
    torch.manual_seed(2)
    critic = Critic(model.cfg)
    agent = PolicyAgent(model)
    rng = np.random.default_rng(11)
    positions = [p for p in random_positions(rules, seed=9) if p.phase[0] != engine.OVER]
    phases = {int(p.phase[0]) for p in positions}
    assert phases == ({engine.PLAY} if rules == "douzero" else {engine.BIDDING, engine.DOUBLING, engine.PLAY})
    moved = 0
    for state in positions:
        ids, _, probs = agent.action_probs(state)
        seen = critic_input(torch.from_numpy(observe(state)), hidden_hands(state, [0]))
        value = critic(seen, network_of(state))
        for _ in range(2):
            other = swap_hidden(state, int(state.to_act[0]), rng)
            other_ids, _, other_probs = agent.action_probs(other)
            np.testing.assert_array_equal(other_ids, ids)
            np.testing.assert_array_equal(other_probs, probs, err_msg=f"phase {state.phase[0]}")
            if not np.array_equal(other.hands, state.hands):
                seen = critic_input(torch.from_numpy(observe(other)), hidden_hands(other, [0]))
                moved += not torch.equal(critic(seen, network_of(other)), value)
    assert moved > len(positions) // 2  # the critic reads what was swapped: the test is not vacuous


def test_the_actors_samples_carry_the_critics_input():
    cfg = tiny_ppo("unused")
    model = small_model(cfg=MLP, seed=0)
    actor = Actor.from_config(model, cfg, np.random.default_rng(0))
    chunk = actor.collect(200, epsilon=0.0)
    n = len(chunk.target)
    assert n >= 200 and chunk.hidden_hands.shape == (n, 2, 15)
    assert chunk.legal_count.sum() == len(chunk.legal)
    assert critic_input(torch.zeros(n, OBS_SIZE), chunk.hidden_hands).shape == (n, OBS_SIZE + CRITIC_INPUTS)
    # every seat's trajectory is whole: a 0 of steps_left ends each, and steps count down to it
    left = chunk.steps_left.astype(int)
    assert left[-1] == 0 and np.all((left[:-1] == 0) | (left[1:] == left[:-1] - 1))


# -- end to end -------------------------------------------------------------------


@pytest.fixture(scope="module")
def ppo_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("ppo")
    cfg = tiny_ppo(out, eval_deals=4)
    report = train(cfg)
    return cfg, os.path.join(str(out), cfg.run_name), report


def test_tiny_ppo_run_writes_its_critic_apart_and_evaluates(ppo_run):
    cfg, run_dir, report = ppo_run
    data = read_checkpoint(os.path.join(run_dir, "checkpoint.pt"))
    assert data["learner"] == "ppo" and data["frames"] >= cfg.total_frames and data["updates"] > 0
    assert data["critic"] and all(k.startswith("nets.") for k in data["critic"])
    first = data["critic"]["nets.landlord.state_mlp.0.weight"]
    assert first.shape[1] == len(_NOT_HISTORY) + CRITIC_INPUTS  # the critic reads the hidden hands
    assert set(report) == {"random/bidding", "random/fixed_landlord"}
    logged = scalars(run_dir)
    assert {"loss/policy", "loss/value", "ppo/entropy", "ppo/clip_fraction"} <= set(logged)


def test_agents_built_from_a_ppo_checkpoint_have_no_critic_input(ppo_run, tmp_path):
    cfg, run_dir, _ = ppo_run
    path = os.path.join(run_dir, "checkpoint.pt")
    exported = str(tmp_path / "ppo.pt")
    export_weights(path, exported)
    assert "critic" not in read_checkpoint(exported) and read_checkpoint(exported)["learner"] == "ppo"
    shared = SharedModels()  # as the web table loads them
    for spec, models in ((path, None), (f"dmc:{path}", shared), (exported, None),
                         (f"search:{exported},worlds=2,candidates=2", shared)):
        agent = make_agent(spec, STANDARD, models=models)
        policy = agent.base if spec.startswith("search:") else agent
        assert isinstance(policy, PolicyAgent) and policy.name == "ppo"
        assert policy.model.score_kind == "logits"
        assert not any("critic" in k for k in policy.model.state_dict())
        assert all(net.state_mlp[0].in_features == len(_NOT_HISTORY) for net in policy.model.nets.values())


def test_a_ppo_checkpoint_plays_in_the_arena(ppo_run):
    from doudizhu_arena.arena import run_arena

    cfg, run_dir, _ = ppo_run
    path = os.path.join(run_dir, "checkpoint.pt")
    report = run_arena([path, "rule", "rule"], 6, "standard", seed=1, chunk_size=6)
    assert report["config"]["games"] == 18


def test_ppo_resume_continues_the_policy_and_the_critic(ppo_run, tmp_path):
    cfg, run_dir, _ = ppo_run
    shutil.copytree(run_dir, tmp_path / cfg.run_name)
    saved = read_checkpoint(os.path.join(run_dir, "checkpoint.pt"))
    more = tiny_ppo(tmp_path, total_frames=saved["frames"] + 800)
    train(more, resume=True)
    data = read_checkpoint(str(tmp_path / cfg.run_name / "checkpoint.pt"))
    assert data["frames"] >= more.total_frames and data["updates"] > saved["updates"]
    assert not same_state(data["critic"], saved["critic"]) and not same_state(data["model"], saved["model"])
    with pytest.raises(CheckpointError, match="written by the ppo learner; expected learner: ppo"):
        train(load_config(TINY, {"out_dir": str(tmp_path), "eval_deals": 0}), resume=True)


def test_a_dmc_checkpoint_is_not_resumed_as_ppo(tmp_path):
    train(load_config(TINY, {"out_dir": str(tmp_path), "eval_deals": 0, "total_frames": 300}))
    with pytest.raises(CheckpointError, match="written by the dmc learner"):
        train(tiny_ppo(tmp_path), resume=True)


def test_tiny_ppo_runs_are_deterministic(tmp_path):
    runs = {}
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        cfg = tiny_ppo(tmp_path / name, seed=seed, total_frames=1000)
        train(cfg)
        runs[name] = read_checkpoint(str(tmp_path / name / cfg.run_name / "checkpoint.pt"))
    a, b, c = runs["a"], runs["b"], runs["c"]
    assert (a["frames"], a["updates"]) == (b["frames"], b["updates"]) and a["updates"] > 0
    assert same_state(a["model"], b["model"]) and same_state(a["critic"], b["critic"])
    assert not same_state(a["model"], c["model"])


def test_warm_start_clones_the_teacher_then_plays(tmp_path):
    cfg = tiny_ppo(tmp_path, warm_start_frames=600, total_frames=1500)
    train(cfg)
    logged = scalars(str(tmp_path / cfg.run_name))
    cloned = [v for _, v in logged["ppo/cloned_share"]]
    assert cloned and max(cloned) == 1.0  # the first batches: the teacher's decisions only
    assert logged["ppo/clip_fraction"][-1][0] >= 600  # then the policy's own play


def test_dagger_warm_start_learns_the_labels_of_its_own_play(tmp_path):
    """warm_start_mode: dagger. The first batches are all labelled by the teacher (cloned share 1) on
    the model's own hands; after the warm start the policy plays and is trained by PPO."""
    cfg = tiny_ppo(tmp_path, warm_start_frames=600, total_frames=1500, warm_start_mode="dagger")
    train(cfg)
    logged = scalars(str(tmp_path / cfg.run_name))
    cloned = [v for _, v in logged["ppo/cloned_share"]]
    assert cloned and max(cloned) == 1.0
    assert logged["ppo/clip_fraction"][-1][0] >= 600
    model = small_model(cfg=MLP, seed=0)
    actor = Actor.from_config(model, cfg, np.random.default_rng(0))
    assert actor.dagger and actor.warm_start_agent is not None
    batch = actor.collect(300, epsilon=0.0, warm=True)
    assert batch.warm_start.all()
    learner = PPOLearner(model, dataclasses.replace(cfg, ppo_epochs=4, learning_rate=3e-3))
    first = learner.update(batch)["loss/policy"]  # labels that were not played are learnt, too
    for _ in range(4):
        last = learner.update(batch)["loss/policy"]
    assert last < 0.8 * first


def test_cloning_a_fixed_batch_lowers_its_cross_entropy():
    cfg = tiny_ppo("unused", warm_start_frames=10**6, ppo_epochs=4, learning_rate=3e-3)
    model = small_model(cfg=MLP, seed=0)
    actor = Actor.from_config(model, cfg, np.random.default_rng(0))
    batch = actor.collect(300, epsilon=0.0, warm=True)
    assert batch.warm_start.all()
    learner = PPOLearner(model, cfg)
    first = learner.update(batch)["loss/policy"]
    for _ in range(4):
        last = learner.update(batch)["loss/policy"]
    assert last < 0.8 * first


# -- exploration and the clipped ratio (module docstring of train.ppo) ----------------------


def _policy_gradient(pi_old: float, b: float, adv: float, pi: float | None = None) -> float:
    """d(loss)/d(log pi(a)) of one sample whose move the policy gave ``pi_old`` and the actor drew
    with probability ``b``, at the learner's ``pi`` (default: ``pi_old``, the first step)."""
    learner = PPOLearner(small_model(cfg=MLP, seed=0), tiny_ppo("unused"))
    logp = torch.tensor([np.log(pi if pi is not None else pi_old)], requires_grad=True)
    zero = torch.zeros(1)
    terms = learner._terms(logp, zero, zero, torch.tensor([adv]), zero, torch.tensor([np.log(pi_old)]),
                           torch.tensor([pi_old / b]), torch.tensor([False]), 1)
    terms["policy"].backward()
    return float(logp.grad[0])


@pytest.mark.parametrize("adv", [1.0, -1.0])
def test_an_explored_move_moves_the_policy_whichever_the_sign_of_its_advantage(adv):
    """A doubling explored at eps 0.2 (two actions) where the policy gave it 0.03: b = 0.8 * 0.03 +
    0.1. Its step follows the advantage's sign with the weight pi_old / b, both ways alike; with the
    ratio pi / b (0.24, below the clipping range) a bad outcome gave no gradient at all."""
    pi_old, b = 0.03, 0.8 * 0.03 + 0.2 / 2
    grad = _policy_gradient(pi_old, b, adv)
    assert grad == pytest.approx(-adv * pi_old / b, rel=1e-5)  # descent raises log pi where adv > 0


def test_without_exploration_the_objective_is_ppos_clipped_ratio():
    """Where eps is 0 (b = pi_old, weight 1): the gradient of PPO's clipped objective, -adv * ratio
    inside the range, 0 outside it on the side the advantage pushes towards."""
    assert _policy_gradient(0.5, 0.5, 2.0, pi=0.55) == pytest.approx(-2.0 * 1.1, rel=1e-5)
    assert _policy_gradient(0.5, 0.5, 2.0, pi=0.65) == 0.0  # ratio 1.3 > 1.2: clipped
    assert _policy_gradient(0.5, 0.5, -2.0, pi=0.65) == pytest.approx(2.0 * 1.3, rel=1e-5)


# -- the learner's speed levers (critic: shared, critic_hidden, advantages: minibatch) ---------


@pytest.mark.parametrize("settings", [
    {"critic": "shared"}, {"critic_hidden": 16}, {"advantages": "minibatch"},
    {"critic": "shared", "advantages": "minibatch"},
])
def test_every_lever_still_learns_a_fixed_batch(settings):
    """Each setting trains: the cross-entropy of a cloned batch falls, and the critic's error too."""
    cfg = tiny_ppo("unused", warm_start_frames=10**6, ppo_epochs=4, learning_rate=3e-3, **settings)
    model = small_model(cfg=MLP, seed=0)
    batch = Actor.from_config(model, cfg, np.random.default_rng(0)).collect(300, epsilon=0.0, warm=True)
    learner = PPOLearner(model, cfg)
    first = learner.update(batch)
    for _ in range(6):
        last = learner.update(batch)
    assert last["loss/policy"] < 0.8 * first["loss/policy"]
    assert last["loss/value"] < first["loss/value"]


def test_the_shared_critic_reads_the_policys_embedding_and_the_hidden_hands_above_it():
    """critic: shared has no encoder of its own; the policy's networks are unchanged (the acting agent
    reads the seat's observation only: the hidden-card swap test above holds for it as for any)."""
    from train.ppo import SharedCritic

    cfg = tiny_ppo("unused", critic="shared")
    model = small_model(cfg=MLP, seed=0)
    learner = PPOLearner(model, cfg)
    assert isinstance(learner.critic, SharedCritic)
    assert not any(isinstance(m, torch.nn.LSTM) or hasattr(m, "state_mlp") for m in learner.critic.modules())
    first = next(iter(learner.critic.nets.values()))[0]
    assert first.in_features == MLP.hidden + CRITIC_INPUTS
    assert set(model.state_dict()) == set(small_model(cfg=MLP, seed=0).state_dict())


def test_minibatches_of_whole_trajectories_cover_each_sample_once():
    cfg = tiny_ppo("unused", advantages="minibatch", minibatch_size=64)
    model = small_model(cfg=MLP, seed=0)
    batch = Actor.from_config(model, cfg, np.random.default_rng(3)).collect(400, epsilon=0.1)
    learner = PPOLearner(model, cfg)
    parts = learner.minibatches(batch)
    rows = np.concatenate(parts)
    assert sorted(rows.tolist()) == list(range(len(batch)))
    for part in parts:
        left = batch.steps_left[part]
        assert left[-1] == 0 and np.all(np.diff(left)[left[:-1] > 0] == -1)  # whole trajectories, in order
    assert len(parts) > 1 and all(len(p) >= 64 for p in parts[:-1])  # the size, or up to a hand more


def test_tiny_runs_with_the_fast_settings_are_deterministic_and_resume(tmp_path):
    fast = {"critic": "shared", "advantages": "minibatch", "ppo_epochs": 1}
    runs = {}
    for name in ("a", "b"):
        cfg = tiny_ppo(tmp_path / name, seed=7, total_frames=1000, **fast)
        train(cfg)
        runs[name] = read_checkpoint(str(tmp_path / name / cfg.run_name / "checkpoint.pt"))
    assert runs["a"]["updates"] > 0 and same_state(runs["a"]["model"], runs["b"]["model"])
    assert same_state(runs["a"]["critic"], runs["b"]["critic"])
    train(tiny_ppo(tmp_path / "a", seed=7, total_frames=2000, **fast), resume=True)
    with pytest.raises(CheckpointError, match="its critic does not fit this run's"):  # nor a separate critic
        train(tiny_ppo(tmp_path / "a", seed=7, total_frames=3000), resume=True)


# -- bad settings -------------------------------------------------------------------


@pytest.mark.parametrize(("key", "value", "match"), [
    ("learner", "a2c", "learner must be one of"),
    ("ppo_clip", "0", "ppo_clip must be a clip range in \\(0, 1\\]"),
    ("ppo_clip", "1.5", "ppo_clip must be"),
    ("gae_lambda", "1.2", "gae_lambda must be in \\[0, 1\\]"),
    ("gae_lambda", "-0.1", "gae_lambda must be"),
    ("gamma", "0", "gamma must be a discount"),
    ("ppo_epochs", "0", "ppo_epochs must be in 1..100"),
    ("minibatch_size", "5000", "minibatch_size must be in 1..batch_size"),
    ("entropy_coef", "-1", "entropy_coef must be >= 0"),
    ("value_coef", "-0.5", "value_coef must be >= 0"),
    ("critic", "big", "critic must be one of \\('separate', 'shared'\\)"),
    ("advantages", "hand", "advantages must be one of \\('batch', 'minibatch'\\)"),
    ("critic_hidden", "-1", "critic_hidden must be in 0..4,096"),
])
def test_bad_ppo_settings_are_one_line_config_errors(key, value, match, tmp_path, capsys):
    with pytest.raises(ConfigError, match=match):
        tiny_ppo(tmp_path, **{key: value})
    with pytest.raises(SystemExit) as exit_:
        option = f"--{key.replace('_', '-')}"
        run.main(["--config", "configs/ppo.yaml", "--out-dir", str(tmp_path), option, value])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1 and key in err
    assert not os.listdir(tmp_path)


def test_a_bad_warm_start_agent_fails_before_any_work(tmp_path):
    with pytest.raises(ConfigError, match="warm_start_agent: agent 'nobody'"):
        train(tiny_ppo(tmp_path, warm_start_frames=100, warm_start_agent="nobody"))
    assert not os.listdir(tmp_path)


def test_the_ablations_ppo_config_variant_is_configs_ppo_yaml():
    from benchmarks.ablation import DEFAULT_CONFIG, PPO, PPO_CONFIG, VARIANTS

    from_default = load_config(DEFAULT_CONFIG, {"run_name": "ppo", **PPO_CONFIG})
    assert from_default == load_config("configs/ppo.yaml")
    assert VARIANTS["ppo_warm_1m_explore"] == PPO_CONFIG and VARIANTS["ppo"] == PPO
    assert PPO["bidding_epsilon"] == 0.0 and "warm_start_frames" not in PPO  # the first ppo.yaml


@pytest.mark.parametrize("learner", ["dmc", "ppo"])
def test_the_learner_rate_measures_either_learner(learner, tmp_path):
    """``benchmarks.training --rates`` times the config's own learner (PPO on whole hands)."""
    import yaml

    from benchmarks.training import learner_rate

    cfg = yaml.safe_load(open(TINY))
    cfg.update(learner=learner, minibatch_size=64)
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(cfg))
    rate = learner_rate(0.2, str(path))
    assert rate["learner"] == learner and rate["batch_size"] == 128
    assert rate["learner_sps"] > 0 and rate["updates_per_s"] > 0
    assert rate["learner_us_per_frame"] == pytest.approx(1e6 / rate["learner_sps"])


def test_the_evaluation_names_the_agent_it_evaluated():
    """The tables of a PPO agent's evaluation say ``ppo`` (the agent's own name), not ``dmc``."""
    from agents.rule import RuleAgent
    from doudizhu_arena.evaluation import evaluate_against, format_table

    agent = PolicyAgent(small_model(seed=1))
    report = evaluate_against(agent, STANDARD, ["random"], 2, modes=("fixed_landlord",))
    text = format_table(report)
    assert report.agent == "ppo" and text.startswith("against random/fixed_landlord (agent = ppo):")
    assert "\nppo " in text and "dmc" not in text
    assert format_table(report, "mine").startswith("against random/fixed_landlord (agent = mine):")
    same = evaluate_against(RuleAgent(), STANDARD, ["rule"], 2, modes=("fixed_landlord",))  # its own name
    assert same.agent == "rule (evaluated)"
    assert same["rule/fixed_landlord"]["table"].count("rule (evaluated)") >= 2
