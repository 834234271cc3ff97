// kbflow console: clicking a chunk outlines its region on the page, and the other way round.
"use strict";
function activate(id) {
  document.querySelectorAll(".active").forEach(function (el) { el.classList.remove("active"); });
  var rects = document.querySelectorAll('rect.region[data-chunk="' + CSS.escape(id) + '"]');
  rects.forEach(function (el) { el.classList.add("active"); });
  var item = document.getElementById("c-" + id);
  if (item) { item.classList.add("active"); }
  if (rects.length) {
    var figure = rects[0].closest("figure");
    var box = rects[0].getBoundingClientRect(), pane = document.getElementById("pages");
    if (figure && pane) { pane.scrollTop += box.top - pane.getBoundingClientRect().top - 40; }
  }
  return item;
}
document.addEventListener("click", function (event) {
  var rect = event.target.closest("rect.region");
  if (rect) {
    event.preventDefault();
    var item = activate(rect.dataset.chunk);
    if (item) { item.scrollIntoView({block: "center"}); }
    return;
  }
  var chunk = event.target.closest("li.chunk");
  if (chunk && !event.target.closest("a")) { activate(chunk.dataset.chunk); }
});
document.addEventListener("DOMContentLoaded", function () {
  if (location.hash.indexOf("#c-") === 0) { activate(location.hash.slice(3)); }
});
