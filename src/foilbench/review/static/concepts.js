// Auto-Comp concept check: one image at a time, keyboard verdicts; blind to the validator
// (progress only, no agreement: `foilbench review concepts DIR --report` shows that).
"use strict";
const token = document.querySelector('meta[name="csrf-token"]').content;
let units = [];
let pos = 0;

function show(progress) {
  const u = units[pos];
  if (!u) return;
  document.getElementById("image").src = u.image;
  document.getElementById("concept").textContent = u.concept;
  document.getElementById("caption").textContent = u.caption;
  document.getElementById("group").textContent = u.group;
  document.getElementById("verdict").textContent = u.verdict || "pending";
  document.getElementById("progress").textContent =
    `image ${pos + 1} of ${units.length}; decided ${progress.decided}`;
}

async function load() {
  const r = await fetch("/api/state");
  const s = await r.json();
  units = s.units;
  const next = units.findIndex((u) => !u.verdict);
  pos = next < 0 ? 0 : next;
  show(s.progress);
}

async function decide(verdict) {
  const u = units[pos];
  const r = await fetch("/api/decide", {method: "POST", headers: {
    "Content-Type": "application/json", "X-CSRF-Token": token},
    body: JSON.stringify({key: u.key, verdict: verdict})});
  const s = await r.json();
  if (!r.ok) { alert(s.error); return; }
  u.verdict = verdict;
  if (pos < units.length - 1) pos += 1;
  show(s.progress);
}

document.getElementById("match").addEventListener("click", () => decide("match"));
document.getElementById("mismatch").addEventListener("click", () => decide("mismatch"));
document.getElementById("unsure").addEventListener("click", () => decide("unsure"));
document.addEventListener("keydown", (e) => {
  if (e.key === "m") decide("match");
  else if (e.key === "x") decide("mismatch");
  else if (e.key === "u") decide("unsure");
  else if (e.key === "j" && pos < units.length - 1) { pos += 1; load_show(); }
  else if (e.key === "k" && pos > 0) { pos -= 1; load_show(); }
});

async function load_show() {
  const r = await fetch("/api/state");
  show((await r.json()).progress);
}

load();
