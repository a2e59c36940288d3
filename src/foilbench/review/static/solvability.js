// Auto-Comp solvability: one image, its captions as buttons; blind (progress only:
// `foilbench review solvability DIR --report` shows the accuracy).
// studyPage and $ are common.js's.
"use strict";

studyPage({
  noun: "item",
  pending: (u) => u.pick === null,
  show(u, decide) {
    $("image").src = u.image;
    const list = $("options");
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
    $("pick").textContent = u.pick === null ? "pending" : `${u.pick + 1}`;
  },
  answer(key, u) {
    const k = Number.parseInt(key, 10);
    return k >= 1 && k <= 9 && k <= u.options.length ? k - 1 : undefined;
  },
  fields: (choice) => ({choice}),
  record(u, choice) { u.pick = choice; },
});
