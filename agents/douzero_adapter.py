"""DouZero-format checkpoints as a batched :class:`~agents.base.Agent`.

DouZero (Zha et al., 2021) publishes one PyTorch state dict per position:
``landlord.ckpt``, ``landlord_down.ckpt`` (the farmer after the landlord) and
``landlord_up.ckpt`` (the farmer before it). :meth:`DouZeroAgent.load` reads
them (a directory holding the three, or a single file for its position) into
copies of DouZero's networks (:class:`LandlordLstmModel`, :class:`FarmerLstmModel`,
the same layer names so the state dicts load as they are), and plays by
DouZero's rule: score every legal move with the network, play the argmax.

The features are DouZero's ``douzero.env.env.get_obs``, rebuilt from our
seat views with numpy: DouZero's card vector (4 bits per rank for 3..2, one
per joker) is :func:`doudizhu_env.observation.card_bits`; ``other_hand_cards``
is the union of the two other hands (cards neither held nor played);
``last_move`` is the last card play of the hand unless two passes followed
it; ``last_move_dict`` is each seat's last move (a pass is empty);
``bomb_num`` counts bombs and the rocket; the move history is the last 15
card-play moves, passes included, as a 5 x 162 sequence. The networks were
trained under the ``douzero`` rules preset: play them under it (fixed
landlord) for figures comparable with DouZero's. Under rules with bidding
and doubling, those decisions are delegated to :class:`agents.rule.RuleAgent`.
Needs torch (not the ``douzero`` package).
"""

from __future__ import annotations

import os

import numpy as np

from doudizhu_env import engine
from doudizhu_env.actions import NUM_SPECIAL, PASS, action_table
from doudizhu_env.cards import DECK_COUNTS
from doudizhu_env.engine import ROLE_NAMES, role_of
from doudizhu_env.files import InputPathError, check_input
from doudizhu_env.observation import card_bits

from .base import Agent
from .rule import RuleAgent

POSITIONS = ROLE_NAMES  # DouZero's positions are our roles, by the same names
#: The largest DouZero checkpoint read (one network's weights take about 4 MB).
MAX_CKPT_BYTES = 64 * 2**20


def _torch():
    try:
        import torch
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("the DouZero agent needs torch (pip install torch)") from err
    return torch


def build_model(position: str):
    """A DouZero network for ``position`` (LSTM over the history, then six dense layers)."""
    torch = _torch()
    nn = torch.nn

    class LstmModel(nn.Module):  # type: ignore[name-defined]  # torch is imported when a model is built
        def __init__(self, x_size: int):
            super().__init__()
            self.lstm = nn.LSTM(162, 128, batch_first=True)
            self.dense1 = nn.Linear(x_size + 128, 512)
            for k in range(2, 6):
                setattr(self, f"dense{k}", nn.Linear(512, 512))
            self.dense6 = nn.Linear(512, 1)

        def forward(self, z, x):
            out, _ = self.lstm(z)
            h = torch.cat([out[:, -1, :], x], dim=-1)
            for k in range(1, 6):
                h = torch.relu(getattr(self, f"dense{k}")(h))
            return self.dense6(h)

    return LstmModel(373 if position == "landlord" else 484)


def _one_hot(n: int, size: int, offset: int = 1) -> np.ndarray:
    """DouZero's one-hot: index ``n - offset`` (its card counts use n - 1, its bombs n)."""
    v = np.zeros(size, dtype=np.float32)
    v[n - offset] = 1
    return v


def play_moves(view: engine.State, i: int) -> tuple[np.ndarray, np.ndarray]:
    """Game ``i``'s card-play moves (passes included): action ids and seats, in order."""
    n = int(view.history_len[i])
    ids, who = view.history[i, :n], view.history_seat[i, :n]
    keep = (ids == PASS) | (ids >= NUM_SPECIAL)
    return ids[keep].astype(np.int64), who[keep].astype(np.int64)


def encode(view: engine.State, i: int, legal: np.ndarray) -> tuple[str, np.ndarray, np.ndarray]:
    """DouZero's ``(position, x_batch, z)`` for game ``i`` of a seat view and its legal moves."""
    table = action_table(view.rules)
    seat, landlord = int(view.to_act[i]), int(view.landlord[i])
    pos = POSITIONS[int(role_of(seat, landlord))]
    seat_of = {p: (landlord + k) % 3 for k, p in enumerate(POSITIONS)}
    hand = view.hands[i, seat].astype(np.int64)
    other = DECK_COUNTS - hand - view.played[i].sum(axis=0)
    moves, who = play_moves(view, i)
    counts = table.counts[moves].astype(np.int64)
    last = np.zeros(15, np.int64)
    if len(moves):
        last = counts[-1] if moves[-1] != PASS else (counts[-2] if len(moves) > 1 else last)
    last_by = {p: _last_of(counts, who, s) for p, s in seat_of.items()}
    size = np.full(3, 17)
    size[landlord] = 20
    left = {p: int(size[s] - view.played[i, s].sum()) for p, s in seat_of.items()}
    played = {p: card_bits(view.played[i, s]) for p, s in seat_of.items()}
    bomb = _one_hot(int(view.bombs[i]) + int(view.rocket[i]), 15, offset=0)
    if pos == "landlord":
        parts = [card_bits(hand), card_bits(other), card_bits(last), played["landlord_up"],
                 played["landlord_down"], _one_hot(left["landlord_up"], 17),
                 _one_hot(left["landlord_down"], 17), bomb]
    else:
        mate = "landlord_up" if pos == "landlord_down" else "landlord_down"
        parts = [card_bits(hand), card_bits(other), played["landlord"], played[mate], card_bits(last),
                 card_bits(last_by["landlord"]), card_bits(last_by[mate]), _one_hot(left["landlord"], 20),
                 _one_hot(left[mate], 17), bomb]
    x = np.concatenate(parts).astype(np.float32)
    actions = card_bits(table.counts[legal] * (legal >= NUM_SPECIAL)[:, None])
    x_batch = np.hstack([np.repeat(x[None], len(legal), axis=0), actions]).astype(np.float32)
    return pos, x_batch, _history(counts)


def _last_of(counts: np.ndarray, who: np.ndarray, seat: int) -> np.ndarray:
    """The last move (cards; a pass is empty) of ``seat``, or no cards."""
    mine = np.flatnonzero(who == seat)
    return counts[mine[-1]] if len(mine) else np.zeros(15, np.int64)


def _history(counts: np.ndarray) -> np.ndarray:
    """The last 15 moves, zero-padded at the front, as DouZero's ``(5, 162)`` sequence."""
    seq = np.zeros((15, 54), dtype=np.float32)
    recent = counts[-15:]
    if len(recent):
        seq[15 - len(recent) :] = card_bits(recent)
    return seq.reshape(5, 162)


class DouZeroAgent(Agent):
    """Plays the argmax of DouZero networks (one per position) over the legal moves."""

    name = "douzero"

    def __init__(self, models: dict, seed=None):
        self.models = models
        self.bidder = RuleAgent()

    @classmethod
    def load(cls, path: str, seed=None) -> DouZeroAgent:
        """Checkpoints from a directory (``landlord.ckpt`` ...) or one ``<position>.ckpt`` file."""
        torch = _torch()
        if os.path.isdir(path):
            files = {p: os.path.join(path, f"{p}.ckpt") for p in POSITIONS}
            files = {p: f for p, f in files.items() if os.path.lexists(f)}
        else:
            stem = os.path.basename(path).rsplit(".", 1)[0]
            files = {p: path for p in POSITIONS if stem.endswith(p) and not (p == "landlord" and "_" in stem)}
        if not files:
            raise FileNotFoundError(f"no DouZero checkpoints ({', '.join(POSITIONS)}.ckpt) at {path!r}; "
                                    "expected a folder holding them, or one file named after its position")
        from .checkpoint import CheckpointError

        models = {}
        for pos, f in files.items():
            try:
                check_input(f, f"DouZero {pos} checkpoint", MAX_CKPT_BYTES)
            except InputPathError as err:
                raise CheckpointError(str(err)) from None
            model = build_model(pos)
            try:
                state = torch.load(f, map_location="cpu", weights_only=True)
            except Exception as err:  # torch raises several kinds for corrupt or foreign files
                raise CheckpointError(f"{f!r} is not a readable torch checkpoint: {err}") from err
            own = model.state_dict()
            if not isinstance(state, dict):
                raise CheckpointError(f"{f!r} holds a {type(state).__name__}, expected the state dict of "
                                      f"DouZero's {pos} network")
            missing = [k for k in own if k not in state]
            if missing:  # a network with none of its own weights would play at random
                raise CheckpointError(f"{f!r} is not a DouZero {pos} network: it lacks {len(missing)} of its "
                                      f"{len(own)} weights ({', '.join(missing[:4])}, ...)")
            try:
                model.load_state_dict({k: state[k] for k in own})
            except (RuntimeError, TypeError, ValueError, AttributeError) as err:
                raise CheckpointError(f"{f!r}: weights do not fit DouZero's {pos} network: "
                                      f"{' '.join(str(err).split())}") from err
            models[pos] = model.eval()
        return cls(models, seed)

    def act(self, view: engine.State) -> np.ndarray:
        """Bids and doubles by the rule agent; card play by the networks, batched per position."""
        out = np.empty(view.num_games, dtype=np.int64)
        other = np.flatnonzero(view.phase != engine.PLAY)
        if len(other):
            out[other] = self.bidder.act(engine.take(view, other))
        ids, offsets = engine.legal_actions(view)
        per_pos: dict[str, list] = {}
        for i in np.flatnonzero(view.phase == engine.PLAY):
            legal = ids[offsets[i] : offsets[i + 1]]
            if len(legal) == 1:
                out[i] = legal[0]
                continue
            pos, x, z = encode(view, int(i), legal)
            per_pos.setdefault(pos, []).append((int(i), legal, x, z))
        for pos, items in per_pos.items():
            self._choose(pos, items, out)
        return out

    def _choose(self, pos: str, items: list, out: np.ndarray) -> None:
        """One forward pass over every candidate of every game of a position; argmax per game."""
        torch = _torch()
        if pos not in self.models:
            raise KeyError(f"no DouZero checkpoint for position {pos!r}")
        x = np.concatenate([it[2] for it in items])
        z = np.concatenate([np.repeat(it[3][None], len(it[1]), axis=0) for it in items])
        with torch.no_grad():
            values = self.models[pos](torch.from_numpy(z), torch.from_numpy(x)).numpy()[:, 0]
        start = 0
        for i, legal, _, _ in items:
            out[i] = legal[int(np.argmax(values[start : start + len(legal)]))]
            start += len(legal)
