// The web table's page: draws what the server sends, sends what the person clicks.
// The server checks every move; this page never sees another seat's hidden cards.
"use strict";

const $ = (id) => document.getElementById(id);
const SUITS = { S: "\u2660", H: "\u2665", C: "\u2663", D: "\u2666" };
let view = null;          // the server's latest view of the game
let selected = new Set(); // ids of the cards picked in the hand
let replay = { games: [], game: 0, step: 0 };

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function cardEl(card, tag) {
  const e = el(tag || "span", null, "card");
  e.dataset.id = card.id;
  if (card.suit === "") {
    e.classList.add("joker");
    if (card.rank === "D") e.classList.add("red");
    e.textContent = card.rank === "D" ? "JOKER" : "joker";
    e.title = card.rank === "D" ? "big joker (D)" : "small joker (X)";
  } else {
    if (card.suit === "H" || card.suit === "D") e.classList.add("red");
    e.appendChild(el("span", card.label));
    e.appendChild(el("span", SUITS[card.suit]));
    e.title = card.label + SUITS[card.suit];
  }
  return e;
}

function showCards(container, cards) {
  container.replaceChildren(...cards.map((c) => cardEl(c)));
  if (!cards.length) container.appendChild(el("span", "-"));
}

async function api(method, path, body) {
  const options = { method, headers: {}, credentials: "same-origin" };
  if (body !== undefined) {
    options.headers["Content-Type"] = typeof body === "string" ? "text/plain" : "application/json";
    options.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const response = await fetch(path, options);
  const data = await response.json();
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

// -- play -------------------------------------------------------------------

async function setUp() {
  const config = await api("GET", "/api/config");
  for (const id of ["opponent-1", "opponent-2"]) {
    $(id).replaceChildren(...config.opponents.map((o) => el("option", o)));
  }
  $("setup").addEventListener("submit", (e) => { e.preventDefault(); newGame(); });
}

async function newGame() {
  const body = { opponents: [$("opponent-1").value, $("opponent-2").value], seat: Number($("seat").value) };
  if ($("seed").value !== "") body.seed = Number($("seed").value);
  try {
    show(await api("POST", "/api/games", body));
    say("");
  } catch (err) { say(err.message, true); }
}

function seatLabel(s) { return s === view.seat ? "you" : "seat " + s + " (" + view.seats[s].name + ")"; }

function show(v) {
  view = v;
  selected = new Set([...selected].filter((id) => v.hand.some((c) => c.id === id)));
  const parts = v.multiplier_parts.length ? v.multiplier_parts.join(", ") : "nothing doubled yet";
  const base = v.landlord >= 0 || v.base > 0 ? "base " + v.base : "no bid yet";
  const turn = v.done ? "the hand is over" : v.your_turn ? "your turn" : seatLabel(v.to_act) + " to act";
  $("status").textContent = "rules: " + v.rules + " | phase: " + v.phase + " | " + base + " | multiplier x" + v.multiplier +
    " (" + parts + ") | " + turn;
  drawSeats(v);
  showCards($("hole"), v.hole);
  drawTrick(v);
  drawHand(v);
  drawActions(v);
  $("options").replaceChildren();
  $("log").replaceChildren(...v.log.map((e) => el("li", e.text)));
  $("log").scrollTop = $("log").scrollHeight;
  drawResult(v);
}

function drawSeats(v) {
  $("seats").replaceChildren(...v.seats.map((s) => {
    const box = el("div", null, "seat");
    box.id = "seat-" + s.seat;
    if (s.seat === v.seat) box.classList.add("you");
    if (!v.done && s.seat === v.to_act) box.classList.add("to-act");
    const head = el("div", null);
    head.appendChild(el("span", s.seat === v.seat ? "you (seat " + s.seat + ")" : "seat " + s.seat + ": " + s.name, "name"));
    if (s.role) head.appendChild(el("span", s.role, "tag " + s.role));
    if (s.partner) head.appendChild(el("span", "your partner", "tag partner"));
    box.appendChild(head);
    const facts = [s.cards_left + " card" + (s.cards_left === 1 ? "" : "s") + " left"];
    if (s.bid >= 0) facts.push(s.bid === 0 ? "no bid" : "bid " + s.bid);
    if (s.doubling) facts.push(s.doubling);
    box.appendChild(el("div", facts.join(" \u00b7 ")));
    box.appendChild(el("div", s.last ? "this trick: " + s.last : "", "last move"));
    return box;
  }));
}

function drawTrick(v) {
  const t = v.trick;
  const lines = [];
  if (v.phase === "play" || v.done) {
    if (t.moves.length) {
      lines.push("led by " + seatLabel(t.leader) + ": " + t.moves.map(([s, m]) => seatLabel(s) + " " + m).join(", "));
    } else if (t.previous_winner !== null && t.previous_winner !== undefined) {
      lines.push(seatLabel(t.previous_winner) + " won the last trick (" +
        t.previous.map(([s, m]) => m).join(", ") + ") and lead" + (t.previous_winner === v.seat ? "" : "s"));
    }
    if (t.to_beat) {
      const by = v.seats[t.by];
      lines.push("to beat: " + t.to_beat + " by " + seatLabel(t.by) + (by.partner ? ", your partner" : ""));
    } else if (!v.done) {
      lines.push(seatLabel(v.to_act) + " lead" + (v.your_turn ? "" : "s") + ": any combination");
    }
  }
  $("trick").replaceChildren(...lines.map((l) => el("div", l, "move")));
}

function drawHand(v) {
  $("hand-count").textContent = "(" + v.hand.length + ")";
  $("hand").replaceChildren(...v.hand.map((c) => {
    const b = cardEl(c, "button");
    b.type = "button";
    if (selected.has(c.id)) b.classList.add("selected");
    b.addEventListener("click", () => {
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
  b.addEventListener("click", onClick);
  return b;
}

function drawActions(v) {
  const bar = $("actions");
  bar.replaceChildren();
  if (!v.your_turn) return;
  if (v.phase === "bidding") {
    for (const a of v.legal) {
      const b = button(a.name === "bid0" ? "no bid" : "bid " + a.name.slice(3), null, () => move({ action: a.id }), "bid");
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
    bar.appendChild(button("Play the selected cards", "play", () => move({ cards: [...selected] })));
    const pass = v.legal.find((a) => a.name === "pass");
    if (pass) bar.appendChild(button("Pass", "pass", () => move({ action: pass.id })));
    bar.appendChild(button("Clear", "clear", () => { selected.clear(); drawHand(view); }));
  }
  bar.appendChild(button("Hint", "hint", hint));
}

async function move(body) {
  try {
    const v = await api("POST", "/api/games/" + view.game + "/move", body);
    selected.clear();
    say("");
    show(v);
  } catch (err) {
    if (err.status === 409 && err.options) {
      say(err.message);
      $("options").replaceChildren(...err.options.map((o) => button(o.name + " (" + o.kind + ")", null,
        () => move({ action: o.id }), "option")));
    } else {
      say(err.message, true);
    }
  }
}

async function hint() {
  try {
    const h = await api("GET", "/api/games/" + view.game + "/hint");
    if (!h.suggestion) return;
    selected = new Set(h.suggestion.cards);
    drawHand(view);
    const kinds = Object.entries(h.legal).map(([k, names]) => k + ": " + names.slice(0, 8).join(" ")).join("; ");
    say("hint: " + h.suggestion.name + (h.suggestion.cards.length ? " (selected in your hand)" : "") +
      ". Legal moves: " + kinds);
    $("message").dataset.hint = h.suggestion.id;
  } catch (err) { say(err.message, true); }
}

function drawResult(v) {
  const box = $("result");
  box.hidden = !v.done;
  if (!v.done) { box.replaceChildren(); return; }
  box.replaceChildren(el("h3", "The hand is over"), ...v.result.lines.map((l) => el("div", l)));
  v.result.hands.forEach((cards, s) => {
    const row = el("div", null, "bar");
    row.appendChild(el("span", seatLabel(s) + " still held:"));
    const c = el("div", null, "cards");
    showCards(c, cards);
    row.appendChild(c);
    box.appendChild(row);
  });
  v.result.dealt.forEach((cards, s) => {
    const row = el("div", null, "bar");
    row.appendChild(el("span", seatLabel(s) + (s === v.seat ? " were dealt:" : " was dealt:")));
    const c = el("div", null, "cards");
    showCards(c, cards);
    row.appendChild(c);
    box.appendChild(row);
  });
}

// -- watch ------------------------------------------------------------------

async function loadReplay() {
  const file = $("replay-file").files[0];
  if (!file) { $("replay-message").textContent = "choose a records file first"; return; }
  try {
    const data = await api("POST", "/api/replays", await file.text());
    replay = { games: data.games, game: 0, step: 0 };
    $("replay-game").replaceChildren(...data.games.map((g, i) => {
      const o = el("option", "game " + i + ": " + g.players.join(", "));
      o.value = String(i);
      return o;
    }));
    $("replay-message").textContent = data.games.length + " game(s) loaded";
    drawReplay();
  } catch (err) { $("replay-message").textContent = err.message; }
}

function drawReplay() {
  const g = replay.games[replay.game];
  if (!g) return;
  const step = g.steps[replay.step];
  const last = replay.step === g.steps.length - 1;
  const phases = ["bidding", "doubling", "play", "over"];
  $("replay-step").textContent = "move " + replay.step + " of " + (g.steps.length - 1);
  const played = replay.step > 0 ? g.steps[replay.step - 1].next : null;
  $("replay-status").textContent = phases[step.phase] + " | base " + step.base + " | multiplier x" + step.multiplier +
    (played ? " | last: seat " + played.seat + " " + played.move : "") +
    (step.next ? " | next: seat " + step.next.seat + " " + step.next.move : "");
  $("replay-hands").replaceChildren(...step.hands.map((cards, s) => {
    const box = el("div", null, "seat");
    box.id = "replay-seat-" + s;
    if (step.next && step.next.seat === s) box.classList.add("to-act");
    const head = el("div", null);
    head.appendChild(el("span", "seat " + s + ": " + g.players[s], "name"));
    if (step.landlord >= 0) head.appendChild(el("span", s === step.landlord ? "landlord" : "farmer",
      "tag " + (s === step.landlord ? "landlord" : "farmer")));
    box.appendChild(head);
    const c = el("div", null, "cards");
    showCards(c, cards);
    box.appendChild(c);
    return box;
  }));
  showCards($("replay-hole"), step.hole);
  $("replay-trick").replaceChildren(...step.trick.map(([s, m]) => el("div", "seat " + s + ": " + m, "move")));
  if (step.to_beat) $("replay-trick").appendChild(el("div", "to beat: " + step.to_beat));
  const box = $("replay-result");
  box.hidden = !last;
  box.replaceChildren(...(last ? [el("h3", "Result"), ...g.result.lines.map((l) => el("div", l))] : []));
}

function stepTo(k) {
  const g = replay.games[replay.game];
  if (!g) return;
  replay.step = Math.max(0, Math.min(g.steps.length - 1, k));
  drawReplay();
}

function setUpWatch() {
  $("replay-load").addEventListener("click", loadReplay);
  $("replay-game").addEventListener("change", () => { replay.game = Number($("replay-game").value); stepTo(0); });
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
