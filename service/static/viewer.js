// Mậu Binh showdown viewer: replays a scored room chi by chi, and checks a backend's settlement
// against it. No dependencies; everything it shows comes from this service: POST /v1/score and
// /v1/verify, GET /v1/rulesets/{id}, and its own words from GET /viewer/texts/{language}.json (the
// service's phrasebooks). Text from the room is only ever set as textContent, never as HTML.
"use strict";

const POSITIONS = ["back", "middle", "front"];
const SUITS = { S: ["♠", "black"], C: ["♣", "black"], D: ["♦", "red"], H: ["♥", "red"] };
const SYMBOL_SUITS = { "♠": "S", "♣": "C", "♦": "D", "♥": "H" };
const LANGUAGES = ["en", "vi"];
// The catalogue's keys for the service's machine values, written out so that every key is findable.
const KEYS = {
  position: { back: "viewer.position_back", middle: "viewer.position_middle", front: "viewer.position_front" },
  step: {
    instant_win: "viewer.step_instant_win", chi: "viewer.step_chi", bonus: "viewer.step_bonus", scoop: "viewer.step_scoop",
    foul: "viewer.step_foul", ace: "viewer.step_ace", unstated: "viewer.step_unstated",
  },
  foul: {
    left: "viewer.foul_left", timed_out: "viewer.foul_timed_out",
    front_beats_middle: "viewer.foul_front_beats_middle", middle_beats_back: "viewer.foul_middle_beats_back",
  },
  status: { timed_out: "viewer.status_timed_out", left: "viewer.status_left" },
  receiptCheck: {
    content_digest: "viewer.receipt_check_content_digest", signature: "viewer.receipt_check_signature",
    room_digest: "viewer.receipt_check_room_digest", rescore: "viewer.receipt_check_rescore",
  },
  receiptOutcome: {
    passed: "viewer.receipt_outcome_passed", failed: "viewer.receipt_outcome_failed",
    not_run: "viewer.receipt_outcome_not_run", not_known: "viewer.receipt_outcome_not_known",
  },
  rank: {
    2: "viewer.rank_2", 3: "viewer.rank_3", 4: "viewer.rank_4", 5: "viewer.rank_5", 6: "viewer.rank_6", 7: "viewer.rank_7",
    8: "viewer.rank_8", 9: "viewer.rank_9", T: "viewer.rank_10", J: "viewer.rank_j", Q: "viewer.rank_q", K: "viewer.rank_k", A: "viewer.rank_a",
  },
  suit: { S: "viewer.suit_s", C: "viewer.suit_c", D: "viewer.suit_d", H: "viewer.suit_h" },
  pairColumns: ["viewer.col_pair", "viewer.col_winner", "viewer.col_units", "viewer.col_hands"],
};
const ORDER_FOULS = { front_beats_middle: ["front", "middle"], middle_beats_back: ["middle", "back"] };
const STORED_LANGUAGE = "maubinh.viewer.language";

const state = { result: null, request: null, claim: null, verdict: null, receipt: null, labels: null, step: 0, language: "en", texts: {} };
const $ = (id) => document.getElementById(id);

// ---- Language ------------------------------------------------------------------------------

// The language the page was served in (the browser's Accept-Language), else the browser's first language
// this viewer speaks, unless the user chose one here before.
function preferredLanguage() {
  let stored = null;
  try { stored = localStorage.getItem(STORED_LANGUAGE); } catch { stored = null; }
  if (LANGUAGES.includes(stored)) return stored;
  const served = document.documentElement.lang; // the page came in the language Accept-Language asked
  if (served !== "en" && LANGUAGES.includes(served)) return served;
  for (const tag of navigator.languages || [navigator.language || "en"]) {
    const primary = String(tag).toLowerCase().split("-")[0];
    if (LANGUAGES.includes(primary)) return primary;
  }
  return "en";
}

// A text of the catalogue with its {fields} filled in; the key itself if the catalogue lacks it.
function t(key, fields = {}) {
  const template = state.texts[key];
  if (template === undefined) return key;
  return template.replace(/\{([a-z_]+)\}/g, (whole, name) => (name in fields ? String(fields[name]) : whole));
}

// Texts that take a number: the "_one" key for 1, in every language (Vietnamese has one form).
function counted(key, n, fields = {}) {
  return t(n === 1 ? `${key}_one` : key, { n, ...fields });
}

async function setLanguage(language) {
  const response = await fetch(`/viewer/texts/${language}.json`);
  state.texts = await response.json();
  state.language = language;
  document.documentElement.lang = language;
  document.title = t("viewer.title");
  $("language").value = language;
  for (const node of document.querySelectorAll("[data-text]")) node.textContent = t(node.dataset.text);
  fillExamples();
}

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
  const name = t(KEYS.position[position]);
  return label ? t("viewer.position_labelled", { position: name, label }) : name;
}

// A card as the service prints it ("TH"), or as a person may have written it ("10h", "A♠").
function cardView(text, bad = false) {
  const raw = String(text).replace(/[\uFE0E\uFE0F]$/u, ""); // a symbol's presentation selector (♥️) means nothing
  const suitChar = raw.slice(-1);
  const suit = SYMBOL_SUITS[suitChar] || suitChar.toUpperCase();
  let rank = raw.slice(0, -1).toUpperCase();
  if (rank === "10") rank = "T";
  const known = SUITS[suit] && /^[2-9TJQKA]$/.test(rank);
  if (!known) {
    return el("li", { class: "card bad", "aria-label": t("viewer.not_a_card", { text: raw }), text: raw || t("viewer.empty_card") });
  }
  const [symbol, colour] = SUITS[suit];
  const shown = (rank === "T" ? "10" : rank) + symbol;
  const name = t("viewer.card_name", { rank: t(KEYS.rank[rank]), suit: t(KEYS.suit[suit]) });
  return el("li", { class: `card ${colour}${bad ? " bad" : ""}`, "aria-label": bad ? t("viewer.card_with_problem", { card: name }) : name, text: shown });
}

function cardsView(cards, badIndexes = new Set()) {
  const list = el("ul", { class: "cards" });
  (Array.isArray(cards) ? cards : []).forEach((card, index) => list.append(cardView(card, badIndexes.has(index))));
  return list;
}

async function api(path, body) {
  const headers = { Accept: "application/json", "Accept-Language": state.language };
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

// The claim as the user gave it: {"amounts": …, "ledger"?: …}, or bare amounts by player id.
function claimOf(text) {
  const parsed = JSON.parse(text);
  if (parsed && typeof parsed === "object" && !Array.isArray(parsed) && "amounts" in parsed) return parsed;
  return { amounts: parsed };
}

function isReceipt(value) {
  return Boolean(value && typeof value === "object" && !Array.isArray(value) && "receipt" in value);
}

// Score the room, or, with a claim, verify it: one request, then the same rendering of the result.
async function run(withClaim) {
  let request;
  let claim = null;
  try {
    request = JSON.parse($("room-input").value);
  } catch (error) {
    showProblem({ title: t("viewer.not_json"), detail: t("viewer.not_json_detail", { error: error.message }) }, null);
    return;
  }
  if (withClaim) {
    try {
      claim = claimOf($("claim-input").value);
    } catch (error) {
      showProblem({ title: t("viewer.not_json"), detail: t("viewer.claim_not_json", { error: error.message }) }, null);
      return;
    }
    if (isReceipt(claim.amounts)) return checkReceipt(claim.amounts);
  }
  if (isReceipt(request)) return checkReceipt(request);
  state.receipt = null;
  renderReceipt(null);
  state.request = request;
  state.claim = claim;
  const body = JSON.stringify(claim && request && typeof request === "object" ? { ...request, claimed: claim } : request);
  for (const id of ["score", "verify"]) $(id).disabled = true;
  try {
    const { status, json } = await api(claim ? "/v1/verify" : "/v1/score", body);
    if (status === 200 && json) {
      const result = claim ? json.result : json;
      await labelsOfResult(result.ruleset);
      state.verdict = claim ? json : null;
      showResult(result);
    } else {
      await labelsOfRequest(request && request.ruleset);
      showProblem(json || { detail: t("viewer.answered", { status }) }, request);
    }
  } catch (error) {
    showProblem({ detail: t("viewer.unreachable", { error: error.message }) }, null);
  } finally {
    for (const id of ["score", "verify"]) $(id).disabled = false;
  }
}

const score = () => run(false);
const verify = () => run(true);

// ---- Receipts: the service checks one, then the signed answer it holds is shown as any answer ----

async function checkReceipt(receipt) {
  state.receipt = receipt;
  state.claim = null;
  state.verdict = null;
  for (const id of ["score", "verify"]) $(id).disabled = true;
  try {
    const { status, json } = await api("/v1/verify", JSON.stringify(receipt));
    if (status !== 200 || !json) {
      renderReceipt(null);
      showProblem(json || { detail: t("viewer.answered", { status }) }, receipt);
      return;
    }
    renderReceipt(json.receipt);
    let request = null;
    let answer = null;
    try {
      request = JSON.parse(receipt.request.body);
      answer = JSON.parse(receipt.response.body);
    } catch { /* the checks above say what is wrong with it */ }
    state.request = request;
    if (answer && receipt.response.status === 200 && receipt.request.path !== "/v1/score/batch") {
      const verifying = receipt.request.path === "/v1/verify";
      const result = verifying ? answer.result : answer;
      state.verdict = verifying ? answer : null;
      await labelsOfResult(result.ruleset);
      showResult(result);
    } else {
      $("result").hidden = true;
      if (answer && receipt.response.status === 422) showProblem(answer, request);
    }
    $("receipt-heading").focus();
  } catch (error) {
    showProblem({ detail: t("viewer.unreachable", { error: error.message }) }, null);
  } finally {
    for (const id of ["score", "verify"]) $(id).disabled = false;
  }
}

function renderReceipt(checked) {
  const panel = $("receipt");
  panel.hidden = !checked;
  if (!checked) return;
  panel.classList.toggle("agrees", checked.verified);
  panel.classList.toggle("disagrees", !checked.verified);
  $("receipt-heading").textContent = t(checked.verified ? "viewer.receipt_verified" : "viewer.receipt_not_verified");
  $("receipt-message").textContent = checked.message;
  $("receipt-checks").replaceChildren(...checked.checks.map((row) => el("li", { "data-outcome": row.outcome },
    el("strong", { text: `${t(KEYS.receiptCheck[row.check])} (${t(KEYS.receiptOutcome[row.outcome])}): ` }),
    row.message)));
}

// ---- Problems (422 and others) -------------------------------------------------------------

function describePointer(pointer, request) {
  const parts = pointer.split("/").slice(1).map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (parts[0] !== "players" || parts.length < 2) {
    const field = parts.length ? parts.join(" → ") : t("viewer.whole_room");
    return { player: null, text: field.charAt(0).toUpperCase() + field.slice(1) };
  }
  const index = Number(parts[1]);
  const players = (request && Array.isArray(request.players)) ? request.players : [];
  const entry = players[index];
  const who = entry && typeof entry === "object" && typeof entry.id === "string" ? entry.id : t("viewer.player_number", { n: index + 1 });
  const field = parts[2];
  const card = parts[3] !== undefined ? Number(parts[3]) + 1 : null;
  let where = t("viewer.this_player");
  if (POSITIONS.includes(field)) {
    const cards = entry && Array.isArray(entry[field]) ? entry[field] : [];
    const hand = labelOf(field);
    if (card === null) where = t("viewer.where_hand", { hand });
    else if (cards[parts[3]] !== undefined) where = t("viewer.where_hand_card_text", { hand, n: card, text: cards[parts[3]] });
    else where = t("viewer.where_hand_card", { hand, n: card });
  } else if (field === "cards") {
    where = card === null ? t("viewer.where_cards") : t("viewer.where_cards_card", { n: card });
  } else if (field === "id") where = t("viewer.where_id");
  else if (field === "status") where = t("viewer.where_status");
  else if (field === "declare") where = t("viewer.where_declare");
  else if (field) where = t("viewer.where_field", { field });
  return { player: Number.isInteger(index) ? index : null, who, field, card: parts[3] !== undefined ? Number(parts[3]) : null, text: where };
}

function showProblem(problem, request) {
  $("result").hidden = true;
  $("verdict").hidden = true;
  $("problem").hidden = false;
  $("problem-heading").textContent = problem.status === 422 ? t("viewer.refused") : (problem.title || t("viewer.went_wrong"));
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
  const who = entry && typeof entry.id === "string" ? entry.id : t("viewer.player_number", { n: index + 1 });
  const box = el("article", { class: "player", "data-player": String(index), "aria-label": t("viewer.player_named", { id: who }) });
  box.append(el("h4", {}, el("span", { text: who }), el("span", { class: "badge foul", text: counted("viewer.problems", faults.length) })));
  for (const key of [...POSITIONS, "cards"]) {
    if (!entry || !Array.isArray(entry[key])) continue;
    const bad = new Set(faults.filter((f) => f.field === key && f.card !== null).map((f) => f.card));
    box.append(el("div", { class: "hand" },
      el("span", { class: "label", text: key === "cards" ? t("viewer.cards") : labelOf(key) }), cardsView(entry[key], bad)));
  }
  const list = el("ul", { class: "faults" });
  for (const fault of faults) list.append(el("li", { class: "fault", text: `${fault.text}: ${fault.message}` }));
  box.append(list);
  return box;
}

// ---- Result --------------------------------------------------------------------------------

// Numbers as the reader's language writes them: 9,000 in English, 9.000 in Vietnamese (where a comma
// reads as a decimal point), with a real minus sign; signed ones with "+" before a gain.
function number(n, sign = false) {
  const locale = state.language === "vi" ? "vi-VN" : "en-US";
  return new Intl.NumberFormat(locale, { signDisplay: sign ? "exceptZero" : "auto" }).format(n).replace("-", "\u2212");
}
function signed(n) { return number(n, true); }

function showResult(result) {
  state.result = result;
  state.step = 0;
  $("problem").hidden = true;
  $("result").hidden = false;
  const r = result.ruleset;
  const meta = t("viewer.meta", { id: r.id, version: r.version, digest: `${r.digest.slice(0, 19)}…`, stake: number(result.stake) });
  $("result-meta").textContent = meta + (result.round_id ? t("viewer.meta_round", { round: result.round_id }) : "");
  renderVariant(result.ruleset, state.request && state.request.ruleset);
  renderPlayers(result);
  renderStep();
  renderSummary(result);
  renderLedger(result);
  renderVerdict(state.verdict);
  (state.verdict ? $("verdict-heading") : $("result-heading")).focus();
}

function shown(value) {
  return value === null || value === undefined ? "—" : JSON.stringify(value);
}

// What each house-rule knob decides, in the reader's language (docs/rules.md §11.1, §12.1).
const KNOB_TEXTS = {
  "scoop.basis": "viewer.knob_scoop_basis",
  "scoop.fixed_units": "viewer.knob_scoop_fixed_units",
  "scoop.sweep_multiplier": "viewer.knob_sweep_multiplier",
  "scoop.sweep_pays": "viewer.knob_sweep_pays",
  "bonuses.mode": "viewer.knob_bonus_mode",
  "fouls.fixed_units": "viewer.knob_fixed_foul",
  "fouls.both_fouled": "viewer.knob_both_fouled",
  "instant_wins.collision": "viewer.knob_collision",
  "instant_wins.settles_pair": "viewer.knob_settles_pair",
  "aces.mode": "viewer.knob_aces_mode",
  "aces.units_per_ace": "viewer.knob_units_per_ace",
  "aces.skip_when_instant_win": "viewer.knob_aces_skip",
};

function renderVariant(ruleset, sent) {
  const panel = $("variant");
  panel.hidden = !ruleset.base;
  if (!ruleset.base) return;
  const base = ruleset.base;
  $("variant-base").textContent = counted("viewer.variant_base", ruleset.changes.length, {
    id: ruleset.id, base: base.id, version: base.version, digest: `${base.digest.slice(0, 19)}…`,
  });
  const rows = ruleset.changes.map((change) => el("tr", { "data-field": change.field },
    el("th", { scope: "row" }, el("code", { text: change.field }),
      KNOB_TEXTS[change.field] ? el("span", { class: "knob", text: t(KNOB_TEXTS[change.field]) }) : null),
    el("td", { text: shown(change.base) }), el("td", { text: shown(change.value) })));
  $("variant-changes").tBodies[0].replaceChildren(...rows);
  $("variant-patch").textContent = sent && typeof sent === "object" ? JSON.stringify(sent.patch, null, 2) : "";
}

// A hand's or a pattern's name: Vietnamese always, and the English one beside it in English.
function bothNames(named) {
  return state.language === "vi" ? named.name : `${named.name} · ${named.name_en}`;
}

function renderPlayers(result) {
  const grid = $("players");
  grid.replaceChildren();
  for (const player of result.players) {
    const title = el("h4", {}, el("span", { text: player.id }));
    if (player.fouled) {
      const order = ORDER_FOULS[player.foul_reason];  // the two chi by this ruleset's own labels
      // Mid-sentence the labels are lower case, as the ledger says them ("chi giữa mạnh hơn chi cuối").
      const inSentence = (label) => (state.language === "vi" ? label.toLocaleLowerCase("vi") : label);
      const reason = t(KEYS.foul[player.foul_reason],
        order ? { stronger: inSentence(labelOf(order[0])), weaker: inSentence(labelOf(order[1])) } : {});
      title.append(el("span", { class: "badge foul", text: t("viewer.fouled", { reason }) }));
    }
    if (player.instant_win) title.append(el("span", { class: "badge win", text: t("viewer.instant_win", { name: bothNames(player.instant_win) }) }));
    if (player.status !== "arranged") title.append(el("span", { class: "badge plain", text: t(KEYS.status[player.status]) }));
    title.append(el("span", { class: "badge plain", text: player.aces ? counted("viewer.aces", player.aces) : t("viewer.aces_none") }));
    const box = el("article", { class: "player", "aria-label": t("viewer.player_named", { id: player.id }) }, title);
    if (player.hands) {
      for (const position of POSITIONS) {
        const hand = player.hands[position];
        box.append(el("div", { class: "hand", "data-position": position },
          el("span", { class: "label", text: labelOf(position) }), cardsView(hand.cards),
          el("span", { class: "name", text: bothNames(hand) })));
      }
    } else {
      box.append(el("p", { class: "help", text: t("viewer.unarranged") }));
    }
    box.append(el("p", { class: "meta", text: t("viewer.net", { units: signed(player.units), amount: signed(player.amount) }) }));
    grid.append(box);
  }
}

const STEPS = ["back", "middle", "front", "settlement"];

function handName(playerId, position) {
  const player = state.result.players.find((p) => p.id === playerId);
  if (!player || !player.hands) return t("viewer.hand_fouled");
  const hand = player.hands[position];
  return state.language === "vi" ? hand.name : `${hand.name} (${hand.name_en})`;
}

function renderStep() {
  const step = STEPS[state.step];
  $("step-prev").disabled = state.step === 0;
  $("step-next").disabled = state.step === STEPS.length - 1;
  const body = $("step-body");
  body.replaceChildren();
  const result = state.result;
  const of = { n: state.step + 1, total: STEPS.length };
  if (step !== "settlement") {
    $("step-title").textContent = t("viewer.step", { ...of, what: labelOf(step) });
    const table = el("table", { id: `chi-${step}` },
      el("caption", { text: t("viewer.pair_caption", { position: labelOf(step) }) }),
      el("thead", {}, el("tr", {}, ...KEYS.pairColumns.map((key) => el("th", { scope: "col", text: t(key) })))));
    const rows = el("tbody");
    for (const pair of result.showdown) {
      const [a, b] = pair.players;
      const chi = pair.chi.find((c) => c.position === step);
      let winner = "";
      let units = "";
      let hands = `${a}: ${handName(a, step)} · ${b}: ${handName(b, step)}`;
      if (pair.settled_by === "instant_win") { winner = t("viewer.by_instant_win"); hands = t("viewer.no_chi_compared"); }
      else if (pair.settled_by === "both_fouled") { winner = t("viewer.both_fouled"); }
      else if (pair.settled_by === "round_ended") { winner = t("viewer.round_ended"); hands = t("viewer.no_chi_compared"); }
      else if (chi) { winner = chi.winner ? chi.winner : t("viewer.tie"); units = chi.units ? String(chi.units) : "0"; }
      rows.append(el("tr", {}, el("th", { scope: "row", text: `${a} – ${b}` }), el("td", { text: winner }),
        el("td", { class: "num", text: units }), el("td", { text: hands })));
    }
    table.append(rows);
    body.append(table);
    return;
  }
  $("step-title").textContent = t("viewer.step", { ...of, what: t("viewer.settlement_step") });
  const special = result.ledger.filter((line) => !["chi", "bonus"].includes(line.step));
  if (!special.length) {
    body.append(el("p", { text: t("viewer.nothing_special") }));
    return;
  }
  const list = el("ul", { id: "settlement-lines" });
  for (const line of special) {
    list.append(el("li", { "data-step": line.step },
      el("strong", { text: `${t(KEYS.step[line.step])}: ` }),
      `${counted("viewer.pays", line.units, { payer: line.payer, payee: line.payee, amount: number(line.amount) })} — ${line.explanation}`));
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
    payments.append(el("li", { text: counted("viewer.pays", units, { payer, payee, amount: number(units * result.stake) }) }));
  }
  if (!payments.children.length) payments.append(el("li", { text: t("viewer.nobody_pays") }));
}

// ---- Verify: the backend's claim against the rules, in words a support agent can read out ---

function lineKey(payer, payee, step) { return `${payer}\u0000${payee}\u0000${step}`; }

function renderVerdict(verdict) {
  const panel = $("verdict");
  panel.hidden = !verdict;
  document.querySelectorAll("#ledger tr.differs").forEach((row) => row.classList.remove("differs"));
  if (!verdict) return;
  panel.classList.toggle("agrees", verdict.agrees);
  panel.classList.toggle("disagrees", !verdict.agrees);
  $("verdict-heading").textContent = t(verdict.agrees ? "viewer.verdict_agrees" : "viewer.verdict_disagrees");
  const rows = verdict.players.map((player) => {
    const differs = player.difference !== 0;
    const mark = differs ? el("span", { class: "badge foul", text: t("viewer.differs") }) : null;
    return el("tr", { "data-player": player.id, class: differs ? "differs" : "" },
      el("th", { scope: "row" }, player.id, " ", mark),
      el("td", { class: "num", text: signed(player.claimed) }), el("td", { class: "num", text: signed(player.computed) }),
      el("td", { class: differs ? "num minus" : "num", text: signed(player.difference) }));
  });
  $("verdict-players").tBodies[0].replaceChildren(...rows);
  const words = $("verdict-words");
  words.replaceChildren();
  for (const player of verdict.players.filter((p) => p.difference !== 0)) {
    // The service says it: who still owes whom first, then each step that differs.
    const [said, ...lines] = player.explanation || [];
    const steps = el("ul", { class: "explanation" }, ...lines.map((text) => el("li", { text })));
    words.append(el("div", { class: "verdict-player", "data-player": player.id }, el("p", { text: said }), steps));
  }
  const ledger = verdict.ledger;
  const list = $("verdict-line-list");
  list.replaceChildren();
  const flagged = new Set();
  if (ledger) {
    const step = (s) => t(KEYS.step[s || "unstated"]);
    for (const line of ledger.missing) {
      flagged.add(lineKey(line.payer, line.payee, line.step));
      list.append(el("li", { "data-kind": "missing", text: t("viewer.line_missing", { ...line, step: step(line.step), amount: number(line.computed) }) }));
    }
    for (const line of ledger.extra) {
      list.append(el("li", { "data-kind": "extra", text: t("viewer.line_extra", { ...line, step: step(line.step), amount: number(line.claimed) }) }));
    }
    for (const line of ledger.different) {
      flagged.add(lineKey(line.payer, line.payee, line.step));
      list.append(el("li", { "data-kind": "different", text: t("viewer.line_different", { ...line, step: step(line.step), computed: number(line.computed), claimed: number(line.claimed) }) }));
    }
  }
  $("verdict-lines").hidden = !list.children.length;
  const stepless = ledger && [...ledger.missing, ...ledger.different].some((line) => line.step === null);
  for (const row of document.querySelectorAll("#ledger tbody tr")) {
    const [payer, payee, lineStep] = [row.dataset.payer, row.dataset.payee, row.dataset.step];
    if (flagged.has(lineKey(payer, payee, stepless ? null : lineStep))) row.classList.add("differs");
  }
}

// Each step's section of the rules (/docs/rules, docs/rules.md); a line's own citation wins.
const STEP_SECTIONS = { instant_win: "4", chi: "5", bonus: "5", scoop: "6", foul: "6", ace: "7" };
// A line decided by a house-rule knob cites the knob's section instead of its step's.
const SECOND_FAMILY = /scoop\.(fixed_units|sweep_pays|sweep_multiplier\[)|fouls\.both_fouled|instant_wins\.(collision|settles_pair)|aces\.units_per_ace/;
const FIRST_FAMILY = /scoop\.(sweep_multiplier|basis)|fouls\.fixed_units/;
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

// What a line's rule is, in the reader's words, before its citation (the field path, which is the
// same in every language): the first pattern the rule matches names it.
const RULE_TEXTS = [
  [/^docs\/rules\.md §5/, "viewer.rule_chi"],
  [/^instant_wins\.table/, "viewer.rule_instant_win"],
  [/^bonuses\./, "viewer.rule_bonus"],
  [/^scoop\.sweep_pays/, "viewer.rule_sweep_pays"],
  [/^scoop\./, "viewer.rule_scoop"],
  [/^fouls\.fixed_units/, "viewer.rule_foul_fixed"],
  [/^fouls\./, "viewer.rule_foul"],
  [/^aces\.units_per_ace/, "viewer.rule_ace_balance"],
  [/^aces\./, "viewer.rule_aces"],
];

function ruleCell(line) {
  const found = RULE_TEXTS.find(([pattern]) => pattern.test(line.rule));
  // Another language's rule_text names each field in words before its path: shown as it is, alone.
  const worded = state.language !== "en" && line.rule_text;
  const said = found && !worded ? [el("span", { text: t(found[1]) }), " "] : [];
  const code = worded ? el("span", { class: "rule-text" }, ...cited(line.rule_text)) : el("code", {}, ...cited(line.rule));
  if (CITATION.test(line.rule)) { CITATION.lastIndex = 0; return el("td", {}, ...said, code); }
  CITATION.lastIndex = 0;
  const section = SECOND_FAMILY.test(line.rule) ? "12.1" : FIRST_FAMILY.test(line.rule) ? "11.1" : STEP_SECTIONS[line.step];
  return el("td", {}, ...said, code, " ", ruleLink(section));
}

function renderLedger(result) {
  const tbody = $("ledger").querySelector("tbody");
  tbody.replaceChildren();
  for (const line of result.ledger) {
    tbody.append(el("tr", { "data-step": line.step, "data-payer": line.payer, "data-payee": line.payee },
      el("td", { class: "num", text: String(line.seq) }), el("td", { text: t(KEYS.step[line.step]) }),
      el("td", { text: line.payer }), el("td", { text: line.payee }),
      el("td", { text: line.position ? labelOf(line.position) : "" }),
      el("td", { class: "num", text: String(line.units) }), el("td", { class: "num", text: number(line.amount) }),
      ruleCell(line), el("td", {}, ...cited(line.explanation))));
  }
  // An empty ledger is no answer to a player who asks: the service says why nobody pays.
  if (!result.ledger.length && result.explanation) {
    tbody.append(el("tr", { class: "nothing-paid" }, el("td", { colspan: "9", text: result.explanation })));
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

// The link carries the room, and the claim when there is one, in its fragment: never sent anywhere.
async function copyLink() {
  let compact;
  let claim = "";
  try { compact = JSON.stringify(JSON.parse($("room-input").value)); } catch { $("link-status").textContent = t("viewer.fix_json"); return; }
  if ($("claim-input").value.trim()) {
    try { claim = `&claim=${toBase64Url(JSON.stringify(JSON.parse($("claim-input").value)))}`; } catch { $("link-status").textContent = t("viewer.fix_claim"); return; }
  }
  const link = `${location.origin}${location.pathname}#room=${toBase64Url(compact)}${claim}`;
  history.replaceState(null, "", link);
  try {
    await navigator.clipboard.writeText(link);
    $("link-status").textContent = t("viewer.link_copied");
  } catch {
    $("link-status").textContent = t("viewer.link_in_address_bar");
  }
}

let examples = [];

function fillExamples() {
  const select = $("examples");
  const chosen = select.value;
  select.replaceChildren(el("option", { value: "", text: t("viewer.choose_example") }));
  examples.forEach((example, index) => select.append(el("option", { value: String(index), text: example[`name_${state.language}`] || example.name })));
  select.value = chosen;
}

async function loadExamples() {
  try {
    const response = await fetch("/viewer/examples.json");
    examples = (await response.json()).examples;
    fillExamples();
  } catch {
    // Examples are a convenience; the viewer works without them.
  }
}

function chooseExample() {
  const select = $("examples");
  const chosen = examples[Number(select.value)];
  if (!chosen || select.value === "") return;
  $("room-input").value = JSON.stringify(chosen.room, null, 2);
  $("claim-input").value = chosen.claimed ? JSON.stringify(chosen.claimed, null, 2) : "";
  $("claim-panel").open = Boolean(chosen.claimed);
  run(Boolean(chosen.claimed));
}

// Returns whether to verify (the link carried a claim), to score, or neither.
function fromFragment() {
  const match = location.hash.match(/^#room=([A-Za-z0-9_-]+)(?:&claim=([A-Za-z0-9_-]+))?$/);
  if (!match) return null;
  try {
    $("room-input").value = JSON.stringify(JSON.parse(fromBase64Url(match[1])), null, 2);
    if (match[2]) {
      $("claim-input").value = JSON.stringify(JSON.parse(fromBase64Url(match[2])), null, 2);
      $("claim-panel").open = true;
    }
    return Boolean(match[2]);
  } catch {
    showProblem({ title: t("viewer.bad_link"), detail: t("viewer.bad_link_detail") }, null);
    return null;
  }
}

async function readFile(input, target, then) {
  const file = input.files[0];
  if (file) { $(target).value = await file.text(); then(); }
}

document.addEventListener("DOMContentLoaded", async () => {
  $("room-form").addEventListener("submit", (event) => { event.preventDefault(); score(); });
  $("verify").addEventListener("click", verify);
  $("copy-link").addEventListener("click", copyLink);
  $("step-prev").addEventListener("click", () => { if (state.step > 0) { state.step -= 1; renderStep(); } });
  $("step-next").addEventListener("click", () => { if (state.step < STEPS.length - 1) { state.step += 1; renderStep(); } });
  $("room-file").addEventListener("change", (event) => readFile(event.target, "room-input", score));
  $("claim-file").addEventListener("change", (event) => {
    $("claim-panel").open = true;
    readFile(event.target, "claim-input", verify);
  });
  $("examples").addEventListener("change", chooseExample);
  $("language").addEventListener("change", async () => {
    const language = $("language").value;
    try { localStorage.setItem(STORED_LANGUAGE, language); } catch { /* private mode: not remembered */ }
    await setLanguage(language);
    if (state.receipt) checkReceipt(state.receipt);  // the service's own texts, again in this language
    else if (state.request) run(Boolean(state.claim));
  });
  await setLanguage(preferredLanguage());
  await loadExamples();
  const verifying = fromFragment();
  if (verifying !== null) run(verifying);
});
