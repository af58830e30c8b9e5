// reclass-ng explorer: the little the pages need beyond HTML. Everything works without it
// (links lead to whole pages); with it, a key's history opens beside the tree.
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
