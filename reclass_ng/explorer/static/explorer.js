// reclass-ng explorer: the little the pages need beyond HTML. Everything works without it
// (an origin link opens the key's history as a page); with it, the history opens beside the
// tree, and the origins of the values below a top-level mapping are filled in when it opens.
"use strict";

function showHistory(link) {
  const panel = document.getElementById("history");
  if (!panel) { return false; }
  const url = link.getAttribute("data-history");
  document.querySelectorAll("li.leaf.selected").forEach(li => li.classList.remove("selected"));
  link.closest("li.leaf").classList.add("selected");
  panel.setAttribute("aria-busy", "true");
  fetch(url + (url.includes("?") ? "&" : "?") + "fragment=1", {credentials: "same-origin"})
    .then(response => response.text())
    .then(text => { panel.innerHTML = text; panel.removeAttribute("aria-busy"); })
    .catch(error => { panel.textContent = "Could not load the history: " + error;
                      panel.removeAttribute("aria-busy"); });
  return true;
}

function loadOrigins(details) {
  const top = details.closest("details[data-origins]");
  if (!top || top.hasAttribute("data-loaded")) { return; }
  top.setAttribute("data-loaded", "");
  fetch(top.getAttribute("data-origins"), {credentials: "same-origin"})
    .then(response => response.json())
    .then(origins => {
      top.querySelectorAll("li.leaf").forEach(leaf => {
        const link = leaf.querySelector("a.origin");
        const text = origins[leaf.getAttribute("data-path")];
        if (link && text !== undefined) {
          link.textContent = text;
          link.classList.remove("pending");
        }
      });
    })
    .catch(() => top.removeAttribute("data-loaded"));
}

document.addEventListener("toggle", event => {
  if (event.target.open) { loadOrigins(event.target); }
}, true);  // toggle does not bubble: listen while it goes down

document.addEventListener("click", event => {
  const origin = event.target.closest("a.origin[data-history]");
  if (origin && showHistory(origin)) {
    event.preventDefault();
    return;
  }
  const control = event.target.closest("button[data-tree]");
  if (control) {
    const open = control.getAttribute("data-tree") === "expand";
    control.closest("section").querySelectorAll("details").forEach(d => { d.open = open; });
  }
});
