// Auto-Comp solvability: one image, its captions as buttons; blind (progress only:
// `foilbench review solvability DIR --report` shows the accuracy).
"use strict";
const token = document.querySelector('meta[name="csrf-token"]').content;
let units = [];
let pos = 0;

function show(progress) {
  const u = units[pos];
  if (!u) return;
  document.getElementById("image").src = u.image;
  const list = document.getElementById("options");
  list.replaceChildren();
  u.options.forEach((text, i) => {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.textContent = text;
    if (u.pick === i) b.className = "picked";
    b.addEventListener("click", () => decide(i));
    li.appendChild(b);
    list.appendChild(li);
  });
  document.getElementById("pick").textContent = u.pick === null ? "pending" : `${u.pick + 1}`;
  document.getElementById("progress").textContent =
    `item ${pos + 1} of ${units.length}; decided ${progress.decided}`;
}

async function load() {
  const r = await fetch("/api/state");
  const s = await r.json();
  units = s.units;
  const next = units.findIndex((u) => u.pick === null);
  pos = next < 0 ? 0 : next;
  show(s.progress);
}

async function decide(choice) {
  const u = units[pos];
  const r = await fetch("/api/decide", {method: "POST", headers: {
    "Content-Type": "application/json", "X-CSRF-Token": token},
    body: JSON.stringify({key: u.key, choice: choice})});
  const s = await r.json();
  if (!r.ok) { alert(s.error); return; }
  u.pick = choice;
  if (pos < units.length - 1) pos += 1;
  show(s.progress);
}

async function refresh() {
  const r = await fetch("/api/state");
  show((await r.json()).progress);
}

document.addEventListener("keydown", (e) => {
  const u = units[pos];
  if (!u) return;
  const k = Number.parseInt(e.key, 10);
  if (k >= 1 && k <= 9 && k <= u.options.length) decide(k - 1);
  else if (e.key === "j" && pos < units.length - 1) { pos += 1; refresh(); }
  else if (e.key === "k" && pos > 0) { pos -= 1; refresh(); }
});

load();
