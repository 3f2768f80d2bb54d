/* Keeps a page's live parts fresh without reloading it: every element with `data-live="<id>"` is
   replaced by the same element of the page fetched again, every `data-live-seconds` (on <main>, default
   30) while the tab is visible. A failed fetch (Wi-Fi gone) keeps what is shown and says since when. */
(function () {
  "use strict";
  var holder = document.querySelector("[data-live-seconds]");
  if (!holder || !window.fetch || !window.DOMParser) return;
  var seconds = Math.max(10, parseInt(holder.getAttribute("data-live-seconds"), 10) || 30);
  var stamp = document.querySelector("[data-live-stamp]");

  function say(text) { if (stamp) stamp.textContent = text; }

  function refresh() {
    if (document.visibilityState !== "visible") return;
    fetch(window.location.href, { credentials: "same-origin", headers: { "X-Requested-With": "live-refresh" } })
      .then(function (response) {
        if (!response.ok) throw new Error(String(response.status));
        return response.text();
      })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        document.querySelectorAll("[data-live]").forEach(function (old) {
          var twin = fresh.querySelector('[data-live="' + old.getAttribute("data-live") + '"]');
          if (twin) old.replaceWith(document.importNode(twin, true));
        });
        say("Updated " + new Date().toLocaleTimeString());
      })
      .catch(function () { say("Not updated since " + new Date().toLocaleTimeString() + ": no connection"); });
  }

  window.setInterval(refresh, seconds * 1000);
  document.addEventListener("visibilitychange", refresh);
})();
