// What every foilbench review page shares; page.html loads it before the page's own script,
// which uses these names. Text from outside is inserted with textContent only.
"use strict";

const CSRF = document.querySelector('meta[name="csrf-token"]').content;
const $ = (id) => document.getElementById(id);

// GET `path`, or POST `body` as JSON with the CSRF token; the reply's JSON, or an Error
// carrying the server's sentence.
async function api(path, body) {
  const opts = body === undefined ? {} : {method: "POST", body: JSON.stringify(body),
    headers: {"Content-Type": "application/json", "X-CSRF-Token": CSRF}};
  const res = await fetch(path, opts);
  const data = await res.json().catch(() => ({error: res.statusText}));
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

function toast(msg) {
  const t = $("toast");
  t.textContent = msg; t.classList.add("show");
  clearTimeout(toast.timer); toast.timer = setTimeout(() => t.classList.remove("show"), 2200);
}

const pct = (r) => r && r.rate !== null ? (100 * r.rate).toFixed(1) + "%" : "–";

// The index of the first entry of `list` from `start` on, wrapping round, that `pending`
// accepts; -1 when none does.
function nextPendingIndex(list, start, pending) {
  const n = list.length;
  for (let k = 0; k < n; k++) {
    const i = (start + k) % n;
    if (pending(list[i])) return i;
  }
  return -1;
}

// POST `body` to `path` unless `state` is still waiting on an earlier one (`state.busy`: one
// answer at a time, so a key held down sends one), then `took(reply)`; a refusal is a toast.
async function postOnce(state, path, body, took) {
  if (state.busy) return;
  state.busy = true;
  try {
    took(await api(path, body));
  } catch (e) { toast(e.message); } finally { state.busy = false; }
}

// Undo the last standing answer, then `reload(reply, list)` with the page's list fetched
// again from `path` (the answers as the server now has them); a toast when none was left.
async function undoThenReload(path, reload) {
  try {
    const res = await api("/api/undo", {});
    if (!res.undone) { toast("nothing to undo"); return; }
    reload(res, await api(path));
  } catch (e) { toast(e.message); }
}

// A one-page study (Auto-Comp's concept check and solvability): the units from /api/state,
// one at a time, blind (the server sends progress only). `spec.noun` names a unit in the
// progress line; `spec.pending(u)` says it waits for an answer; `spec.show(u, decide)` draws
// it; `spec.answer(key, u)` maps a key to an answer (undefined: not an answer key);
// `spec.fields(answer)` is what the POST sends besides the key; `spec.record(u, answer)`
// keeps the answer once the server took it. j/k move to the next/previous unit.
function studyPage(spec) {
  let units = [];
  let pos = 0;

  function show(progress) {
    const u = units[pos];
    if (!u) return;
    spec.show(u, decide);
    $("progress").textContent =
      `${spec.noun} ${pos + 1} of ${units.length}; decided ${progress.decided}`;
  }

  async function decide(answer) {
    const u = units[pos];
    let s;
    try {
      s = await api("/api/decide", Object.assign({key: u.key}, spec.fields(answer)));
    } catch (e) { alert(e.message); return; }
    spec.record(u, answer);
    if (pos < units.length - 1) pos += 1;
    show(s.progress);
  }

  async function refresh() {
    show((await api("/api/state")).progress);
  }

  document.addEventListener("keydown", (e) => {
    const u = units[pos];
    if (!u) return;
    const answer = spec.answer(e.key, u);
    if (answer !== undefined) decide(answer);
    else if (e.key === "j" && pos < units.length - 1) { pos += 1; refresh(); }
    else if (e.key === "k" && pos > 0) { pos -= 1; refresh(); }
  });

  api("/api/state").then((s) => {
    units = s.units;
    const next = units.findIndex(spec.pending);
    pos = next < 0 ? 0 : next;
    show(s.progress);
  });
  return decide;
}
