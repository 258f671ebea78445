// The web table's page: draws what the server sends, sends what the person clicks.
// The server checks every move; this page never sees another seat's hidden cards.
// One request at a time: while one is in flight (or the agents' moves are being shown one by
// one) every button is disabled and the page says "thinking…" (body[data-busy="1"]).
"use strict";

const $ = (id) => document.getElementById(id);
const SUITS = { S: "\u2660", H: "\u2665", C: "\u2663", D: "\u2666" };
const RANKS = "3456789TJQKA2XD";
const PAUSE_MS = 450;     // between two moves of the agents, shown one by one
let view = null;          // the server's latest view of the game
let selected = new Set(); // ids of the cards picked in the hand
let busy = false;         // a request (or the showing of the agents' moves) is under way
let replay = { games: [], game: 0, step: 0 };

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// -- cards ------------------------------------------------------------------

// A card from its id (0..53): 4 * rank + suit for ranks 3..2, 52 the small joker, 53 the big one.
function cardOf(id) {
  if (id >= 52) return { id, rank: id === 52 ? "X" : "D", suit: "" };
  return { id, rank: RANKS[id >> 2], suit: "SHCD"[id % 4] };
}

const rankLabel = (r) => (r === "T" ? "10" : r);

// A card face: rank and suit; a joker a star with JOKER (red for the big joker); suit "-": no suit
// (the cards of a move, whose suits the page does not know).
function cardEl(card, tag) {
  const e = el(tag || "span", null, "card");
  if (card.id !== undefined) e.dataset.id = card.id;
  if (card.rank === "X" || card.rank === "D") {
    e.classList.add("joker");
    if (card.rank === "D") e.classList.add("red");
    e.append(el("span", "\u2605", "star"), el("span", "JOKER", "joker-word"));
    e.title = card.rank === "D" ? "big joker (D)" : "small joker (X)";
    return e;
  }
  if (card.suit === "H" || card.suit === "D") e.classList.add("red");
  e.appendChild(el("span", rankLabel(card.rank), card.rank === "T" ? "ten" : null));
  if (SUITS[card.suit]) e.appendChild(el("span", SUITS[card.suit]));
  e.title = rankLabel(card.rank) + (SUITS[card.suit] || "");
  return e;
}

// The cards of a move name ("333444+5+7", "XD"), rank by rank, without suits.
function moveCards(name) {
  return [...name].filter((c) => RANKS.includes(c)).map((rank) => cardEl({ rank, suit: "-" }));
}

function showCards(container, cards) {
  container.replaceChildren(...cards.map((c) => cardEl(typeof c === "number" ? cardOf(c) : c)));
  if (!cards.length) container.appendChild(el("span", "-"));
}

// A move in words: "no bid", "bid 2", "double", "no double", "pass", or the cards' name.
function words(name) {
  if (name === "bid0") return "no bid";
  if (name.startsWith("bid")) return "bid " + name.slice(3);
  return name.replace("_", " ");
}

// What a seat did, for its place at the table: the cards of a play, else the words.
function moveEl(name) {
  const box = el("span", null, "move-cards");
  if (/^[3-9TJQKA2XD+]+$/.test(name)) box.append(...moveCards(name));
  else box.appendChild(el("span", words(name), "said"));
  return box;
}

// -- requests ---------------------------------------------------------------

async function api(method, path, body) {
  const options = { method, headers: {}, credentials: "same-origin" };
  if (body !== undefined) {
    options.headers["Content-Type"] = typeof body === "string" ? "text/plain" : "application/json";
    options.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const response = await fetch(path, options);
  let data;
  try {
    data = await response.json();
  } catch (e) {
    data = { error: "the server answered " + response.status + " " + response.statusText };
  }
  if (!response.ok) {
    const err = new Error(data.error || response.statusText);
    err.status = response.status;
    err.options = data.options;
    throw err;
  }
  return data;
}

function say(text, error) {
  const m = $("message");
  m.textContent = text || "";
  m.className = error ? "message error" : "message";
}

// Every button of the play panel off while busy (a double click sends one request).
function setBusy(on, text) {
  busy = on;
  document.body.dataset.busy = on ? "1" : "0";
  for (const b of document.querySelectorAll("#play-panel button")) b.disabled = on;
  if (on) say(text || "thinking\u2026");
}

// Run one request at a time: a click while another is under way does nothing.
async function exclusive(work) {
  if (busy) return;
  setBusy(true);
  try {
    await work();
  } finally {
    setBusy(false);
    if (view) drawActions(view);
  }
}

// -- play -------------------------------------------------------------------

async function setUp() {
  const config = await api("GET", "/api/config");
  for (const id of ["opponent-1", "opponent-2"]) {
    $(id).replaceChildren(...config.opponents.map((o) => el("option", o)));
  }
  $("setup").addEventListener("submit", (e) => { e.preventDefault(); newGame(); });
}

function newGame() {
  const body = { opponents: [$("opponent-1").value, $("opponent-2").value], seat: Number($("seat").value) };
  if ($("seed").value !== "") body.seed = Number($("seed").value);
  return exclusive(async () => {
    try {
      const v = await api("POST", "/api/games", body);
      selected.clear();
      show(v);
      say("");
    } catch (err) { say(err.message, true); }
  });
}

function seatLabel(v, s) { return s === v.seat ? "you" : "seat " + s + " (" + v.seats[s].name + ")"; }

// The place each seat is drawn at: you below, the seat after you on the right, the one before on the left.
function placeOf(v, s) {
  if (s === v.seat) return $("place-me");
  return s === (v.seat + 1) % 3 ? $("place-right") : $("place-left");
}

function show(v) {
  view = v;
  selected = new Set([...selected].filter((id) => v.hand.some((c) => c.id === id)));
  const parts = v.multiplier_parts.length ? v.multiplier_parts.join(", ") : "nothing doubled yet";
  const base = v.landlord >= 0 || v.base > 0 ? "base " + v.base : "no bid yet";
  const turn = v.done ? "the hand is over" : v.your_turn ? "your turn" : seatLabel(v, v.to_act) + " to act";
  $("status").textContent = v.rules + " \u00b7 " + v.phase + " \u00b7 " + base + " \u00b7 x" + v.multiplier +
    " (" + parts + ") \u00b7 " + turn;
  v.seats.forEach((s) => drawPlace(v, s));
  showCards($("hole"), v.hole);
  drawTrick(v);
  drawHand(v);
  drawActions(v);
  $("options").replaceChildren();
  $("log").replaceChildren(...v.log.map(logItem));
  $("log").scrollTop = $("log").scrollHeight;
  drawResult(v);
}

function drawPlace(v, s) {
  const box = placeOf(v, s.seat);
  box.className = box.className.replace(/ ?to-act/g, "");
  if (!v.done && s.seat === v.to_act) box.classList.add("to-act");
  box.dataset.seat = s.seat;
  const head = el("div", null);
  head.appendChild(el("span", s.seat === v.seat ? "you (seat " + s.seat + ")" : "seat " + s.seat + " \u00b7 " + s.name,
    "name"));
  if (s.role) head.appendChild(el("span", s.role, "tag " + s.role));
  if (s.partner) head.appendChild(el("span", "your partner", "tag partner"));
  const facts = [s.cards_left + " card" + (s.cards_left === 1 ? "" : "s")];
  if (s.bid >= 0) facts.push(s.bid === 0 ? "no bid" : "bid " + s.bid);
  if (s.doubling) facts.push(s.doubling);
  const played = el("div", null, "played");
  if (s.last) played.appendChild(moveEl(s.last));
  box.replaceChildren(head, el("div", facts.join(" \u00b7 "), "facts"), played);
}

function drawTrick(v) {
  const t = v.trick;
  const lines = [];
  if (v.phase === "play" && !v.done) {
    if (t.to_beat) {
      const by = v.seats[t.by];
      lines.push("to beat: " + seatLabel(v, t.by) + "'s " + t.to_beat + (by.partner ? " (your partner)" : ""));
    } else {
      if (t.previous_winner !== null && t.previous_winner !== undefined) {
        lines.push(seatLabel(v, t.previous_winner) + " won the trick");
      }
      lines.push(seatLabel(v, v.to_act) + " lead" + (v.your_turn ? "" : "s") + ": any combination");
    }
  } else if (v.phase === "bidding" && !v.done) {
    lines.push("bidding: " + (v.your_turn ? "your bid" : seatLabel(v, v.to_act) + " bids"));
  } else if (v.phase === "doubling" && !v.done) {
    lines.push("doubling: " + (v.your_turn ? "your call" : seatLabel(v, v.to_act) + " decides"));
  }
  $("trick").replaceChildren(...lines.map((l) => el("div", l)));
}

function drawHand(v) {
  $("hand").replaceChildren(...v.hand.map((c) => {
    const b = cardEl(c, "button");
    b.type = "button";
    b.disabled = busy;
    if (selected.has(c.id)) b.classList.add("selected");
    b.addEventListener("click", () => {
      if (busy) return;
      if (selected.has(c.id)) selected.delete(c.id); else selected.add(c.id);
      b.classList.toggle("selected");
    });
    return b;
  }));
}

function button(text, id, onClick, cls) {
  const b = el("button", text, cls);
  b.type = "button";
  if (id) b.id = id;
  b.disabled = busy;
  b.addEventListener("click", onClick);
  return b;
}

function drawActions(v) {
  const bar = $("actions");
  bar.replaceChildren();
  if (!v.your_turn || v.done) return;
  if (v.phase === "bidding") {
    for (const a of v.legal) {
      const b = button(words(a.name), null, () => move({ action: a.id }), "bid");
      b.dataset.action = a.id;
      bar.appendChild(b);
    }
  } else if (v.phase === "doubling") {
    const word = v.seat === v.landlord ? "redouble" : "double";
    for (const a of v.legal) {
      const yes = a.name === "double";
      bar.appendChild(button(yes ? word : "no " + word, yes ? "double-yes" : "double-no", () => move({ action: a.id })));
    }
  } else {
    bar.appendChild(button("Play", "play", () => move({ cards: [...selected] })));
    const pass = v.legal.find((a) => a.name === "pass");
    if (pass) bar.appendChild(button("Pass", "pass", () => move({ action: pass.id })));
    bar.appendChild(button("Clear", "clear", () => { selected.clear(); drawHand(view); }));
  }
  bar.appendChild(button("Hint", "hint", hint));
}

function move(body) {
  return exclusive(async () => {
    const before = view;
    try {
      const v = await api("POST", "/api/games/" + before.game + "/move", body);
      selected.clear();
      say("");
      await reveal(v, v.log.slice(before.log.length));
    } catch (err) {
      if (err.status === 409 && err.options) {
        say(err.message);
        $("options").replaceChildren(...err.options.map((o) => button(o.name + " (" + o.kind + ")", null,
          () => move({ action: o.id }), "option")));
      } else {
        say(err.message, true);
      }
    }
  });
}

// The moves of a new view (the person's, then the agents') shown one by one at their places,
// a short pause after each, then the view. ``entries``: the log entries the view adds.
async function reveal(v, entries) {
  const agents = entries.filter((e) => e.seat !== null && e.seat !== v.seat && e.move !== undefined);
  if (view && agents.length) {
    show(Object.assign({}, view, { your_turn: false, legal: [] }));
    for (const e of entries) {
      if (e.kind === "trick" || e.kind === "landlord") {
        for (const p of ["place-left", "place-right", "place-me"]) $(p).querySelector(".played").replaceChildren();
      }
      if (e.move === undefined) continue;
      const played = placeOf(v, e.seat).querySelector(".played");
      played.replaceChildren(moveEl(e.move));
      played.classList.add("fresh");
      $("log").appendChild(logItem(e));
      $("log").scrollTop = $("log").scrollHeight;
      say(seatLabel(v, e.seat) + ": " + words(e.move));
      await sleep(PAUSE_MS);
      played.classList.remove("fresh");
    }
  }
  show(v);
  if (v.done) {
    say(v.result.outcome);
    $("result").scrollIntoView({ block: "nearest" });
  }
}

function logItem(e) {
  const li = el("li", null);
  if (e.kind === "play" && e.move) {
    li.appendChild(el("span", e.text.slice(0, e.text.lastIndexOf(": ") + 2)));
    li.append(...moveCards(e.move));
  } else {
    li.textContent = e.text;
  }
  return li;
}

function hint() {
  return exclusive(async () => {
    try {
      const h = await api("GET", "/api/games/" + view.game + "/hint");
      if (!h.suggestion) { say("no hint: it is not your turn"); return; }
      selected = new Set(h.suggestion.cards);
      drawHand(view);
      const kinds = Object.entries(h.legal).map(([k, names]) => k + ": " + names.slice(0, 8).join(" ")).join("; ");
      say("hint: " + words(h.suggestion.name) + (h.suggestion.cards.length ? " (picked in your hand)" : "") +
        ". Your moves: " + kinds);
      $("message").dataset.hint = h.suggestion.id;
    } catch (err) { say(err.message, true); }
  });
}

function resultRows(box, v, hands, verb) {
  hands.forEach((cards, s) => {
    const row = el("div", null, "bar");
    row.appendChild(el("span", seatLabel(v, s) + verb(s)));
    const c = el("div", null, "cards small");
    showCards(c, cards);
    row.appendChild(c);
    box.appendChild(row);
  });
}

function drawResult(v) {
  const box = $("result");
  box.hidden = !v.done;
  if (!v.done) { box.replaceChildren(); return; }
  const mine = v.result.scores[v.seat];
  box.replaceChildren(el("div", v.result.outcome, "outcome " + (mine > 0 ? "win" : mine < 0 ? "lose" : "")),
    ...v.result.lines.map((l) => el("div", l)));
  resultRows(box, v, v.result.hands, () => " still held:");
  resultRows(box, v, v.result.dealt, (s) => (s === v.seat ? " were dealt:" : " was dealt:"));
}

// -- watch ------------------------------------------------------------------

async function loadReplay() {
  const file = $("replay-file").files[0];
  if (!file) { $("replay-message").textContent = "choose a records file first"; return; }
  $("replay-load").disabled = true;
  $("replay-message").textContent = "loading\u2026";
  try {
    const data = await api("POST", "/api/replays", await file.text());
    replay = { games: data.games, game: 0, step: 0 };
    $("replay-game").replaceChildren(...data.games.map((g, i) => {
      const o = el("option", "game " + (i + 1) + ": " + g.players.join(", "));
      o.value = String(i);
      return o;
    }));
    $("replay-message").textContent = data.games.length + " game(s) loaded";
    drawMoves();
    drawReplay();
  } catch (err) {
    $("replay-message").textContent = err.message;
  } finally {
    $("replay-load").disabled = false;
  }
}

function drawMoves() {
  const g = replay.games[replay.game];
  $("replay-moves").replaceChildren(...g.steps.slice(0, -1).map((s, k) => {
    const li = el("li", null);
    li.appendChild(el("span", "seat " + s.next.seat + ": "));
    li.appendChild(moveEl(s.next.move));
    li.addEventListener("click", () => stepTo(k + 1));
    return li;
  }));
}

function drawReplay() {
  const g = replay.games[replay.game];
  if (!g) return;
  const step = g.steps[replay.step];
  const last = replay.step === g.steps.length - 1;
  const phases = ["bidding", "doubling", "play", "over"];
  $("replay-step").textContent = "move " + replay.step + " of " + (g.steps.length - 1);
  const played = replay.step > 0 ? g.steps[replay.step - 1].next : null;
  $("replay-status").textContent = phases[step.phase] + " \u00b7 base " + step.base + " \u00b7 x" + step.multiplier +
    (played ? " \u00b7 last: seat " + played.seat + " " + words(played.move) : "") +
    (step.next ? " \u00b7 next: seat " + step.next.seat + " " + words(step.next.move) : "");
  $("replay-hands").replaceChildren(...step.hands.map((cards, s) => replaySeat(g, step, cards, s)));
  showCards($("replay-hole"), step.hole);
  $("replay-trick").replaceChildren(...step.trick.map(([s, m]) => {
    const row = el("div", null);
    row.append(el("span", "seat " + s + ":"), moveEl(m));
    return row;
  }));
  if (step.to_beat) $("replay-trick").appendChild(el("div", "to beat: " + step.to_beat));
  const list = $("replay-moves");
  [...list.children].forEach((li, k) => {
    li.classList.toggle("current", k === replay.step - 1);
    li.classList.toggle("done", k < replay.step - 1);
  });
  const current = list.querySelector(".current");
  list.scrollTop = current ? current.offsetTop - list.offsetTop - list.clientHeight / 2 : 0;
  const box = $("replay-result");
  box.hidden = !last;
  box.replaceChildren(...(last ? [el("h3", "Result"), ...g.result.lines.map((l) => el("div", l))] : []));
}

function replaySeat(g, step, cards, s) {
  const box = el("div", null, "place seat");
  box.id = "replay-seat-" + s;
  if (step.next && step.next.seat === s) box.classList.add("to-act");
  const head = el("div", null);
  head.appendChild(el("span", "seat " + s + " \u00b7 " + g.players[s], "name"));
  if (step.landlord >= 0) head.appendChild(el("span", s === step.landlord ? "landlord" : "farmer",
    "tag " + (s === step.landlord ? "landlord" : "farmer")));
  const facts = [cards.length + " card" + (cards.length === 1 ? "" : "s")];
  if (step.bids[s] >= 0) facts.push(step.bids[s] === 0 ? "no bid" : "bid " + step.bids[s]);
  if (step.doubling[s]) facts.push(step.doubling[s]);
  const c = el("div", null, "cards");
  showCards(c, cards);
  box.append(head, el("div", facts.join(" \u00b7 "), "facts"), c);
  return box;
}

function stepTo(k) {
  const g = replay.games[replay.game];
  if (!g) return;
  replay.step = Math.max(0, Math.min(g.steps.length - 1, k));
  drawReplay();
}

function setUpWatch() {
  $("replay-load").addEventListener("click", loadReplay);
  $("replay-game").addEventListener("change", () => {
    replay.game = Number($("replay-game").value);
    drawMoves();
    stepTo(0);
  });
  $("replay-first").addEventListener("click", () => stepTo(0));
  $("replay-prev").addEventListener("click", () => stepTo(replay.step - 1));
  $("replay-next").addEventListener("click", () => stepTo(replay.step + 1));
  $("replay-last").addEventListener("click", () => stepTo(Infinity));
  document.addEventListener("keydown", (e) => {
    if ($("watch-panel").hidden) return;
    if (e.key === "ArrowRight") stepTo(replay.step + 1);
    if (e.key === "ArrowLeft") stepTo(replay.step - 1);
  });
}

function tabs() {
  const panels = { "tab-play": "play-panel", "tab-watch": "watch-panel" };
  for (const [tab, panel] of Object.entries(panels)) {
    $(tab).addEventListener("click", () => {
      for (const [t, p] of Object.entries(panels)) {
        $(t).classList.toggle("active", t === tab);
        $(p).hidden = p !== panel;
      }
    });
  }
}

tabs();
setUpWatch();
setUp().catch((err) => say("cannot reach the server: " + err.message, true));
