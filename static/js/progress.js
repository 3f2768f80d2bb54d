/* Polls the JSON status of a long-running row (an import, a check run, a report) and shows its progress.
 *
 * Markup:  <div data-progress-url="/…/status/" data-progress-reload>
 *            <progress data-progress-bar></progress>
 *            <span data-progress-status></span> <span data-progress-count></span>
 *          </div>
 * The endpoint (the one job status endpoint, /api/jobs/<type>/<id>/) answers {status, status_label, done,
 * total, percent, finished}. When `finished` is true polling
 * stops; with data-progress-reload the page reloads so the server renders the result.
 * Any other figure the endpoint sends is shown by an element <span data-progress-field="name"> inside
 * the box (e.g. percent, or a check run's failed count).
 * data-progress-interval sets the period in ms (default 1000). No dependencies.
 */
(function () {
  "use strict";
  // Every progress partial may bring this script; the boxes of a page are polled once.
  if (window.bringupProgressStarted) return;
  window.bringupProgressStarted = true;

  function render(box, state) {
    var bar = box.querySelector("[data-progress-bar]");
    var status = box.querySelector("[data-progress-status]");
    var count = box.querySelector("[data-progress-count]");
    if (bar) {
      bar.max = Math.max(state.total || 0, 1);
      bar.value = Math.min(state.done || 0, bar.max);
    }
    if (status) status.textContent = state.status_label || state.status || "";
    if (count) count.textContent = state.total ? state.done + " / " + state.total : "";
    // Figures a page shows beside the bar (a check run's verdict counts) sit inside the nearest
    // element marked data-progress-scope around the box, or inside the box itself.
    var scope = box.closest("[data-progress-scope]") || box;
    var fields = scope.querySelectorAll("[data-progress-field]");
    for (var i = 0; i < fields.length; i++) {
      var value = state[fields[i].getAttribute("data-progress-field")];
      if (value !== undefined && value !== null) fields[i].textContent = value;
    }
    box.setAttribute("data-progress-state", state.status || "");
  }

  function poll(box) {
    var url = box.getAttribute("data-progress-url");
    var interval = parseInt(box.getAttribute("data-progress-interval") || "1000", 10);
    var failures = 0;

    function tick() {
      fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
        .then(function (response) {
          if (!response.ok) throw new Error("HTTP " + response.status);
          return response.json();
        })
        .then(function (state) {
          failures = 0;
          render(box, state);
          if (state.finished) {
            if (box.hasAttribute("data-progress-reload")) window.location.reload();
            return;
          }
          window.setTimeout(tick, interval);
        })
        .catch(function () {
          failures += 1; // back off on errors, and give up after a while rather than hammer the server
          if (failures < 20) window.setTimeout(tick, interval * Math.min(failures + 1, 10));
        });
    }
    tick();
  }

  function start() {
    var boxes = document.querySelectorAll("[data-progress-url]");
    for (var i = 0; i < boxes.length; i++) poll(boxes[i]);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
