// foilbench review, hard-negative comparison (SugarCrepe App. E.2): one pair at a time, two
// questions (keys 1/2/3 and 4/5/6); the pair is POSTed once both are answered. Text from the
// benchmarks is inserted with textContent only; the page never learns which side is which.
// $, api, toast, nextPendingIndex, postOnce and undoThenReload are common.js's (page.html loads it first).
"use strict";

const S = {pairs: [], questions: {}, pos: 0, draft: {}, busy: false};
const KEYS = {commonsense: ["1", "2", "3"], grammar: ["4", "5", "6"]};
const SIDES = ["left", "tie", "right"];
const LABELS = {left: "left better", tie: "tie", right: "right better"};

function renderProgress(p) {
  $("progress").textContent = `${p.decided} / ${p.pairs} pairs judged · ${p.pending} pending`;
}

function render() {
  const p = S.pairs[S.pos];
  if (!p) return;
  $("meta").textContent = `${S.pos + 1} of ${S.pairs.length} · ${p.family}`;
  $("shared").classList.toggle("hidden", p.positive === null);
  $("positive").textContent = p.positive || "";
  for (const side of ["left", "right"]) {
    $(side).textContent = p[side].negative;
    const pos = $(side + "-positive");
    pos.classList.toggle("hidden", p[side].positive === null);
    pos.textContent = p[side].positive || "";
  }
  const chosen = Object.assign({}, p.answers || {}, S.draft);
  for (const b of document.querySelectorAll(".answers button")) {
    b.classList.toggle("chosen", chosen[b.dataset.criterion] === b.dataset.side);
  }
  $("current").textContent = p.answers ? "judged" : "pending";
}

function move(step) {
  S.pos = Math.min(S.pairs.length - 1, Math.max(0, S.pos + step));
  S.draft = {}; render();
}

function nextPending() {
  const i = nextPendingIndex(S.pairs, S.pos + 1, (x) => !x.answers);
  if (i >= 0) S.pos = i;
  S.draft = {}; render();
}

async function answer(criterion, side) {
  if (S.busy) return;
  S.draft[criterion] = side;
  render();
  if (!S.draft.commonsense || !S.draft.grammar) return;
  const p = S.pairs[S.pos];
  await postOnce(S, "/api/decide", {pair: p.pair_id, commonsense: S.draft.commonsense,
                                    grammar: S.draft.grammar}, (res) => {
    p.answers = Object.assign({}, S.draft);
    renderProgress(res.progress);
    nextPending();
  });
}

function undo() {
  return undoThenReload("/api/pairs", (res, again) => {
    S.pairs.forEach((x, k) => { x.answers = again.pairs[k].answers; });
    const i = S.pairs.findIndex((x) => x.pair_id === res.undone);
    if (i >= 0) S.pos = i;
    S.draft = {}; renderProgress(res.progress); render();
  });
}

async function start() {
  const data = await api("/api/pairs");
  S.pairs = data.pairs; S.questions = data.questions;
  for (const [criterion, text] of Object.entries(data.questions)) {
    const q = document.createElement("p");
    q.className = "question"; q.textContent = text;
    const row = document.createElement("div");
    row.className = "answers";
    SIDES.forEach((side, k) => {
      const b = document.createElement("button");
      b.type = "button"; b.dataset.criterion = criterion; b.dataset.side = side;
      const key = document.createElement("kbd"); key.textContent = KEYS[criterion][k];
      b.append(key, " " + LABELS[side]);
      b.addEventListener("click", () => answer(criterion, side));
      row.append(b);
    });
    $("questions").append(q, row);
  }
  const first = S.pairs.findIndex((x) => !x.answers);
  S.pos = first < 0 ? 0 : first;
  renderProgress(await api("/api/progress"));
  render();
}

document.addEventListener("keydown", (ev) => {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  for (const [criterion, keys] of Object.entries(KEYS)) {
    const k = keys.indexOf(ev.key);
    if (k >= 0) { answer(criterion, SIDES[k]); return; }
  }
  if (ev.key === "u") undo();
  else if (ev.key === "j" || ev.key === "ArrowRight") move(1);
  else if (ev.key === "k" || ev.key === "ArrowLeft") move(-1);
  else if (ev.key === "n") nextPending();
});

start().catch((e) => toast(e.message));
