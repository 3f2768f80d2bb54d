/* What every floor page does: register the service worker (which keeps the floor pages and their
   static files for when the network drops), keep the status bar true (online or not, scans waiting on
   this tablet, problems to fix), send waiting scans as soon as it can, and, on a rack's or a device's
   worklist, keep that rack's data on the tablet so the scan page works there without the network. */
(function () {
  "use strict";

  var Queue = window.FloorQueue;
  var config = Queue.config;

  function registerServiceWorker() {
    if (!("serviceWorker" in navigator) || !config.serviceWorker) return;
    navigator.serviceWorker.register(config.serviceWorker, { scope: config.scope }).catch(function (error) {
      // Without it the pages still work online and scans still queue; only reloading offline fails.
      if (window.console) console.warn("Floor service worker not registered:", error);
    });
  }

  function setText(selector, value) {
    document.querySelectorAll(selector).forEach(function (node) { node.textContent = value; });
  }

  function showCounts(counts) {
    setText("[data-queue-count]", String(counts.waiting));
    setText("[data-queue-text]", (counts.waiting === 1 ? "scan" : "scans") + " waiting to be sent");
    setText("[data-problem-count]", String(counts.problems));
    document.querySelectorAll("[data-floor-status]").forEach(function (bar) {
      bar.classList.toggle("has-waiting", counts.waiting > 0);
      bar.classList.toggle("has-problems", counts.problems > 0);
      bar.dataset.waiting = String(counts.waiting);
      bar.dataset.problems = String(counts.problems);
    });
    document.querySelectorAll("[data-problems-link]").forEach(function (link) { link.hidden = !counts.problems; });
    document.querySelectorAll("[data-sign-in-needed]").forEach(function (node) { node.hidden = !counts.signIn; });
  }

  function showNetwork() {
    var online = navigator.onLine;
    setText("[data-net]", online ? "Online" : "Offline");
    document.querySelectorAll("[data-floor-status]").forEach(function (bar) {
      bar.classList.toggle("offline", !online);
    });
  }

  function refresh() { Queue.counts().then(showCounts); }

  /* Keep this rack's data on the tablet (the worklist pages of a rack and of its devices). */
  function keepRackData() {
    var rack = config.rack;
    var note = document.querySelector("[data-offline-rack]");
    if (!rack || !config.canScan) return;
    var url = config.rackData.replace("{id}", rack.id);
    var say = function (text, state) {
      if (!note) return;
      note.textContent = text;
      note.dataset.state = state;
    };
    var saved = function (row) {
      var when = new Date(row.saved_at);
      say("Rack " + rack.name + " is saved on this tablet for scanning offline (" +
          when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) + ").", "saved");
    };
    if (!navigator.onLine) {
      FloorStore.rack(config.project, rack.id).then(function (row) {
        if (row) saved(row); else say("Offline, and rack " + rack.name + " is not saved on this tablet yet.", "missing");
      });
      return;
    }
    say("Saving rack " + rack.name + " on this tablet for scanning offline…", "saving");
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      })
      .then(function (data) { return FloorStore.saveRack(config.project, data); })
      .then(function () { return FloorStore.rack(config.project, rack.id); })
      .then(saved)
      .catch(function () {
        FloorStore.rack(config.project, rack.id).then(function (row) {
          if (row) saved(row); else say("Rack " + rack.name + " could not be saved on this tablet.", "missing");
        });
      });
  }

  /* The device worklist's port row, from the data the page carries. */
  function drawDevicePortRow() {
    var holder = document.getElementById("port-row");
    var node = document.getElementById("port-row-data");
    if (!holder || !node || !window.FloorDraw) return;
    var data = JSON.parse(node.textContent);
    var ports = data.ports.map(function (row) {
      var port = {};
      data.fields.forEach(function (name, i) { port[name] = row[i]; });
      return port;
    });
    var draw = function () {
      FloorDraw.portRow(holder, ports, {
        label: "Ports of " + data.device.name,
        onTap: function (port, lanes) {
          var target = document.getElementById("port-" + port.id) ||
            lanes.map(function (l) { return document.getElementById("port-" + l.id); }).filter(Boolean)[0];
          if (target) { target.scrollIntoView({ block: "center" }); target.classList.add("flash"); }
        }
      });
    };
    draw();
    var width = holder.clientWidth;
    window.addEventListener("resize", function () {
      if (holder.clientWidth !== width) { width = holder.clientWidth; draw(); }
    });
  }

  /* A tablet passed to someone else: what the last person's pages and racks left on it goes (their scans
     still waiting stay, and are sent once they sign in again). */
  function forgetTheLastPerson() {
    var last = localStorage.getItem("floor-user");
    if (!config.user || last === config.user) return;
    localStorage.setItem("floor-user", config.user);
    if (!last) return;
    FloorStore.clear("racks").catch(function () {});
    if (window.caches) {
      caches.keys().then(function (names) {
        names.filter(function (n) { return n.indexOf("bringup-floor-") === 0; }).forEach(function (n) { caches.delete(n); });
      });
    }
  }

  window.addEventListener("floor:queue", function (event) { showCounts(event.detail); });
  window.addEventListener("online", showNetwork);
  window.addEventListener("offline", showNetwork);
  forgetTheLastPerson();
  showNetwork();
  refresh();
  registerServiceWorker();
  keepRackData();
  drawDevicePortRow();
  if (navigator.onLine) Queue.flush();
})();
