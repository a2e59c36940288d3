// Auto-Comp concept check: one image at a time, keyboard verdicts; blind to the validator
// (progress only, no agreement: `foilbench review concepts DIR --report` shows that).
// studyPage and $ are common.js's.
"use strict";

const VERDICT_KEYS = new Map([["m", "match"], ["x", "mismatch"], ["u", "unsure"]]);

const decideConcept = studyPage({
  noun: "image",
  pending: (u) => !u.verdict,
  show(u) {
    $("image").src = u.image;
    $("concept").textContent = u.concept;
    $("caption").textContent = u.caption;
    $("group").textContent = u.group;
    $("verdict").textContent = u.verdict || "pending";
  },
  answer: (key) => VERDICT_KEYS.get(key),
  fields: (verdict) => ({verdict}),
  record(u, verdict) { u.verdict = verdict; },
});

for (const verdict of VERDICT_KEYS.values()) {
  $(verdict).addEventListener("click", () => decideConcept(verdict));
}
