"""One game stepped in plain Python: the single-game path of the PettingZoo and Gymnasium envs.

The batched engine (:mod:`doudizhu_env.engine`) steps B games with a few dozen
numpy calls whatever B is; at B = 1 those calls' fixed overhead is the whole
cost of a step. :class:`Game` holds one game as Python numbers, lists and a few
small arrays and steps it directly::

    game = Game.new(seed, rules="standard")      # or Game.new(rng, deal=Deal(...))
    while not game.done:
        game.step(game.sample_legal(rng))          # or a policy over game.legal_mask()
    game.scores                                    # the points of seats 0, 1, 2

**The same game as the engine.** What is written twice, here and in
:mod:`doudizhu_env.engine`, is only the common transitions (a bid, a
doubling, a play or pass, the score), for one game in Python numbers, held
to the engine step for step (below). Every table, constant and stream comes
from the rules core both paths share: the action table and its bitsets
(:mod:`~doudizhu_env.actions`, :mod:`~doudizhu_env.legal`), the deal stream
(:mod:`~doudizhu_env.shuffle`), the rules (:mod:`~doudizhu_env.rules`), and
the engine's own functions for the spring rule
(:func:`~doudizhu_env.engine.spring_of`) and the rare transitions:

- the deal is the engine's: :meth:`Game.new` draws the game's key from the
  generator as :func:`engine.reset` does and deals with the shared shuffle
  and seat draws of ``(key, episode, redeals)`` (as do the redeal
  after three passes and :meth:`Game.next_hand`), so the same seed gives the
  same cards, first bidder and drawn landlord;
- the legal actions are the bitsets of :mod:`doudizhu_env.legal` (the
  per-block "holds" tables and the "beats" rows of the action table), held
  as Python ints (bit ``a`` for action ``a``: one AND of whole bitsets is one
  operation, with no numpy call): a hand's bitset is computed once when its
  cards change and kept, a follow is one AND with the row of the
  combination on the table, and the dense mask is unpacked from the
  bitset's bytes once per decision; outside card play (bids, doubling)
  they are :func:`engine.legal_bits` itself, kept per phase and base;
- the rare transitions are made by the engine itself: the truncation past
  ``Rules.redeal_limit`` converts to a one-game
  :class:`~doudizhu_env.engine.State`, steps it and reads the result back;
  an illegal action is refused by the engine's own check (its
  :class:`~doudizhu_env.engine.IllegalActionError` names the legal actions);
- :meth:`Game.to_state` is the one-game state the engine would have reached,
  field for field, so everything written for states (:func:`observe`,
  :func:`seat_view`, rendering, agents) works on it;
  ``tests/test_single_game.py`` steps both side by side on a thousand
  random games (thousands more in its slow sweep) and compares every
  field, mask and observation after every step.

:meth:`Game.observe` builds the observation vector of
:mod:`doudizhu_env.observation` from the game's fields in a few array
operations: the card bits of the hand, hole, played and unseen cards from
the game's rank counts (kept up to date per move); the cards and seats of
the last moves from buffers written once per move; the other one-hot slots
from Python numbers (those that card play leaves alone, kept per seat).

Random play: :meth:`Game.sample_legal` draws exactly what
:func:`engine.sample_legal` draws for a one-game state from the same
generator (one ``rng.random()`` per call), so a game played with it follows
the same course as on the engine.
"""

from __future__ import annotations

import functools

import numpy as np

from . import engine
from .actions import BID0, DOUBLE, PASS, CombType, action_table
from .cards import DECK_COUNTS, DECK_SIZE, HAND_SIZE, HOLE_SIZE, NUM_RANKS, card_rank
from .checks import check_seat, is_int, short
from .engine import BIDDING, DOUBLING, MAX_HISTORY, NO_SPRING, OVER, PLAY, Deal
from .legal import legal_tables
from .observation import (
    _CARD_COLUMNS,
    _CARD_LEVEL,
    CARD_BITS,
    HISTORY_MOVES,
    OBS_SIZE,
    ONE_HOT_PIECES,
    card_bits,
    piece_slice,
)
from .rules import TABLES_KEPT, Rules, resolve_rules
from .shuffle import draw_seat_one, shuffled_deal_one

# rows of Game.cards (rank counts): the hands by seat, the cards played by seat, the hole cards, a row
# of zeros, and by seat the cards it cannot place (the deck minus its hand and every card played)
_HANDS, _PLAYED, _HOLE, _ZEROS, _UNSEEN = 0, 3, 6, 7, 8
# a deal's card ids -> Game.cards: the rank of each card id, and the (row, rank) cell of each dealt card
# (the 17 of seats 0, 1, 2 in their hands' rows, then the hole in its row)
_RANK_OF = card_rank(np.arange(DECK_SIZE))
_DEAL_CELL = np.repeat([_HANDS, _HANDS + 1, _HANDS + 2, _HOLE], [HAND_SIZE] * 3 + [HOLE_SIZE]) * NUM_RANKS
_CARDS_END = piece_slice("to_beat").start  # the card pieces hand, hole, played (3), unseen come first
# (hole shown, observer) -> the entries of Game.cards.ravel() whose counts give those pieces' card bits
# (bit j of a piece is set when the count of rank _CARD_COLUMNS[j] exceeds _CARD_LEVEL[j])
_CARD_ENTRIES = {
    (shown, k): (np.array([k, _HOLE if shown else _ZEROS, _PLAYED + k, _PLAYED + (k + 1) % 3,
                           _PLAYED + (k + 2) % 3, _UNSEEN + k])[:, None] * NUM_RANKS + _CARD_COLUMNS).ravel()
    for shown in (True, False) for k in range(3)
}
_CARD_LEVELS = np.tile(_CARD_LEVEL, _CARDS_END // CARD_BITS).astype(np.int8)  # (the dtype of Game.cards)
_TO_BEAT = piece_slice("to_beat")
_FEW_LEGAL = 24  # sample_legal selects among this many legal actions in the bitset, from more in the ids
_HISTORY = piece_slice("history_cards")
_HISTORY_SEATS = piece_slice("history_seats")
# who made a move -> (observer, the one-hot of the mover's seat relative to the observer)
_MOVER = np.stack([np.eye(3, dtype=np.float32)[(who - np.arange(3)) % 3] for who in range(3)])
_COL = {name: piece_slice(name).start for name, _, _ in ONE_HOT_PIECES}  # category 0 of a piece's first slot
_SIZE = {name: size for name, _, size in ONE_HOT_PIECES}  # categories per slot
_REL = [(k, (k + 1) % 3, (k + 2) % 3) for k in range(3)]  # observer -> its self, next, prev seats
# the pieces _moving_columns sets: first column and last category of multiplier, bombs; cards left, to beat
_MULTIPLIER_COL, _MULTIPLIER_TOP = _COL["multiplier"], _SIZE["multiplier"] - 1
_BOMBS_COL, _BOMBS_TOP = _COL["bombs"], _SIZE["bombs"] - 1
_LEFT_COL, _LEFT_SIZE, _TO_BEAT_SEAT_COL = _COL["cards_left"], _SIZE["cards_left"], _COL["to_beat_seat"]

def _play_signs(seat: int) -> np.ndarray:
    """``(rows of Game.cards, 1)`` int8: how the rows change by the cards ``seat`` plays: its hand -1, its
    played +1, the other two seats' unseen -1 (the player's own unseen cards stay as they were)."""
    signs = np.zeros((_UNSEEN + 3, 1), np.int8)
    signs[_HANDS + seat], signs[_PLAYED + seat] = -1, 1
    signs[_UNSEEN + (seat + 1) % 3] = signs[_UNSEEN + (seat + 2) % 3] = -1
    return signs


_PLAY_SIGNS = [_play_signs(seat) for seat in range(3)]


class _Lookups:
    """What stepping one game reads, per rule configuration: the action table, legality bitsets,
    each action's cards and card bits, as arrays and as Python lists."""

    def __init__(self, rules: Rules):
        self.table = table = action_table(rules)
        self.legal = lt = legal_tables(rules)
        self.num_actions = len(table)
        # the per-block "holds" rows and the "beats" rows as Python ints (bit a for action a)
        self.fit = [[_as_int(row) for row in lt.fit[b]] for b in range(5)]
        self.beaters, self.beater_row = [_as_int(row) for row in lt.beaters], lt.beater_row.tolist()
        self.num_bytes = lt.fit[0].shape[1] * 8  # of the (W,) uint64 words of engine.legal_bits
        self.counts = table.counts
        self.num_cards = table.num_cards.tolist()
        self.bomb = (table.types == CombType.BOMB).tolist()
        self.rocket = table.rocket
        self.action_bits = card_bits(table.counts)  # (A, 54) float32; pass, bids, doubling: zeros
        # (phase, base) -> the legal actions outside the play phase (the bids above the base, doubling,
        # none once over), taken from engine.legal_bits the first time a game asks
        self.phase_bits: dict[tuple[int, int], int] = {}
        self._play_deltas: dict[int, np.ndarray] = {}  # 3 * action + seat -> play_delta, made when asked

    def play_delta(self, seat: int, action: int) -> np.ndarray:
        """``(rows of Game.cards, 15)`` int8: the change of :attr:`Game.cards` when ``seat`` plays ``action``
        (its hand minus the cards, its played plus them, the other two seats' unseen minus them)."""
        key = 3 * action + seat
        delta = self._play_deltas.get(key)
        if delta is None:
            delta = self._play_deltas[key] = _PLAY_SIGNS[seat] * self.counts[action]
            delta.setflags(write=False)
        return delta


def _as_int(words: np.ndarray) -> int:
    """A ``(W,)`` uint64 bitset (bit ``a % 64`` of word ``a // 64``) as one Python int with bit ``a`` set."""
    return int.from_bytes(words.astype("<u8").tobytes(), "little")


def _select_bit(value: int, k: int) -> int:
    """Position of the ``k``-th set bit (from 0, lowest first) of ``value``."""
    for _ in range(k):
        value &= value - 1  # clears the lowest set bit
    return (value & -value).bit_length() - 1


@functools.lru_cache(maxsize=TABLES_KEPT)
def _lookups(rules: Rules) -> _Lookups:
    return _Lookups(rules)


class Game:
    """One game of Dou Dizhu; see the module docstring. Build one with :meth:`new` or from a state.

    The fields are the engine's (:class:`~doudizhu_env.engine.State`) as Python numbers and lists:
    ``phase``, ``to_act``, ``bids``, ``base``, ``landlord``, ``doubles``, ``to_beat``,
    ``to_beat_seat``, ``passes``, ``num_plays``, ``bombs``, ``rocket``, ``spring``, ``history``,
    ``history_seat``, ``redeals``, ``done``, ``truncated``, ``ended``, ``rewards``, ``scores``;
    the cards are ``hands`` (``(3, 15)`` int8) and ``hole``, views of ``cards``. Treat them as read-only.
    """

    # what is derived from the position, made on demand and forgotten by _changed
    _set: int | None
    _bits: np.ndarray | None
    _mask: np.ndarray | None
    _ids: np.ndarray | None
    _state: engine.State | None

    def __init__(self, state: engine.State, game: int = 0):
        """Game ``game`` of a (batched) engine state."""
        if not isinstance(state, engine.State):
            raise TypeError(f"a Game is read from an engine State, got {type(state).__name__}")
        if not (is_int(game) and 0 <= game < state.num_games):
            raise ValueError(f"game must be an index 0..{state.num_games - 1} of the state, got {game!r}")
        self.rules = state.rules
        self._t = _lookups(self.rules)
        self._load(state, game)

    @classmethod
    def new(cls, seed_or_rng: int | np.random.Generator | None, rules: Rules | str | None = None,
            deal: Deal | dict | None = None) -> Game:
        """A new hand dealt as :func:`engine.reset` deals one game from ``seed_or_rng`` (or ``deal``).

        The same draws in the same order: the game's key is one ``rng.integers`` of the generator
        (drawn before a scripted deal is read), then the engine's own shuffle and seat draws of
        ``(key, episode 0, redeals 0)``; nothing else is drawn.
        """
        rules = resolve_rules(rules)
        given = seed_or_rng
        rng = given if isinstance(given, np.random.Generator) else np.random.default_rng(given)
        game = cls.__new__(cls)
        game.rules, game._t = rules, _lookups(rules)
        game.key = rng.integers(0, 2**63 - 1, size=1, dtype=np.int64).astype(np.uint64)
        game.rewards, game.ended = [0.0, 0.0, 0.0], False
        if deal is None:
            game._deal(0, 0, game._draw_seat(0, 0))
        else:
            deal = Deal.coerce(deal)
            cards, landlord = engine.deal_from_cards(deal), deal.landlord  # (validates the deal)
            game._deal(0, 0, int(deal.first_bidder), cards, None if landlord is None else int(landlord))
        return game

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_t"}  # the tables are rebuilt from rules

    def __setstate__(self, d: dict) -> None:
        self.__dict__.update(d)
        self._t = _lookups(self.rules)

    # -- conversion to and from the engine's state -------------------------------------

    def _load(self, s: engine.State, i: int) -> None:
        """Read game ``i`` of ``s`` into this game's fields."""
        self.key, self.episode, self.deal = s.key[i : i + 1].copy(), int(s.episode[i]), s.deal[i].copy()
        cards = np.zeros((_UNSEEN + 3, NUM_RANKS), dtype=np.int8)
        cards[_HANDS:_HANDS + 3], cards[_PLAYED:_PLAYED + 3] = s.hands[i], s.played[i]
        cards[_HOLE] = s.hole[i]
        cards[_UNSEEN:] = DECK_COUNTS - s.played[i].sum(axis=0) - s.hands[i]
        self.cards = cards
        self.left = s.hands[i].sum(axis=1).tolist()
        for name in ("phase", "to_act", "first_bidder", "base", "landlord", "to_beat", "to_beat_seat",
                     "passes", "bombs", "spring", "redeals", "escaped"):
            setattr(self, name, int(getattr(s, name)[i]))
        for name in ("bids", "doubles", "num_plays", "scores"):
            setattr(self, name, getattr(s, name)[i].tolist())
        self.rocket, self.done, self.truncated, self.ended = (bool(s.rocket[i]), bool(s.done[i]),
                                                              bool(s.truncated[i]), bool(s.ended[i]))
        self.rewards = s.rewards[i].tolist()
        n = int(s.history_len[i])
        self.history, self.history_seat = s.history[i, :n].tolist(), s.history_seat[i, :n].tolist()
        # the card bits of the moves, the first at the end: the last 15, most recent first, are a slice
        self._moves = np.zeros((MAX_HISTORY + HISTORY_MOVES, CARD_BITS), np.float32)
        self._moves[MAX_HISTORY - 1 - np.arange(n)] = self._t.action_bits[self.history]
        self._movers = np.zeros((3, MAX_HISTORY + HISTORY_MOVES, 3), np.float32)  # likewise, per observer
        self._movers[:, MAX_HISTORY - 1 - np.arange(n)] = _MOVER[self.history_seat].transpose(1, 0, 2)
        self._settled: list[np.ndarray | None] = [None, None, None]
        self._fits: list[int | None] = [None, None, None]
        self._changed()
        self._state = s if s.num_games == 1 else None

    @property
    def hands(self) -> np.ndarray:
        """``(3, 15)`` int8 the cards in each seat's hand (a view of :attr:`cards`)."""
        return self.cards[_HANDS:_HANDS + 3]

    @property
    def hole(self) -> np.ndarray:
        """``(15,)`` int8 the hole cards (a view of :attr:`cards`)."""
        return self.cards[_HOLE]

    def _changed(self) -> None:
        """Forget what was derived from the previous position (legal actions, the state built)."""
        self._set = self._bits = self._mask = self._ids = None
        self._state = None

    def to_state(self) -> engine.State:
        """The game as a one-game engine :class:`~doudizhu_env.engine.State` (built once per position)."""
        if self._state is None:
            self._state = engine.State(**self._state_fields())
        return self._state

    def _state_fields(self) -> dict:
        history = np.full((1, MAX_HISTORY), -1, np.int16)
        history_seat = np.full((1, MAX_HISTORY), -1, np.int8)
        history[0, : len(self.history)] = self.history
        history_seat[0, : len(self.history)] = self.history_seat
        one = {"episode": np.int32, "phase": np.int8, "to_act": np.int8, "first_bidder": np.int8,
               "base": np.int8, "landlord": np.int8, "to_beat": np.int32, "to_beat_seat": np.int8,
               "passes": np.int8, "bombs": np.int8, "rocket": bool, "spring": np.int8, "redeals": np.int16,
               "escaped": np.int8, "done": bool, "truncated": bool, "ended": bool}
        three = {"bids": np.int8, "doubles": np.int8, "num_plays": np.int16, "rewards": np.float32,
                 "scores": np.int32}
        return dict(
            rules=self.rules, key=self.key.copy(), deal=self.deal[None].copy(), hands=self.hands[None].copy(),
            hole=self.hole[None].copy(), played=self.cards[None, _PLAYED:_PLAYED + 3].copy(),
            history=history, history_seat=history_seat,
            history_len=np.array([len(self.history)], np.int16),
            **{k: np.array([getattr(self, k)], dtype) for k, dtype in one.items()},
            **{k: np.array([getattr(self, k)], dtype) for k, dtype in three.items()},
        )

    def _by_engine(self, stepped: engine.State) -> None:
        """Take the engine's result for this game (a transition left to the engine)."""
        self._load(stepped, 0)

    def next_hand(self) -> None:
        """A game that is over is dealt its next hand, as :func:`engine.reset_done` deals it: episode
        + 1, the first bidder one seat on, ``rewards`` and ``ended`` kept."""
        if self.done:
            self._deal(self.episode + 1, 0, (self.first_bidder + 1) % 3)

    # -- dealing ---------------------------------------------------------------------------

    def _draw_seat(self, episode: int, salt: int) -> int:
        """The engine's seat draw from this game's key (salt 0: first bidder, 1: landlord)."""
        return draw_seat_one(int(self.key[0]), episode, salt)

    def _deal(self, episode: int, redeals: int, first: int, cards: np.ndarray | None = None,
              landlord: int | None = None) -> None:
        """Start a fresh hand, as the engine's ``_new_hands`` (and ``_restart``) make one for this game.

        ``cards`` are the 54 dealt card ids, by default the engine's shuffle of ``(key, episode,
        redeals)``; ``landlord`` matters only without bidding, by default the engine's draw. Key,
        ``rewards`` and ``ended`` are left as they are (the caller's, as on the engine).
        """
        if cards is None:
            cards = shuffled_deal_one(int(self.key[0]), episode, redeals)
        counts = np.bincount(_DEAL_CELL + _RANK_OF[cards], minlength=(_UNSEEN + 3) * NUM_RANKS)
        self.cards = counts.astype(np.int8).reshape(_UNSEEN + 3, NUM_RANKS)  # hands and hole; none played
        self.cards[_UNSEEN:] = DECK_COUNTS - self.cards[_HANDS:_HANDS + 3]
        self.episode, self.redeals, self.deal, self.left = episode, redeals, cards, [HAND_SIZE] * 3
        self.phase, self.to_act, self.first_bidder, self.base, self.landlord = BIDDING, first, first, 0, -1
        self.to_beat = self.to_beat_seat = self.escaped = -1
        self.passes = self.bombs = self.spring = 0
        self.bids, self.doubles, self.num_plays, self.scores = [-1] * 3, [-1] * 3, [0] * 3, [0] * 3
        self.rocket = self.done = self.truncated = False
        self.history, self.history_seat = [], []
        self._moves = np.zeros((MAX_HISTORY + HISTORY_MOVES, CARD_BITS), np.float32)
        self._movers = np.zeros((3, MAX_HISTORY + HISTORY_MOVES, 3), np.float32)
        self._settled, self._fits = [None, None, None], [None, None, None]
        self._changed()
        if not self.rules.bidding:
            self.base = 1
            self._make_landlord(self._draw_seat(episode, 1) if landlord is None else landlord)

    # -- legal actions ---------------------------------------------------------------------

    @property
    def num_actions(self) -> int:
        return self._t.num_actions

    def _fit(self, seat: int) -> int:
        """Bitset (a Python int, bit ``a`` for action ``a``) of the combinations ``seat``'s hand holds:
        the AND of its five blocks' rows, kept until the hand changes."""
        fit = self._fits[seat]
        if fit is None:
            h = self.cards[_HANDS + seat].tolist()
            f = self._t.fit
            fit = (f[0][h[0] * 25 + h[1] * 5 + h[2]] & f[1][h[3] * 25 + h[4] * 5 + h[5]]
                   & f[2][h[6] * 25 + h[7] * 5 + h[8]] & f[3][h[9] * 25 + h[10] * 5 + h[11]]
                   & f[4][h[12] * 25 + h[13] * 5 + h[14]])
            self._fits[seat] = fit
        return fit

    def _legal(self) -> int:
        """The legal actions as one Python int, bit ``a`` for action ``a`` (the words of
        :func:`engine.legal_bits` of this game, least significant first), kept per position."""
        legal = self._set
        if legal is None:
            t, phase = self._t, self.phase
            if phase == PLAY:
                legal = self._fit(self.to_act)
                if self.to_beat >= 0:  # follow: the beating combinations held, and pass
                    legal = legal & t.beaters[t.beater_row[self.to_beat]] | 1 << PASS
            else:
                legal = t.phase_bits.get((phase, self.base))
                if legal is None:
                    legal = t.phase_bits[phase, self.base] = _as_int(engine.legal_bits(self.to_state())[0])
            self._set = legal
        return legal

    def legal_bits(self) -> np.ndarray:
        """``(W,)`` uint64 bitset of the legal actions (:func:`engine.legal_bits` of this game); read-only."""
        if self._bits is None:
            self._bits = np.frombuffer(self._legal_bytes(), "<u8").astype(np.uint64, copy=False)
            self._bits.setflags(write=False)
        return self._bits

    def _legal_bytes(self) -> bytes:
        """The legal bitset as the bytes of :meth:`legal_bits` (bit ``a % 8`` of byte ``a // 8``)."""
        return self._legal().to_bytes(self._t.num_bytes, "little")

    def legal_mask(self) -> np.ndarray:
        """``(A,)`` int8 dense mask of the legal actions (zeros once over), the caller's own array."""
        if self._mask is not None:
            return self._mask.copy()
        as_bytes = np.frombuffer(self._legal_bytes(), np.uint8)
        return np.unpackbits(as_bytes, count=self._t.num_actions, bitorder="little").view(np.int8)

    def _dense_mask(self) -> np.ndarray:
        """:meth:`legal_mask`, made once per position and shared within this class (read only)."""
        if self._mask is None:
            self._mask = self.legal_mask()
            self._mask.setflags(write=False)
        return self._mask

    def legal_ids(self) -> np.ndarray:
        """The legal action ids, ascending (int64)."""
        if self._ids is None:
            self._ids = np.flatnonzero(self._dense_mask().view(bool))
        return self._ids

    def is_legal(self, action: int) -> bool:
        """Is ``action`` (an id in range) legal for the seat to act? (False once the hand is over.)"""
        return bool(self._legal() >> action & 1)

    def sample_legal(self, rng: np.random.Generator) -> int:
        """A uniformly random legal action: what :func:`engine.sample_legal` draws for this game from
        ``rng`` (the ``k = floor(u * n)``-th legal id, one ``rng.random()``); ``PASS`` once over."""
        u = rng.random()
        if self.done:
            return PASS
        if self._ids is not None:
            return int(self._ids[int(u * len(self._ids))])
        legal = self._legal()
        n = legal.bit_count()
        if not n:
            raise AssertionError("a game that is not over has a legal action")
        k = int(u * n)
        if n <= _FEW_LEGAL:  # a follow, mostly: clear the k lowest bits
            return _select_bit(legal, k)
        return int(self.legal_ids()[k])

    # -- stepping --------------------------------------------------------------------------

    def step(self, action: int, check: bool = True) -> None:
        """The seat to act makes ``action`` (an int id); as :func:`engine.step` on the one-game state.

        With ``check`` an illegal action raises the engine's
        :class:`~doudizhu_env.engine.IllegalActionError` and changes nothing;
        ``check=False`` is for actions known to be legal. A game already over
        stays as it is (its ``rewards`` are zeroed, ``ended`` cleared).
        """
        if type(action) is not int:
            action = engine.action_id(action)  # a numpy integer; anything else raises IllegalActionError
        if self.done:
            self.rewards, self.ended = [0.0, 0.0, 0.0], False
            self._state = None
            return
        if check and not 0 <= action < self._t.num_actions:
            raise engine.IllegalActionError(f"action id {short(action)} out of range "
                                            f"0..{self._t.num_actions - 1}")
        if check and not self.is_legal(action):
            self._by_engine(engine.step(self.to_state(), np.array([action])))  # raises, naming the legal ones
            return
        if self.phase == BIDDING and action == BID0 and self.base == 0 and self.bids.count(-1) == 1:
            self._all_passed(action)
            return
        self.rewards, self.ended = [0.0, 0.0, 0.0], False
        pos = MAX_HISTORY - 1 - len(self.history)
        if self._t.num_cards[action]:  # (the rows of moves without cards stay zeros)
            self._moves[pos] = self._t.action_bits[action]
        self._movers[:, pos] = _MOVER[self.to_act]
        self.history.append(action)
        self.history_seat.append(self.to_act)
        if self.phase == PLAY:
            self._play(action)
        else:
            self._settled = [None, None, None]
            if self.phase == BIDDING:
                self._bid(action - BID0)
            else:
                self._double(action == DOUBLE)
        self._changed()

    def _all_passed(self, action: int) -> None:
        """All three passed: a new shuffle (redeals + 1), the first bidder one seat on, as the engine's
        ``_redeal``; past ``Rules.redeal_limit`` the engine itself truncates the hand."""
        if self.redeals + 1 > self.rules.redeal_limit:
            # the action was checked by this game's own step (its legal bitset) before it got here
            self._by_engine(engine.step(self.to_state(), np.array([action]), check=False))
            return
        self.rewards, self.ended = [0.0, 0.0, 0.0], False
        self._deal(self.episode, self.redeals + 1, (self.first_bidder + 1) % 3)

    def _bid(self, bid: int) -> None:
        """One turn per seat from the first bidder; a bid of 3 or the third turn ends bidding."""
        seat = self.to_act
        self.bids[seat] = bid
        self.base = max(self.base, bid)
        if bid == 3 or -1 not in self.bids:  # over, and someone bid (all passing is the engine's redeal)
            self._make_landlord(self.bids.index(max(self.bids)))
        else:
            self.to_act = (seat + 1) % 3

    def _make_landlord(self, seat: int) -> None:
        """Bidding is over: the hole cards join ``seat``'s hand; doubling (or play) starts."""
        self.landlord = seat
        self.cards[_HANDS + seat] += self.cards[_HOLE]
        self.cards[_UNSEEN + seat] -= self.cards[_HOLE]
        self.left[seat] += HOLE_SIZE
        self._fits[seat] = None
        if self.rules.doubling:
            self.phase, self.to_act = DOUBLING, (seat + 1) % 3
        else:
            self.phase, self.to_act = PLAY, seat

    def _double(self, doubled: bool) -> None:
        """Farmer after the landlord, then the other farmer; the landlord redoubles only if one doubled."""
        seat, landlord = self.to_act, self.landlord
        self.doubles[seat] = int(doubled)
        if seat == (landlord + 1) % 3:
            self.to_act = (landlord + 2) % 3
        elif seat == (landlord + 2) % 3 and 1 in self.doubles:
            self.to_act = landlord
        else:
            self.phase, self.to_act = PLAY, landlord

    def _play(self, action: int) -> None:
        """Play or pass; two passes in a row clear the table; an empty hand ends the hand."""
        seat = self.to_act
        self.to_act = (seat + 1) % 3
        if action == PASS:
            self.passes += 1
            if self.passes >= 2:
                self.to_beat, self.passes = -1, 0
            return
        t = self._t
        self.cards += t.play_delta(seat, action)
        self.left[seat] -= t.num_cards[action]
        self._fits[seat] = None
        self.num_plays[seat] += 1
        self.to_beat, self.to_beat_seat, self.passes = action, seat, 0
        self.bombs += t.bomb[action]
        self.rocket |= action == t.rocket
        if self.left[seat] == 0:
            self._score(seat)

    def _score(self, winner: int) -> None:
        """The hand ended with ``winner``'s last card: 2:1:1 payoffs times base x multiplier."""
        landlord = self.landlord
        landlord_won = winner == landlord
        if self.rules.spring:
            landlord_plays = self.num_plays[landlord]
            self.spring = int(engine.spring_of(landlord_won, sum(self.num_plays) - landlord_plays,
                                               landlord_plays))
        stake = self.base * self.multiplier
        sign = 1 if landlord_won else -1
        points = [-sign * stake] * 3
        points[landlord] = 2 * sign * stake
        self.phase, self.done, self.ended, self.truncated = OVER, True, True, False
        self._settled = [None, None, None]
        self.scores, self.rewards = points, [float(p) for p in points]

    # -- what a seat sees --------------------------------------------------------------------

    @property
    def multiplier(self) -> int:
        """2 ** (bombs + rocket + doublings + spring) so far."""
        return 1 << self._events()

    def _events(self) -> int:
        return self.bombs + self.rocket + self.doubles.count(1) + (self.spring != NO_SPRING)

    @property
    def leading(self) -> bool:
        return self.to_beat < 0

    def observe(self, seat: int) -> np.ndarray:
        """``(OBS_SIZE,)`` float32 observation of ``seat``: :func:`observe` of the one-game state, built
        from this game's fields."""
        if not (type(seat) is int and 0 <= seat <= 2):
            check_seat("seat", seat)
            seat = int(seat)
        out = np.zeros(OBS_SIZE, dtype=np.float32)
        out[:_CARDS_END] = self.cards.ravel().take(_CARD_ENTRIES[self.landlord >= 0, seat]) > _CARD_LEVELS
        if self.phase == PLAY and self.to_beat >= 0:
            out[_TO_BEAT] = self._t.action_bits[self.to_beat]
        start = MAX_HISTORY - len(self.history)
        out[_HISTORY] = self._moves[start : start + HISTORY_MOVES].ravel()
        out[_HISTORY_SEATS] = self._movers[seat, start : start + HISTORY_MOVES].ravel()
        settled = self._settled[seat]
        if settled is None:
            settled = self._settled[seat] = np.array(self._settled_columns(seat), np.intp)
        out[settled] = 1.0
        for col in self._moving_columns(seat):
            out[col] = 1.0
        return out

    def _moving_columns(self, seat: int) -> list[int]:
        """Column of the category set in the one-hot slots that card play changes (multiplier, bombs,
        cards left, who played the combination to beat): the values of :func:`observe`."""
        left, (me, after, before) = self.left, _REL[seat]
        cols = [_MULTIPLIER_COL + min(self._events(), _MULTIPLIER_TOP),  # capped: the last category
                _BOMBS_COL + min(self.bombs + self.rocket, _BOMBS_TOP),
                _LEFT_COL + left[me], _LEFT_COL + _LEFT_SIZE + left[after],
                _LEFT_COL + 2 * _LEFT_SIZE + left[before]]
        if self.phase == PLAY and self.to_beat >= 0:
            cols.append(_TO_BEAT_SEAT_COL + (self.to_beat_seat - seat) % 3)
        return cols

    def _settled_columns(self, seat: int) -> list[int]:
        """The one-hot columns that card play does not change: phase, base, role, landlord, bids, doubles
        (the rest of :data:`ONE_HOT_PIECES` but the moves' seats)."""
        landlord, rel = self.landlord, _REL[seat]
        cols = [_COL["phase"] + self.phase, _COL["base"] + self.base]
        if landlord >= 0:
            cols += [_COL["role"] + (seat - landlord) % 3, _COL["landlord"] + (landlord - seat) % 3]
        for k in range(3):  # per relative seat; not yet / not asked is category 0
            cols += [_COL["bids"] + _SIZE["bids"] * k + self.bids[rel[k]] + 1,
                     _COL["doubles"] + _SIZE["doubles"] * k + self.doubles[rel[k]] + 1]
        return cols
