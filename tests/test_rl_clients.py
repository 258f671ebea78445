"""Real RL clients on the environments: sb3-contrib's MaskablePPO trains on ``DouDizhu-v0`` and on the
PettingZoo env (wrapped as PettingZoo's own SB3 action-masking tutorial wraps its classic envs), and the
trained policies play in the arena through :class:`agents.sb3_adapter.SB3Agent` (extra ``rl``).

Small networks and a few thousand steps: about a minute in all on two cores.
"""

import time

import numpy as np
import pytest

pytestmark = pytest.mark.integration

gymnasium = pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")
pytest.importorskip("sb3_contrib")
torch = pytest.importorskip("torch")

import pettingzoo.utils  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.wrappers import ActionMasker  # noqa: E402

import doudizhu_env  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from agents.sb3_adapter import SB3Agent  # noqa: E402
from doudizhu_arena.arena import format_report, run_arena  # noqa: E402
from doudizhu_env import action_table, engine  # noqa: E402
from doudizhu_env.observation import OBS_SIZE, observe, seat_view  # noqa: E402

PPO_ARGS = {"n_steps": 256, "batch_size": 64, "n_epochs": 2, "learning_rate": 1e-3, "seed": 0,
            "policy_kwargs": {"net_arch": [64]}, "device": "cpu", "verbose": 0}


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# ------------------------------------------------------------------ DouDizhu-v0, masks by action_masks()


@pytest.fixture(scope="module")
def gym_model():
    """MaskablePPO on ``gym.make("DouDizhu-v0")``: the env's ``action_masks()`` gives the masks."""
    start = time.perf_counter()
    # docs: start sb3
    import gymnasium
    from sb3_contrib import MaskablePPO

    import doudizhu_env.gym_env  # noqa: F401  (registers DouDizhu-v0)

    env = gymnasium.make("DouDizhu-v0", reward="log_score")  # its action_masks() gives the masks
    model = MaskablePPO("MultiInputPolicy", env, **PPO_ARGS)  # PPO_ARGS: n_steps 256, a [64] network
    model.learn(total_timesteps=4096)
    # docs: end sb3
    print(f"\nMaskablePPO on DouDizhu-v0: {model.num_timesteps} steps in {time.perf_counter() - start:.1f} s")
    return model


def test_maskable_ppo_trains_on_the_gymnasium_env(gym_model):
    assert gym_model.num_timesteps == 4096
    assert len(gym_model.ep_info_buffer) >= 20  # whole hands were played (SB3's monitor saw them end)
    # the masks reached the policy: its greedy choice on fresh hands is always a legal action
    env = gymnasium.make("DouDizhu-v0")
    for seed in range(20):
        obs, _ = env.reset(seed=seed)
        action, _ = gym_model.predict(obs, action_masks=env.get_wrapper_attr("action_masks")(),
                                      deterministic=True)
        assert obs["action_mask"][int(action)] == 1
        *_, info = env.step(action)
        assert "illegal_action" not in info


def test_the_trained_policy_beats_random_in_the_arena(gym_model, tmp_path):
    """The saved model by spec (``sb3:PATH``) against two random players, duplicate deals."""
    path = tmp_path / "ppo_doudizhu.zip"
    gym_model.save(path)
    spec = f"sb3:{path}"
    start = time.perf_counter()
    report = run_arena([spec, "random", "random"], 200, seed=1)  # 600 games: every seat on every deal
    print(f"\n{format_report(report, [spec])}\n({time.perf_counter() - start:.1f} s)")
    mine = report["agents"][spec]["all"]
    assert mine["games"] == 600 and report["truncated"] == 0
    # zero-sum points: random against random averages 0; the trained policy wins points off random
    assert mine["adp"]["mean"] - mine["adp"]["ci"] > 0, mine
    assert mine["wp"]["mean"] > 0.6, mine


def test_the_adapter_uses_only_the_view(gym_model):
    """The adapter's actions are the model's greedy choices on the acting seat's observation and mask,
    computed from the seat view (which blanks the other hands) as from the full state."""
    agent = SB3Agent(gym_model)
    state = engine.reset(np.random.default_rng(3), 64)
    rng = np.random.default_rng(3)
    for _ in range(40):  # random play into the middle of the hands
        state = engine.step(state, engine.sample_legal(state, rng), auto_reset=True)
    view = seat_view(state)
    actions = agent.act(view)
    assert actions.shape == (64,) and engine.is_legal(state, actions).all()
    expected, _ = gym_model.predict({"observation": observe(state),
                                     "action_mask": engine.legal_action_mask(state).view(np.int8)},
                                    action_masks=engine.legal_action_mask(state), deterministic=True)
    np.testing.assert_array_equal(actions, expected)
    with pytest.raises(ValueError, match="actions"):
        agent.act(seat_view(engine.reset(np.random.default_rng(0), 2, "douzero")))


# ------------------------------------------------------------------ loading a saved policy runs no code


class _Payload:
    """Unpickling this opens (creates) the file ``path``: the proof that a loader ran the pickle."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _rewrite_data(src, dst, edit) -> None:
    """Copy the SB3 zip ``src`` to ``dst`` with ``edit(data)`` applied to its JSON settings."""
    import json
    import zipfile

    with zipfile.ZipFile(src) as z:
        files = {name: z.read(name) for name in z.namelist()}
    data = json.loads(files["data"])
    edit(data)
    files["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(dst, "w") as z:
        for name, content in files.items():
            z.writestr(name, content)


@pytest.fixture(scope="module")
def saved(gym_model, tmp_path_factory):
    path = tmp_path_factory.mktemp("sb3") / "ppo.zip"
    gym_model.save(path)
    return path


def test_the_safe_loader_plays_as_sb3s_own(saved):
    safe, trusted = make_agent(f"sb3:{saved}"), make_agent(f"sb3-pickle:{saved}")
    assert not isinstance(safe.model, MaskablePPO) and isinstance(trusted.model, MaskablePPO)
    state = engine.reset(np.random.default_rng(4), 128)
    rng = np.random.default_rng(4)
    for _ in range(30):
        state = engine.step(state, engine.sample_legal(state, rng), auto_reset=True)
        view = seat_view(state)
        np.testing.assert_array_equal(safe.act(view), trusted.act(view))


def test_a_pickle_in_the_file_is_never_run(saved, tmp_path):
    import base64
    import pickle
    import subprocess
    import sys

    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.zip"
    payload = base64.b64encode(pickle.dumps(_Payload(marker))).decode()
    _rewrite_data(saved, evil, lambda d: d["observation_space"].update({":serialized:": payload}))
    agent = make_agent(f"sb3:{evil}")  # the spaces are ours; the pickled one is never read
    assert not marker.exists()
    run = subprocess.run([sys.executable, "-m", "doudizhu_arena.evaluate", "--landlord", f"sb3:{evil}",
                          "--farmers", "random", "--games", "3"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert not marker.exists()
    assert agent.act(seat_view(engine.reset(np.random.default_rng(0), 4))).shape == (4,)
    try:  # the opt-in runs SB3's loader, pickles and all (this is what it opts into)
        make_agent(f"sb3-pickle:{evil}")
    except Exception:
        pass
    assert marker.exists()


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.clear(), "has no observation_space and action_space"),
    (lambda d: d["policy_kwargs"].update({"activation_fn": {":type:": "x", ":serialized:": "gAR9lC4="}}),
     r"policy_kwargs hold pickled objects \(activation_fn\).*sb3-pickle:PATH"),
    (lambda d: d["action_space"].update({"n": "12"}), "its policy has 12 actions; the rules presets have"),
    (lambda d: d["observation_space"].update({":type:": "<class 'gymnasium.spaces.tuple.Tuple'>"}),
     "its observation space is .*Tuple.*expected a gymnasium Dict"),
    (lambda d: d["policy_kwargs"].update({"net_arch": [8]}), "policy.pth does not load as the weights"),
    (lambda d: d["policy_kwargs"].update({"no_such_arg": 1}), "do not build a policy"),
])
def test_bad_saves_are_one_clear_error(saved, tmp_path, edit, message):
    bad = tmp_path / "bad.zip"
    _rewrite_data(saved, bad, edit)
    with pytest.raises(ValueError, match=message):
        make_agent(f"sb3:{bad}")


def test_not_a_zip(tmp_path):
    path = tmp_path / "x.zip"
    path.write_text("hello")
    with pytest.raises(ValueError, match="is not a Stable-Baselines3 zip"):
        make_agent(f"sb3:{path}")


# ------------------------------------------------------------------ the PettingZoo env, the tutorial's way


# docs: start sb3-aec-wrapper
class SB3ActionMaskWrapper(pettingzoo.utils.BaseWrapper, gymnasium.Env):
    """PettingZoo's SB3 tutorial wrapper: the AEC env as one single-agent Gymnasium env, one policy in
    every seat. The observation is the acting seat's vector (the mask stripped out, given by
    :meth:`action_masks`); the reward of a step is the mover's, as in the tutorial."""

    def reset(self, seed=None, options=None):
        super().reset(seed, options)
        self.observation_space = super().observation_space(self.possible_agents[0])["observation"]
        self.action_space = super().action_space(self.possible_agents[0])
        return self.observe(self.agent_selection), {}

    def step(self, action):
        current_agent = self.agent_selection
        super().step(int(action))
        next_agent = self.agent_selection
        return (self.observe(next_agent), self._cumulative_rewards[current_agent],
                self.terminations[current_agent], self.truncations[current_agent], self.infos[current_agent])

    def observe(self, agent):
        return super().observe(agent)["observation"]

    def action_masks(self):
        return super().observe(self.agent_selection)["action_mask"].astype(bool)
# docs: end sb3-aec-wrapper


def test_maskable_ppo_trains_on_the_pettingzoo_env_and_plays_in_the_arena():
    start = time.perf_counter()
    # docs: start sb3-aec
    env = SB3ActionMaskWrapper(doudizhu_env.env(reward="log_score"))
    env.reset(seed=0)  # sets the spaces
    env = ActionMasker(env, lambda e: e.action_masks())  # the tutorial's masking: sb3-contrib's wrapper
    model = MaskablePPO("MlpPolicy", env, **PPO_ARGS)  # one policy in every seat
    model.learn(total_timesteps=2048)
    # docs: end sb3-aec
    assert env.observation_space.shape == (OBS_SIZE,) and env.action_space.n == len(action_table())
    print(f"\nMaskablePPO on the PettingZoo env (tutorial wrapper): {model.num_timesteps} steps in "
          f"{time.perf_counter() - start:.1f} s")
    assert model.num_timesteps == 2048
    assert len(model.ep_info_buffer) >= 10  # whole hands were played through the wrapper
    # the policy, trained on bare vectors, plays in the arena through the same adapter
    agent = SB3Agent(model)
    assert not agent.dict_obs

    def factory(spec, rules, seed):
        return agent if spec == "ppo-aec" else make_agent(spec, rules, seed)

    report = run_arena(["ppo-aec", "random", "random"], 50, seed=2, agent_factory=factory)
    print(format_report(report, ["ppo-aec"]))
    assert report["agents"]["ppo-aec"]["all"]["games"] == 150 and report["truncated"] == 0
