// foilbench review: keyboard-driven QC of a pair benchmark (CompoSET App. B.4, three phases).
// Every decision is POSTed and committed before the view moves on; text from the benchmark
// is inserted with textContent only.
// $, api, toast, pct and nextPendingIndex are common.js's (page.html loads it first).
"use strict";

const S = {config: null, summary: null, phase: "base", queue: [], pos: 0, unit: null,
           flagged: new Set(), busy: false};

function el(tag, attrs, ...kids) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v; else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined) continue;
    node.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return node;
}

const phaseDef = (key) => S.config.phases.find((p) => p.key === key);
const isPending = (u) => u.status === "pending";

// ---- header, stats --------------------------------------------------------------------

function renderHeader() {
  const nav = $("phases"); nav.replaceChildren();
  S.config.phases.forEach((p, i) => {
    const st = S.summary.phases[p.key];
    const done = st.accept + st.reject + st.invalidated + st.not_needed;
    const b = el("button", {type: "button", "data-phase": p.key,
                            class: p.key === S.phase ? "active" : "",
                            title: p.description + " (key " + p.key[0] + ")"},
                 `${i + 1} ${p.title}`, el("small", {}, `${done}/${st.units}`));
    b.onclick = () => switchPhase(p.key);
    nav.append(b);
  });
  const pr = S.summary.progress;
  $("progress-fill").style.width = (100 * pr.fraction).toFixed(1) + "%";
  $("progress-label").textContent = `${pr.done} / ${pr.total} decided`;
  $("b-undo").disabled = !S.summary.can_undo;
}

function renderStats() {
  const o = S.summary.overall, p2 = S.summary.phases.instance.discard;
  $("overall").replaceChildren(
    el("div", {}, el("span", {class: "big", id: "phase2-rate"}, pct(p2)),
       " instance review (phase 2)"),
    el("div", {class: "muted"}, `${p2.k} of ${p2.n} decided instances rejected · CompoSET 22.4%`),
    el("div", {}, "overall, final outcomes: ", el("b", {id: "overall-rate"}, pct(o.discard)),
       ` · kept ${o.kept} · discarded ${o.discarded} · pending ${o.pending}`));
  const body = $("by-edit").querySelector("tbody"); body.replaceChildren();
  for (const [et, s] of Object.entries(S.summary.by_edit_type)) {
    body.append(el("tr", {"data-edit": et}, el("td", {}, et),
      el("td", {class: "num"}, `${s.kept + s.discarded}/${s.instances}`),
      el("td", {class: "num"}, pct(s.instance_discard)),
      el("td", {class: "num"}, pct(s.overall_discard))));
  }
  const ph = S.summary.phases[S.phase];
  $("crit-phase").textContent = phaseDef(S.phase).title.toLowerCase();
  const cb = $("by-criterion").querySelector("tbody"); cb.replaceChildren();
  for (const c of phaseDef(S.phase).criteria) {
    const r = ph.by_criterion[c.key];
    cb.append(el("tr", {}, el("td", {}, c.short), el("td", {class: "num"}, `${r.k}/${r.n}`),
                   el("td", {class: "num"}, pct(r))));
  }
}

// ---- unit views -----------------------------------------------------------------------

function statusTag(status) { return el("span", {class: "status " + status}, status); }

function stack(layers, label) {
  const box = el("div", {class: "stack"});
  for (const [src, cls] of layers) {
    if (!src) continue;
    const img = el("img", {src, class: cls, alt: label + " " + cls});
    img.onload = () => { if (img.naturalWidth < 400) box.classList.add("pixelated"); };
    box.append(img);
  }
  return el("figure", {}, el("figcaption", {}, label), box);
}

function captionNode(segments, markKey) {
  const sep = markKey === "changed" ? " " : "";  // word-diff segments carry no spaces
  return el("span", {class: "cap"}, segments.map((s, i) =>
    [i ? sep : "", s[markKey] ? el("mark", {class: markKey === "phrase" ? "phrase" : ""},
                                    s.text) : s.text]));
}

function driftStats(d) {
  const parts = [el("span", {}, "pixels drifted (>10/255): ",
                       el("b", {}, (100 * d.changed_fraction).toFixed(2) + "%"))];
  if (d.outside_mask_pixels !== null) {
    const bad = d.outside_mask_pixels > 0;
    parts.push(" · outside the edit mask: ",
      el("b", {class: bad ? "warn" : ""}, `${d.outside_mask_pixels} px (` +
         (100 * d.outside_mask_fraction).toFixed(2) + "%)"),
      bad ? el("span", {class: "warn"}, " check criterion (ii)") : "");
  } else parts.push(" · no edit mask in this benchmark");
  if (d.foil_resized) parts.push(" · foil resized to the base size");
  return el("div", {class: "drift-stats"}, parts);
}

function autoChecks(checks, changed) {
  // the construction's automatic checks; one that did not run says "not checked"
  const names = Object.keys(checks || {});
  const parts = names.map((k, i) => [i ? " · " : "", k + ": ",
    el("b", {class: checks[k] === "not checked" ? "warn" : ""}, checks[k])]);
  if (changed) parts.push(el("span", {class: "warn"},
    " · changed since its last decision: review again"));
  return parts.length ? el("div", {class: "auto-checks"}, "automatic checks: ", parts) : "";
}

function renderBase(u) {
  return el("div", {class: "base-view"},
    u.images.map((src, i) => stack([[src, "img"]], u.images.length > 1 ?
                                     `base image ${i + 1}` : "base image")),
    el("div", {},
      el("p", {}, `${u.n_instances} instance(s) of this scene: `, u.edit_types.join(", ")),
      autoChecks({}, u.changed),
      el("p", {class: "lab"}, "Base caption(s) to check against the image:"),
      el("ul", {id: "scene-captions"}, u.captions.map((c) => el("li", {}, c)))));
}

function renderInstance(u) {
  const mask = u.mask_overlay;
  return el("div", {},
    el("div", {class: "panels"},
      stack([[u.base, "img"], [mask, "ov-mask"]], "base"),
      stack([[u.foil, "img"], [mask, "ov-mask"], [u.drift_overlay, "ov-drift-foil"]], "foil"),
      stack([[u.base, "img dim"], [u.drift_overlay, "ov-drift"], [u.mask_outline, "ov-mask"]],
            "drift |base − foil|")),
    driftStats(u.drift),
    autoChecks(u.checks, u.changed),
    el("div", {class: "captions"},
      el("span", {class: "lab"}, "base"), captionNode(u.caption_base, "changed"),
      el("span", {class: "lab"}, "foil"), captionNode(u.caption_foil, "changed")));
}

function check(ok) {
  if (ok === null) return el("span", {class: "muted"}, "reference");
  return ok ? el("span", {class: "ok"}, "✓ phrase kept") : el("span", {class: "bad"}, "✗ reworded");
}

function renderVerbosity(u) {
  const rows = u.tiers.map((t) => el("tr", {"data-tier": t.tier}, el("th", {}, t.tier),
    el("td", {}, captionNode(t.base, "phrase"), el("br"), check(t.base_kept)),
    el("td", {}, captionNode(t.foil, "phrase"), el("br"), check(t.foil_kept))));
  return el("div", {class: "verbosity-view"}, autoChecks({}, u.changed),
    el("div", {class: "panels"}, stack([[u.base, "img"]], "base"),
       stack([[u.foil, "img"]], "foil")),
    el("table", {class: "tiers"}, el("thead", {}, el("tr", {}, el("th", {}, "tier"),
       el("th", {}, "base caption"), el("th", {}, "foil caption"))), el("tbody", {}, rows)));
}

function renderUnit() {
  const box = $("unit"); box.replaceChildren();
  const total = S.queue.length;
  $("position").textContent = total ? `${S.pos + 1} / ${total}` : "0 / 0";
  if (!S.unit) {
    box.append(el("div", {class: "empty"}, total ? "loading…" :
      "No unit matches these filters in this phase."));
    renderDecision(); return;
  }
  const u = S.unit;
  const head = el("div", {class: "unit-head"},
    el("h2", {id: "unit-key"}, u.key), statusTag(u.status),
    u.edit_type ? el("span", {class: "tag"}, u.edit_type) : null,
    u.scene ? el("span", {class: "tag"}, "scene " + u.scene) : null,
    u.scene_status && u.scene_status !== "accept" ?
      el("span", {class: "tag"}, "base review: " + u.scene_status) : null);
  const view = {base: renderBase, instance: renderInstance, verbosity: renderVerbosity}[u.phase];
  box.append(head, view(u));
  box.classList.toggle("hide-mask", !$("t-mask").checked);
  box.classList.toggle("hide-drift", !$("t-drift").checked);
  renderDecision();
}

function renderDecision() {
  const p = phaseDef(S.phase);
  $("phase-help").textContent = p.description + " Mark each failed criterion, then reject.";
  const list = $("criteria"); list.replaceChildren();
  p.criteria.forEach((c, i) => {
    const failed = S.flagged.has(c.key);
    const li = el("li", {class: failed ? "failed" : "", "data-criterion": c.key},
      el("kbd", {}, String(i + 1)), el("span", {class: "box"}, failed ? "✗" : ""),
      el("span", {}, el("b", {}, c.short), " ", el("span", {class: "q"}, c.question)));
    li.onclick = () => guarded(async () => toggle(i));
    list.append(li);
  });
  const d = S.unit && S.unit.decision;
  $("current-decision").textContent = d ? `decided: ${d.verdict}` +
    (d.failed.length ? ` (${d.failed.join(", ")})` : "") + (d.note ? ` · “${d.note}”` : "") : "";
  const locked = !S.unit || ["invalidated", "waiting", "not_needed"].includes(S.unit.status);
  $("b-accept").disabled = $("b-reject").disabled = locked;
}

// ---- navigation -----------------------------------------------------------------------

async function loadQueue() {
  const q = new URLSearchParams({phase: S.phase, edit_type: $("f-edit").value,
                                 verdict: $("f-verdict").value});
  S.queue = (await api("/api/queue?" + q)).units;
}

async function show(pos) {
  S.pos = Math.max(0, Math.min(pos, S.queue.length - 1));
  S.unit = null;
  if (S.queue.length) {
    const key = S.queue[S.pos].key;
    const q = new URLSearchParams({phase: S.phase, key});
    const unit = await api("/api/unit?" + q);
    if (S.queue[S.pos] && S.queue[S.pos].key === key) S.unit = unit;
  }
  S.flagged = new Set(S.unit && S.unit.decision ? S.unit.decision.failed : []);
  $("note").value = S.unit && S.unit.decision ? S.unit.decision.note : "";
  renderUnit(); renderStats();
}

async function switchPhase(phase, key) {
  S.phase = phase; await loadQueue(); renderHeader();
  let pos = key ? S.queue.findIndex((u) => u.key === key) : nextPendingIndex(S.queue, 0, isPending);
  if (key && pos < 0) { $("f-verdict").value = ""; $("f-edit").value = ""; await loadQueue();
                        pos = S.queue.findIndex((u) => u.key === key); }
  await show(Math.max(pos, 0));
}

async function advance() {
  const key = S.unit ? S.unit.key : null;
  const oldPos = S.pos;
  await loadQueue();
  let at = S.queue.findIndex((u) => u.key === key);
  const start = at >= 0 ? at + 1 : oldPos;
  const next = nextPendingIndex(S.queue, start, isPending);
  if (next >= 0) return show(next);
  const later = S.config.phases.map((p) => p.key).filter((p) => S.summary.phases[p].pending > 0);
  if (later.length && later[0] !== S.phase) {
    toast(`${phaseDef(S.phase).title} done → ${phaseDef(later[0]).title}`);
    return switchPhase(later[0]);
  }
  toast(S.summary.resume ? "no pending unit under these filters" :
        "all reviewed: run `foilbench review export DIR --out OUT`");
  return show(at >= 0 ? at : oldPos);
}

// ---- actions --------------------------------------------------------------------------

// Every action goes through one queue, so keys pressed while a request is in flight apply
// in order to the unit on screen at their turn (none is dropped or applied to a stale unit).
let chain = Promise.resolve(), queued = 0;
function guarded(fn) {
  queued += 1; document.body.dataset.busy = "1";
  chain = chain.then(fn).catch((e) => toast("error: " + e.message)).finally(() => {
    queued -= 1; if (!queued) delete document.body.dataset.busy; });
  return chain;
}

function toggle(i) {
  const c = phaseDef(S.phase).criteria[i];
  if (!c || !S.unit) return;
  if (S.flagged.has(c.key)) S.flagged.delete(c.key); else S.flagged.add(c.key);
  renderDecision();
}

function decide(verdict) {
  return guarded(async () => {
    if (!S.unit || $("b-accept").disabled) return;
    if (verdict === "reject" && !S.flagged.size) {
      toast("mark the failed criteria first (keys 1–" + phaseDef(S.phase).criteria.length + ")");
      return;
    }
    const res = await api("/api/decide", {phase: S.phase, key: S.unit.key, verdict,
      failed: verdict === "reject" ? [...S.flagged] : [], note: $("note").value});
    S.summary = res.summary; renderHeader();
    await advance();
  });
}

function undo() {
  return guarded(async () => {
    const res = await api("/api/undo", {});
    S.summary = res.summary;
    if (!res.undone) { toast("nothing to undo"); renderHeader(); return; }
    toast(`undid ${res.undone.verdict} of ${res.undone.key}`);
    await switchPhase(res.undone.phase, res.undone.key);
  });
}

function step(delta) {
  return guarded(async () => { if (S.queue.length) await show((S.pos + delta + S.queue.length) %
                                                               S.queue.length); });
}

document.addEventListener("keydown", (e) => {
  const t = e.target;
  if (t && (t.tagName === "INPUT" && t.type === "text" || t.tagName === "SELECT")) {
    if (e.key === "Escape" || e.key === "Enter") t.blur();
    return;
  }
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const k = e.key;
  if (/^[1-9]$/.test(k)) guarded(async () => toggle(Number(k) - 1));
  else if (k === "a") decide("accept");
  else if (k === "r" || k === "x") decide("reject");
  else if (k === "u" || k === "z") undo();
  else if (k === "j" || k === "ArrowRight") step(1);
  else if (k === "k" || k === "ArrowLeft") step(-1);
  else if (k === "n") guarded(async () => { const i = nextPendingIndex(S.queue, S.pos + 1, isPending);
                                            if (i >= 0) await show(i); else toast("nothing pending here"); });
  else if (k === "b" || k === "i" || k === "v") {
    const p = {b: "base", i: "instance", v: "verbosity"}[k];
    guarded(() => switchPhase(p));
  }
  else if (k === "m") { $("t-mask").checked = !$("t-mask").checked; renderUnit(); }
  else if (k === "d") { $("t-drift").checked = !$("t-drift").checked; renderUnit(); }
  else if (k === "c") { $("note").focus(); }
  else return;
  e.preventDefault();
});

async function init() {
  S.config = await api("/api/config");
  S.summary = await api("/api/summary");
  $("bench").textContent = `${S.config.benchmark} · ${S.config.n_items} items`;
  for (const et of S.config.edit_types) $("f-edit").append(el("option", {value: et}, et));
  for (const id of ["f-edit", "f-verdict"]) $(id).onchange = () => guarded(async () => {
    await loadQueue(); await show(0); });
  $("t-mask").onchange = $("t-drift").onchange = renderUnit;
  $("b-accept").onclick = () => decide("accept");
  $("b-reject").onclick = () => decide("reject");
  $("b-undo").onclick = undo;
  $("b-prev").onclick = () => step(-1);
  $("b-next").onclick = () => step(1);
  const resume = S.summary.resume;
  await switchPhase(resume ? resume.phase : "base", resume ? resume.key : undefined);
  document.body.dataset.ready = "1";
}

init().catch((e) => toast("error: " + e.message));
