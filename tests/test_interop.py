"""RL libraries drive the envs as they are (extra ``interop``): TorchRL's ``PettingZooWrapper`` passes
``check_env_specs`` and trains independent PPO with masks; RLlib's ``PettingZooEnv`` plays whole hands
and trains PPO with RLlib's action-masking example module; Tianshou's ``PettingZooEnv`` plays whole
hands; and a CleanRL-style loop of one's own trains on the vector env. (sb3-contrib's MaskablePPO:
``tests/test_rl_clients.py``.) Each library is skipped, saying why, where it is not installed.

The code between ``# docs: start NAME`` and ``# docs: end NAME`` is what the page "Use it from your RL
library" (docs/rl-libraries.md) shows, lifted from here at build time (mkdocs_hooks.py): the page's
code is the code these tests run. Small networks and a few hundred steps each, on one torch thread.
"""

import math

import numpy as np
import pytest

pytestmark = pytest.mark.integration

torch = pytest.importorskip("torch")
pytest.importorskip("pettingzoo")
pytest.importorskip("gymnasium")

from doudizhu_env import engine  # noqa: E402
from doudizhu_env.infos import INFO_KEYS  # noqa: E402

INSTALL = 'pip install -e ".[interop]"'


@pytest.fixture(autouse=True)
def one_torch_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    yield
    torch.set_num_threads(before)


def needs(module: str, library: str):
    """``module`` imported, or the test skipped naming the library and the extra that installs it."""
    return pytest.importorskip(module, reason=f"{library} is not installed ({INSTALL})")


# ------------------------------------------------------------------ TorchRL


def torchrl_env():
    needs("torchrl", "TorchRL")
    # docs: start torchrl-env
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper
    from torchrl.envs.utils import MarlGroupMapType, check_env_specs

    import doudizhu_env

    env = PettingZooWrapper(
        env=doudizhu_env.env(reward="log_score"),
        use_mask=True,  # ("agents", "mask"): the seat to act; ("agents", "action_mask"): its legal actions
        categorical_actions=True,
        group_map=MarlGroupMapType.ALL_IN_ONE_GROUP,  # one group "agents" of the three seats
        seed=0,
    )
    check_env_specs(env)
    # docs: end torchrl-env
    return env


def test_torchrl_wrapper_passes_check_env_specs_and_plays_legal_masked_rollouts():
    env = torchrl_env()
    td = env.rollout(200, break_when_any_done=False)  # random actions from the masked action spec
    agents = td["agents"]
    acting = agents["mask"]
    assert acting.shape == (200, 3) and (acting.sum(-1) == 1).all()  # one seat acts per step
    chosen = agents["action_mask"].gather(-1, agents["action"].unsqueeze(-1)).squeeze(-1)
    assert chosen[acting].all()  # every action taken was legal for the seat that took it
    assert td["next", "done"].sum() >= 2  # whole hands, reset by the wrapper
    info = agents["info"]  # the infos' codes, as tensors
    assert set(info.keys()) == set(INFO_KEYS)
    assert (info["seat"] == torch.arange(3)).all()
    assert set(info["role"].unique().tolist()) == {-1, 0, 1, 2}  # bidding (no role yet), then the roles
    assert set(info["phase"].unique().tolist()) >= {0, 2}  # bidding and play at least


def test_torchrl_independent_ppo_trains_with_masks():
    env = torchrl_env()
    # docs: start torchrl-ppo
    import torch
    from tensordict import TensorDict
    from tensordict.nn import TensorDictModule
    from torch import nn
    from torchrl.collectors import Collector
    from torchrl.modules import MaskedCategorical, ProbabilisticActor
    from torchrl.objectives import ClipPPOLoss, ValueEstimators

    from doudizhu_env.observation import OBS_SIZE

    n_actions = env.full_action_spec["agents", "action"].space.n
    obs = ("agents", "observation", "observation")
    # one network for the three seats (independent PPO with shared parameters)
    actor = ProbabilisticActor(
        TensorDictModule(nn.Sequential(nn.Linear(OBS_SIZE, 64), nn.Tanh(), nn.Linear(64, n_actions)),
                         in_keys=[obs], out_keys=[("agents", "logits")]),
        in_keys={"logits": ("agents", "logits"), "mask": ("agents", "action_mask")},
        out_keys=[env.action_key], distribution_class=MaskedCategorical,
        return_log_prob=True, log_prob_key=("agents", "action_log_prob"))
    critic = TensorDictModule(nn.Sequential(nn.Linear(OBS_SIZE, 64), nn.Tanh(), nn.Linear(64, 1)),
                              in_keys=[obs], out_keys=[("agents", "state_value")])
    loss = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=1e-3, normalize_advantage=False)
    loss.set_keys(reward=env.reward_key, action=env.action_key, sample_log_prob=("agents", "action_log_prob"),
                  value=("agents", "state_value"), done=("agents", "done"),
                  terminated=("agents", "terminated"), advantage=("agents", "advantage"),
                  value_target=("agents", "value_target"))
    loss.make_value_estimator(ValueEstimators.GAE, gamma=0.99, lmbda=0.95)
    optim = torch.optim.Adam(loss.parameters(), lr=1e-3)

    collector = Collector(env, actor, frames_per_batch=256, total_frames=3 * 256)
    for data in collector:
        with torch.no_grad():
            loss.value_estimator(data, params=loss.critic_network_params,
                                 target_params=loss.target_critic_network_params)
        moves = data["agents"][data["agents", "mask"]]  # only the seat that acted, at each step
        batch = TensorDict({"agents": moves}, batch_size=moves.batch_size)
        for _ in range(2):  # epochs
            out = loss(batch)
            total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
            optim.zero_grad()
            total.backward()
            optim.step()
        collector.update_policy_weights_()
    # docs: end torchrl-ppo
    assert moves.batch_size == (256,)  # the last batch: 256 moves, one per frame
    assert (moves["action_mask"].gather(-1, moves["action"].unsqueeze(-1))).all()  # all legal
    assert all(math.isfinite(out[k].item()) for k in out.keys() if k.startswith("loss"))


# ------------------------------------------------------------------ RLlib


def rllib_env():
    needs("ray.rllib", "RLlib (ray[rllib])")
    # docs: start rllib-env
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    import doudizhu_env

    env = PettingZooEnv(doudizhu_env.env())
    # docs: end rllib-env
    return env


def test_rllib_pettingzoo_env_plays_whole_hands():
    env = rllib_env()
    rng = np.random.default_rng(0)
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        totals, steps = {f"player_{i}": 0.0 for i in range(3)}, 0
        while True:
            (agent, seen), = obs.items()  # the seat to act, alone
            action = int(rng.choice(np.flatnonzero(seen["action_mask"])))
            obs, rewards, terminated, truncated, infos = env.step({agent: action})
            steps += 1
            for name, reward in rewards.items():
                totals[name] += reward
            if terminated["__all__"] or truncated["__all__"]:
                break
        state = env.env.unwrapped.state
        assert steps == int(state.history_len[0]) + 3 * int(state.redeals[0])
        assert list(totals.values()) == [float(p) for p in state.scores[0]] and sum(totals.values()) == 0
        assert all(info["phase"] == engine.OVER for info in infos.values())


@pytest.fixture
def ray_local():
    ray = needs("ray", "Ray")
    needs("ray.rllib", "RLlib (ray[rllib])")
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=200 * 2**20, log_to_driver=False)
    yield
    ray.shutdown()


def test_rllib_ppo_with_the_action_masking_module_trains(ray_local):
    # docs: start rllib-ppo
    import gymnasium
    import pettingzoo.utils
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    import doudizhu_env

    class ObservationsKey(pettingzoo.utils.BaseWrapper):
        """The observation under the key RLlib's action-masking module reads: "observations"."""

        def observation_space(self, agent):
            space = self.env.observation_space(agent)
            return gymnasium.spaces.Dict({"observations": space["observation"],
                                          "action_mask": space["action_mask"]})

        def observe(self, agent):
            obs = self.env.observe(agent)
            return {"observations": obs["observation"], "action_mask": obs["action_mask"]}

    # illegal_action="penalty": RLlib's env check steps an unmasked random action (PettingZoo's classic
    # games end the game on it too); the masked policy never plays one
    register_env("doudizhu", lambda _: PettingZooEnv(
        ObservationsKey(doudizhu_env.env(reward="log_score", illegal_action="penalty"))))
    config = (
        PPOConfig()
        .environment("doudizhu")
        .env_runners(num_env_runners=0)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, *args, **kwargs: "shared")
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"shared": RLModuleSpec(
            module_class=ActionMaskingTorchRLModule, model_config={"fcnet_hiddens": [64]})}))
        .training(train_batch_size_per_learner=256, minibatch_size=64, num_epochs=1, lr=1e-3)
        .debugging(seed=0)
    )
    algo = config.build_algo()
    result = algo.train()
    # docs: end rllib-ppo
    module = algo.get_module("shared")
    try:
        learner = result["learners"]["shared"]
        assert all(math.isfinite(float(v)) for k, v in learner.items() if "loss" in k)
        assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 256
        assert result["env_runners"]["num_episodes_lifetime"] >= 2  # whole hands
        # the masks reach the module: its greedy choice on a fresh hand is a legal action
        game = ObservationsKey(doudizhu_env.env())
        for seed in range(5):
            game.reset(seed=seed)
            seen = game.observe(game.agent_selection)
            batch = {"obs": {key: torch.as_tensor(value)[None] for key, value in seen.items()}}
            logits = module.forward_inference(batch)["action_dist_inputs"][0]
            assert seen["action_mask"][int(logits.argmax())] == 1
    finally:
        algo.stop()


# ------------------------------------------------------------------ Tianshou


def test_tianshou_pettingzoo_env_plays_whole_hands():
    needs("tianshou", "Tianshou")
    # docs: start tianshou
    from tianshou.algorithm.multiagent.marl import MultiAgentPolicy
    from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
    from tianshou.data import Collector
    from tianshou.env import DummyVectorEnv, PettingZooEnv

    import doudizhu_env

    env = PettingZooEnv(doudizhu_env.env())  # obs: {"agent_id", "obs", "mask"}
    random_player = MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space).policy
    policy = MultiAgentPolicy({agent: random_player for agent in env.agents})  # one policy per seat
    collector = Collector(policy, DummyVectorEnv([lambda: PettingZooEnv(doudizhu_env.env())]))
    stats = collector.collect(n_episode=2, reset_before_collect=True)
    # docs: end tianshou
    assert stats.n_collected_episodes == 2
    returns = np.asarray(stats.returns)
    assert returns.shape == (2, 3) and (returns.sum(axis=1) == 0).all()  # the points of each hand
    assert (returns != 0).any(axis=1).all()


# ------------------------------------------------------------------ a CleanRL-style loop of one's own


def test_an_own_masked_ppo_loop_trains_on_the_vector_env():
    # docs: start own-loop
    import gymnasium as gym
    import torch
    from torch import nn

    import doudizhu_env.gym_env  # noqa: F401  (registers DouDizhu-v0)
    from doudizhu_env.observation import OBS_SIZE

    num_envs, num_steps = 16, 32
    envs = gym.make_vec("DouDizhu-v0", num_envs=num_envs, reward="log_score")  # seat 0 against random
    n_actions = envs.single_action_space.n
    actor = nn.Sequential(nn.Linear(OBS_SIZE, 64), nn.Tanh(), nn.Linear(64, n_actions))
    critic = nn.Sequential(nn.Linear(OBS_SIZE, 64), nn.Tanh(), nn.Linear(64, 1))
    optim = torch.optim.Adam([*actor.parameters(), *critic.parameters()], lr=1e-3)

    def policy(x, mask):  # a categorical over the legal actions only
        return torch.distributions.Categorical(logits=actor(x).masked_fill(~mask, -1e9))

    obs, _ = envs.reset(seed=0)
    for _ in range(2):  # iterations: collect num_steps x num_envs decisions, then one PPO update
        steps = []
        for _ in range(num_steps):
            x, mask = torch.as_tensor(obs["observation"]), torch.as_tensor(obs["action_mask"]).bool()
            with torch.no_grad():
                dist = policy(x, mask)
                action = dist.sample()
            obs, reward, terminated, truncated, _ = envs.step(action.numpy())  # same-step autoreset
            steps.append((x, mask, action, dist.log_prob(action), torch.as_tensor(reward),
                          torch.as_tensor(terminated | truncated)))
        x, mask, action, old_logp, rewards, dones = (torch.stack(c) for c in zip(*steps, strict=True))
        with torch.no_grad():  # returns within each hand, bootstrapped by the critic after the last step
            future = critic(torch.as_tensor(obs["observation"])).squeeze(-1)
            returns = torch.zeros_like(rewards)
            for t in reversed(range(num_steps)):
                future = returns[t] = rewards[t] + future * ~dones[t]
        x, mask, action, old_logp, returns = (a.flatten(0, 1) for a in (x, mask, action, old_logp, returns))
        value = critic(x).squeeze(-1)
        advantage = (returns - value).detach()
        ratio = (policy(x, mask).log_prob(action) - old_logp).exp()
        clipped = torch.min(ratio * advantage, ratio.clamp(0.8, 1.2) * advantage)
        loss = -clipped.mean() + 0.5 * (returns - value).pow(2).mean()
        optim.zero_grad()
        loss.backward()
        optim.step()
    # docs: end own-loop
    assert math.isfinite(loss.item())
    assert dones.any()  # whole hands ended within the rollout
    assert mask.gather(1, action.unsqueeze(1)).all()  # every sampled action was legal
