// Mậu Binh showdown viewer: replays a scored room chi by chi. No dependencies; everything it
// shows comes from this service's POST /v1/score and GET /v1/rulesets/{id}. Text from the room
// is only ever set as textContent, never as HTML.
"use strict";

const POSITIONS = ["back", "middle", "front"];
const POSITION_NAMES = { back: "Back", middle: "Middle", front: "Front" };
const SUITS = { S: ["♠", "spades", "black"], C: ["♣", "clubs", "black"], D: ["♦", "diamonds", "red"], H: ["♥", "hearts", "red"] };
const SYMBOL_SUITS = { "♠": "S", "♣": "C", "♦": "D", "♥": "H" };
const RANK_NAMES = { A: "Ace", K: "King", Q: "Queen", J: "Jack", T: "10" };
const STEP_NAMES = {
  instant_win: "Instant win", chi: "Chi won", bonus: "Bonus", scoop: "Scoop (sập)", foul: "Foul penalty (lủng)", ace: "Aces (chi Át)",
};
const FOUL_REASONS = {
  left: "left the table", timed_out: "did not finish in time",
  front_beats_middle: "front hand beats the middle", middle_beats_back: "middle hand beats the back",
};

const state = { result: null, request: null, labels: null, step: 0 };
const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function labelOf(position) {
  const label = state.labels && state.labels[position];
  return label ? `${POSITION_NAMES[position]} (${label})` : POSITION_NAMES[position];
}

// A card as the service prints it ("TH"), or as a person may have written it ("10h", "A♠").
function cardView(text, bad = false) {
  const raw = String(text);
  const suitChar = raw.slice(-1);
  const suit = SYMBOL_SUITS[suitChar] || suitChar.toUpperCase();
  let rank = raw.slice(0, -1).toUpperCase();
  if (rank === "10") rank = "T";
  const known = SUITS[suit] && /^[2-9TJQKA]$/.test(rank);
  if (!known) {
    return el("li", { class: "card bad", "aria-label": `not a card: ${raw}`, text: raw || "(empty)" });
  }
  const [symbol, suitName, colour] = SUITS[suit];
  const shown = (rank === "T" ? "10" : rank) + symbol;
  const name = `${RANK_NAMES[rank] || rank} of ${suitName}`;
  return el("li", { class: `card ${colour}${bad ? " bad" : ""}`, "aria-label": bad ? `${name}, has a problem` : name, text: shown });
}

function cardsView(cards, badIndexes = new Set()) {
  const list = el("ul", { class: "cards" });
  (Array.isArray(cards) ? cards : []).forEach((card, index) => list.append(cardView(card, badIndexes.has(index))));
  return list;
}

async function api(path, body) {
  const headers = { Accept: "application/json" };
  const key = $("api-key").value.trim();
  if (key) headers.Authorization = `Bearer ${key}`;
  const options = { headers };
  if (body !== undefined) {
    options.method = "POST";
    headers["Content-Type"] = "application/json";
    options.body = body;
  }
  const response = await fetch(path, options);
  let json = null;
  try { json = await response.json(); } catch { json = null; }
  return { status: response.status, json };
}

// Position labels: a ruleset's document's, with a variant's own label changes on top.
async function loadLabels(reference, overrides) {
  state.labels = null;
  if (typeof reference !== "string" || !/^[a-z0-9-]{1,64}(@[0-9]{1,6})?$/.test(reference)) return;
  const { status, json } = await api(`/v1/rulesets/${encodeURIComponent(reference)}`);
  if (status !== 200 || !json) return;
  const labels = { ...json.labels };
  for (const [position, label] of Object.entries(overrides || {})) {
    if (typeof label === "string" && position in labels) labels[position] = label;
  }
  state.labels = labels;
}

// The exact rules a result names: its id@version (pinned, so cacheable), or a variant's base and changes.
function labelsOfResult(ruleset) {
  const named = ruleset.base || ruleset;
  const overrides = {};
  for (const change of ruleset.changes || []) {
    if (change.field.startsWith("labels.")) overrides[change.field.slice(7)] = change.value;
  }
  return loadLabels(`${named.id}@${named.version}`, overrides);
}

// What a refused request named: an id, or a variant's base with the labels its patch sets.
function labelsOfRequest(ruleset) {
  if (ruleset && typeof ruleset === "object") {
    const patch = ruleset.patch && typeof ruleset.patch === "object" ? ruleset.patch : {};
    return loadLabels(ruleset.base, patch.labels);
  }
  return loadLabels(ruleset, null);
}

// ---- Scoring -------------------------------------------------------------------------------

async function score() {
  const text = $("room-input").value;
  let request;
  try {
    request = JSON.parse(text);
  } catch (error) {
    showProblem({ title: "Not JSON", detail: `The room is not valid JSON: ${error.message}` }, null);
    return;
  }
  state.request = request;
  const body = JSON.stringify(request);
  $("score").disabled = true;
  try {
    const { status, json } = await api("/v1/score", body);
    if (status === 200 && json) {
      await labelsOfResult(json.ruleset);
      showResult(json);
    } else {
      await labelsOfRequest(request && request.ruleset);
      showProblem(json || { detail: `The service answered ${status}.` }, request);
    }
  } catch (error) {
    showProblem({ detail: `The service could not be reached: ${error.message}` }, null);
  } finally {
    $("score").disabled = false;
  }
}

// ---- Problems (422 and others) -------------------------------------------------------------

function describePointer(pointer, request) {
  const parts = pointer.split("/").slice(1).map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (parts[0] !== "players" || parts.length < 2) {
    const field = parts.length ? parts.join(" → ") : "The whole room";
    return { player: null, text: field.charAt(0).toUpperCase() + field.slice(1) };
  }
  const index = Number(parts[1]);
  const players = (request && Array.isArray(request.players)) ? request.players : [];
  const entry = players[index];
  const who = entry && typeof entry === "object" && typeof entry.id === "string" ? entry.id : `player ${index + 1}`;
  const field = parts[2];
  let where = "This player";
  if (POSITIONS.includes(field)) {
    where = `${labelOf(field)} hand`;
    if (parts[3] !== undefined) {
      const cards = entry && Array.isArray(entry[field]) ? entry[field] : [];
      where += `, card ${Number(parts[3]) + 1}` + (cards[parts[3]] !== undefined ? ` (“${cards[parts[3]]}”)` : "");
    }
  } else if (field === "cards") {
    where = "The 13 cards" + (parts[3] !== undefined ? `, card ${Number(parts[3]) + 1}` : "");
  } else if (field === "id") where = "Player id";
  else if (field === "status") where = "Status";
  else if (field === "declare") where = "Declaration (BÁO)";
  else if (field) where = `Field “${field}”`;
  return { player: Number.isInteger(index) ? index : null, who, field, card: parts[3] !== undefined ? Number(parts[3]) : null, text: where };
}

function showProblem(problem, request) {
  $("result").hidden = true;
  $("problem").hidden = false;
  $("problem-heading").textContent = problem.status === 422 ? "The service refused this room" : (problem.title || "Something went wrong");
  $("problem-detail").textContent = problem.detail || "";
  const general = $("problem-general");
  general.replaceChildren();
  const errors = Array.isArray(problem.errors) ? problem.errors : [];
  const byPlayer = new Map();
  for (const error of errors) {
    const place = describePointer(error.pointer, request);
    if (place.player === null || !request || !Array.isArray(request.players) || !request.players[place.player]) {
      general.append(el("li", { text: `${place.text}: ${error.message}` }));
    } else {
      if (!byPlayer.has(place.player)) byPlayer.set(place.player, []);
      byPlayer.get(place.player).push({ ...place, message: error.message });
    }
  }
  const section = $("problem");
  section.querySelectorAll(".players").forEach((node) => node.remove());
  if (byPlayer.size) {
    const grid = el("div", { class: "players" });
    request.players.forEach((entry, index) => {
      if (!byPlayer.has(index)) return;
      grid.append(playerWithFaults(entry, index, byPlayer.get(index)));
    });
    section.append(grid);
  }
  $("problem-heading").focus();
}

function playerWithFaults(entry, index, faults) {
  const who = entry && typeof entry.id === "string" ? entry.id : `Player ${index + 1}`;
  const box = el("article", { class: "player", "data-player": String(index), "aria-label": `Player ${who}` });
  box.append(el("h4", {}, el("span", { text: who }), el("span", { class: "badge foul", text: `${faults.length} problem${faults.length === 1 ? "" : "s"}` })));
  for (const key of [...POSITIONS, "cards"]) {
    if (!entry || !Array.isArray(entry[key])) continue;
    const bad = new Set(faults.filter((f) => f.field === key && f.card !== null).map((f) => f.card));
    box.append(el("div", { class: "hand" },
      el("span", { class: "label", text: key === "cards" ? "Cards" : labelOf(key) }), cardsView(entry[key], bad)));
  }
  const list = el("ul", { class: "faults" });
  for (const fault of faults) list.append(el("li", { class: "fault", text: `${fault.text}: ${fault.message}` }));
  box.append(list);
  return box;
}

// ---- Result --------------------------------------------------------------------------------

function signed(n) { return n > 0 ? `+${n}` : `${n}`; }

function showResult(result) {
  state.result = result;
  state.step = 0;
  $("problem").hidden = true;
  $("result").hidden = false;
  const r = result.ruleset;
  $("result-meta").textContent = `Ruleset ${r.id} (version ${r.version}, ${r.digest.slice(0, 19)}…) · stake ${result.stake} per unit` +
    (result.round_id ? ` · round ${result.round_id}` : "");
  renderVariant(result.ruleset, state.request && state.request.ruleset);
  renderPlayers(result);
  renderStep();
  renderSummary(result);
  renderLedger(result);
  $("result-heading").focus();
}

function shown(value) {
  return value === null || value === undefined ? "—" : JSON.stringify(value);
}

function renderVariant(ruleset, sent) {
  const panel = $("variant");
  panel.hidden = !ruleset.base;
  if (!ruleset.base) return;
  const base = ruleset.base;
  $("variant-base").textContent = `Played under ${ruleset.id}, a variant of ${base.id} version ${base.version} ` +
    `(${base.digest.slice(0, 19)}…). ${ruleset.changes.length} value${ruleset.changes.length === 1 ? "" : "s"} changed; ` +
    "each ledger line below names the field it applied, as resolved.";
  const rows = ruleset.changes.map((change) => el("tr", { "data-field": change.field },
    el("th", { scope: "row", text: change.field }), el("td", { text: shown(change.base) }), el("td", { text: shown(change.value) })));
  $("variant-changes").tBodies[0].replaceChildren(...rows);
  $("variant-patch").textContent = sent && typeof sent === "object" ? JSON.stringify(sent.patch, null, 2) : "";
}

function renderPlayers(result) {
  const grid = $("players");
  grid.replaceChildren();
  for (const player of result.players) {
    const title = el("h4", {}, el("span", { text: player.id }));
    if (player.fouled) title.append(el("span", { class: "badge foul", text: `Fouled (lủng): ${FOUL_REASONS[player.foul_reason] || player.foul_reason}` }));
    if (player.instant_win) title.append(el("span", { class: "badge win", text: `Instant win: ${player.instant_win.name} · ${player.instant_win.name_en}` }));
    if (player.status !== "arranged") title.append(el("span", { class: "badge plain", text: player.status.replace("_", " ") }));
    title.append(el("span", { class: "badge plain", text: `${player.aces} ace${player.aces === 1 ? "" : "s"}` }));
    const box = el("article", { class: "player", "aria-label": `Player ${player.id}` }, title);
    if (player.hands) {
      for (const position of POSITIONS) {
        const hand = player.hands[position];
        box.append(el("div", { class: "hand", "data-position": position },
          el("span", { class: "label", text: labelOf(position) }), cardsView(hand.cards),
          el("span", { class: "name", text: `${hand.name} · ${hand.name_en}` })));
      }
    } else {
      box.append(el("p", { class: "help", text: "Cards given unarranged." }));
    }
    box.append(el("p", { class: "meta", text: `Net ${signed(player.units)} units (${signed(player.amount)})` }));
    grid.append(box);
  }
}

const STEPS = ["back", "middle", "front", "settlement"];

function handName(playerId, position) {
  const player = state.result.players.find((p) => p.id === playerId);
  if (!player || !player.hands) return "fouled";
  const hand = player.hands[position];
  return `${hand.name} (${hand.name_en})`;
}

function renderStep() {
  const step = STEPS[state.step];
  $("step-prev").disabled = state.step === 0;
  $("step-next").disabled = state.step === STEPS.length - 1;
  const body = $("step-body");
  body.replaceChildren();
  const result = state.result;
  if (step !== "settlement") {
    $("step-title").textContent = `Step ${state.step + 1} of ${STEPS.length}: ${labelOf(step)}`;
    const table = el("table", { id: `chi-${step}` },
      el("caption", { text: `Each pair at the ${POSITION_NAMES[step].toLowerCase()} hand` }),
      el("thead", {}, el("tr", {}, ...["Pair", "Winner", "Units", "Hands"].map((h) => el("th", { scope: "col", text: h })))));
    const rows = el("tbody");
    for (const pair of result.showdown) {
      const [a, b] = pair.players;
      const chi = pair.chi.find((c) => c.position === step);
      let winner = "";
      let units = "";
      let hands = `${a}: ${handName(a, step)} · ${b}: ${handName(b, step)}`;
      if (pair.settled_by === "instant_win") { winner = "settled by an instant win"; hands = "no chi compared"; }
      else if (pair.settled_by === "both_fouled") { winner = "both fouled: nothing passes"; }
      else if (pair.settled_by === "round_ended") { winner = "round ended by an instant win"; hands = "no chi compared"; }
      else if (chi) { winner = chi.winner ? chi.winner : "tie (chia gà)"; units = chi.units ? String(chi.units) : "0"; }
      rows.append(el("tr", {}, el("th", { scope: "row", text: `${a} – ${b}` }), el("td", { text: winner }),
        el("td", { class: "num", text: units }), el("td", { text: hands })));
    }
    table.append(rows);
    body.append(table);
    return;
  }
  $("step-title").textContent = `Step ${STEPS.length} of ${STEPS.length}: instant wins, scoops, fouls and aces`;
  const special = result.ledger.filter((line) => !["chi", "bonus"].includes(line.step));
  if (!special.length) {
    body.append(el("p", { text: "No instant win, scoop, foul penalty or ace payment in this room." }));
    return;
  }
  const list = el("ul", { id: "settlement-lines" });
  for (const line of special) {
    list.append(el("li", { "data-step": line.step },
      el("strong", { text: `${STEP_NAMES[line.step]}: ` }),
      `${line.payer} pays ${line.payee} ${line.units} unit${line.units === 1 ? "" : "s"} (${line.amount}) — ${line.explanation}`));
  }
  body.append(list);
}

function renderSummary(result) {
  const tbody = $("summary").querySelector("tbody");
  tbody.replaceChildren();
  for (const player of result.players) {
    const cls = player.units > 0 ? "num plus" : player.units < 0 ? "num minus" : "num";
    tbody.append(el("tr", { "data-player": player.id }, el("th", { scope: "row", text: player.id }),
      el("td", { class: cls, text: signed(player.units) }), el("td", { class: cls, text: signed(player.amount) })));
  }
  const payments = $("payments");
  payments.replaceChildren();
  for (const pair of result.showdown) {
    const [a, b] = pair.players;
    const net = pair.units[a];
    if (!net) continue;
    const [payer, payee, units] = net > 0 ? [b, a, net] : [a, b, -net];
    payments.append(el("li", { text: `${payer} pays ${payee} ${units} unit${units === 1 ? "" : "s"} (${units * result.stake})` }));
  }
  if (!payments.children.length) payments.append(el("li", { text: "Nobody pays anybody." }));
}

// Each step's section of the rules (/docs/rules, docs/rules.md); a line's own citation wins.
const STEP_SECTIONS = { instant_win: "4", chi: "5", bonus: "5", scoop: "6", foul: "6", ace: "7" };
const CITATION = /docs\/rules\.md §(\d+(?:\.\d+)?)/g;

function ruleLink(number) {
  return el("a", { href: `/docs/rules#s${number}`, text: `§${number}` });
}

// A text with every "docs/rules.md §N" in it turned into a link to that section.
function cited(text) {
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(CITATION)) {
    nodes.push(text.slice(last, match.index), "docs/rules.md ", ruleLink(match[1]));
    last = match.index + match[0].length;
  }
  nodes.push(text.slice(last));
  return nodes;
}

function ruleCell(line) {
  const code = el("code", {}, ...cited(line.rule));
  if (CITATION.test(line.rule)) { CITATION.lastIndex = 0; return el("td", {}, code); }
  CITATION.lastIndex = 0;
  const section = /scoop\.(sweep_multiplier|basis)|fouls\.fixed_units/.test(line.rule) ? "11.1" : STEP_SECTIONS[line.step];
  return el("td", {}, code, " ", ruleLink(section));
}

function renderLedger(result) {
  const tbody = $("ledger").querySelector("tbody");
  tbody.replaceChildren();
  for (const line of result.ledger) {
    tbody.append(el("tr", { "data-step": line.step },
      el("td", { class: "num", text: String(line.seq) }), el("td", { text: STEP_NAMES[line.step] }),
      el("td", { text: line.payer }), el("td", { text: line.payee }),
      el("td", { text: line.position ? labelOf(line.position) : "" }),
      el("td", { class: "num", text: String(line.units) }), el("td", { class: "num", text: String(line.amount) }),
      ruleCell(line), el("td", {}, ...cited(line.explanation))));
  }
}

// ---- Links, examples, files ----------------------------------------------------------------

function toBase64Url(text) {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  bytes.forEach((b) => { binary += String.fromCharCode(b); });
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text) {
  const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  const binary = atob(padded);
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

async function copyLink() {
  let compact;
  try { compact = JSON.stringify(JSON.parse($("room-input").value)); } catch { $("link-status").textContent = "Fix the JSON first."; return; }
  const link = `${location.origin}${location.pathname}#room=${toBase64Url(compact)}`;
  history.replaceState(null, "", link);
  try {
    await navigator.clipboard.writeText(link);
    $("link-status").textContent = "Link copied. The room travels in the link's fragment, never to a server.";
  } catch {
    $("link-status").textContent = "The address bar now holds the link to this room.";
  }
}

async function loadExamples() {
  try {
    const response = await fetch("/viewer/examples.json");
    const { examples } = await response.json();
    const select = $("examples");
    examples.forEach((example, index) => select.append(el("option", { value: String(index), text: example.name })));
    select.addEventListener("change", () => {
      const chosen = examples[Number(select.value)];
      if (!chosen || select.value === "") return;
      $("room-input").value = JSON.stringify(chosen.room, null, 2);
      score();
    });
  } catch {
    // Examples are a convenience; the viewer works without them.
  }
}

function fromFragment() {
  const match = location.hash.match(/^#room=([A-Za-z0-9_-]+)$/);
  if (!match) return false;
  try {
    $("room-input").value = JSON.stringify(JSON.parse(fromBase64Url(match[1])), null, 2);
    return true;
  } catch {
    showProblem({ title: "Bad link", detail: "The link does not carry a readable room." }, null);
    return false;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("room-form").addEventListener("submit", (event) => { event.preventDefault(); score(); });
  $("copy-link").addEventListener("click", copyLink);
  $("step-prev").addEventListener("click", () => { if (state.step > 0) { state.step -= 1; renderStep(); } });
  $("step-next").addEventListener("click", () => { if (state.step < STEPS.length - 1) { state.step += 1; renderStep(); } });
  $("room-file").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    if (file) { $("room-input").value = await file.text(); score(); }
  });
  loadExamples();
  if (fromFragment()) score();
});
