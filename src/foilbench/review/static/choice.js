// foilbench review, negative validation (SugarCrepe §4.1 Stage 2): one item at a time, the
// verdict keys 1/2/3; every verdict is POSTed and committed before the view moves on. Text
// from the benchmark is inserted with textContent only.
// $, api, toast, pct, nextPendingIndex, postOnce and undoThenReload are common.js's (page.html loads it first).
"use strict";

const S = {items: [], verdicts: [], pos: 0, busy: false};

function renderSummary(sum) {
  $("progress").textContent = `${sum.decided} / ${sum.n_items} judged · discard ${pct(sum.overall.discard)}`;
  const body = $("rates").querySelector("tbody");
  body.replaceChildren();
  for (const [type, e] of Object.entries(sum.by_edit_type)) {
    const tr = document.createElement("tr");
    for (const text of [type, `${e.discard.n} / ${e.n}`, pct(e.discard)]) {
      const td = document.createElement("td"); td.textContent = text; tr.append(td);
    }
    body.append(tr);
  }
}

function render() {
  const it = S.items[S.pos];
  if (!it) return;
  $("image").src = "/file?path=" + encodeURIComponent(it.image);
  $("meta").textContent = `${S.pos + 1} of ${S.items.length} · ${it.item_id} · ${it.edit_type}`;
  $("positive").textContent = it.positive;
  $("negative").textContent = it.negative;
  for (const b of $("verdicts").children) b.classList.toggle("chosen", b.dataset.verdict === it.verdict);
  const chosen = S.verdicts.find((v) => v.verdict === it.verdict);
  $("current").textContent = chosen ? `judged: ${chosen.label}` : "pending";
}

function move(step) {
  S.pos = Math.min(S.items.length - 1, Math.max(0, S.pos + step));
  render();
}

function nextPending() {
  const i = nextPendingIndex(S.items, S.pos + 1, (x) => !x.verdict);
  if (i >= 0) S.pos = i;
  render();
}

function decide(verdict) {
  const it = S.items[S.pos];
  return postOnce(S, "/api/decide", {item: it.item_id, verdict}, (res) => {
    it.verdict = verdict;
    renderSummary(res.summary);
    nextPending();
  });
}

function undo() {
  return undoThenReload("/api/items", (res, again) => {
    const i = S.items.findIndex((x) => x.item_id === res.undone.item);
    S.items.forEach((x, k) => { x.verdict = again.items[k].verdict; });
    if (i >= 0) S.pos = i;
    renderSummary(res.summary); render();
  });
}

async function start() {
  const data = await api("/api/items");
  S.items = data.items; S.verdicts = data.verdicts;
  $("bench").textContent = data.benchmark;
  for (const v of data.verdicts) {
    const b = document.createElement("button");
    b.type = "button"; b.dataset.verdict = v.verdict;
    const k = document.createElement("kbd"); k.textContent = v.key;
    b.append(k, " " + v.label);
    b.addEventListener("click", () => decide(v.verdict));
    $("verdicts").append(b);
  }
  const first = S.items.findIndex((x) => !x.verdict);
  S.pos = first < 0 ? 0 : first;
  renderSummary(await api("/api/summary"));
  render();
}

document.addEventListener("keydown", (ev) => {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const v = S.verdicts.find((x) => x.key === ev.key);
  if (v) decide(v.verdict);
  else if (ev.key === "u") undo();
  else if (ev.key === "j" || ev.key === "ArrowRight") move(1);
  else if (ev.key === "k" || ev.key === "ArrowLeft") move(-1);
  else if (ev.key === "n") nextPending();
});

start().catch((e) => toast(e.message));
