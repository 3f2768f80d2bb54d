/* The scan page: one scan field that keeps the focus, and the three flows behind it.

   Input. A handheld scanner is a keyboard that types the code very fast and usually ends with Enter
   (some end with Tab, some with nothing): Enter or Tab sends the code, and a burst of fast keys that
   simply stops is sent too. Typing by hand works the same way (type, then Enter or "Go"). The camera
   button reads one code from the camera (floor-camera.js). Whatever the input, the code goes to onCode.

   Flows. The first code of a flow is looked up (the scan API's "lookup" action; offline, in the racks
   saved on this tablet) and what it names starts the flow:
   - a device: racking. Its planned rack and U are shown, editable; "Racked here" sends a "rack" scan.
   - an optic: seating. Scan the port's code, or the device's (or pick it) and tap the port; an "optic"
     scan is sent with that port.
   - a cable, or one end of it: its ends on small rack elevations and the expected end's port row with
     its port lit. Scan the port's code or tap the port: a "cable_end" scan. Then the next end. Which end
     is next, and where, is the server's word: every answer about the cable carries its next step
     (`next`), and the page shows that and nothing older. When the last end is confirmed the server
     verifies the cable and the page says by whom and when.
   Every answer the server refuses is shown in large type, in the server's words. Writes made while the
   network is down are kept on the tablet (floor-queue.js) and shown as "saved, will be sent". */
(function () {
  "use strict";

  var Queue = window.FloorQueue;
  var Draw = window.FloorDraw;
  var config = Queue.config;
  var form = document.getElementById("scan-form");
  if (!form) return;  // a customer's page: no scanning
  var input = document.getElementById("scan-input");
  var flow = document.getElementById("flow");
  var banner = document.getElementById("flow-banner");
  var video = document.getElementById("camera");
  var cameraButton = document.getElementById("camera-button");
  var keyboardButton = document.getElementById("keyboard-toggle");

  var BURST_GAP_MS = 50;  // keys closer than this belong to one burst (a scanner types every few ms)
  var BURST_MIN_KEYS = 6;  // a shorter burst is a person's quick fingers, not a scanner
  var BURST_SETTLE_MS = 120;  // a burst that stops for this long without Enter is a whole code
  var PORT_CODE = /^[^\s:/]+(?::|\s+)[^\s:]+$/;  // device:port; a lane's port is ib0/0
  var END_TAG = /^[^\s]+?-U[0-9]{1,3}-[^\s]+$/;
  var END_CODE = /^([^/\s]+)\/([ABab])([1-9][0-9]{0,2})?$/;

  var state = { mode: "idle" };
  var busy = false;
  var rackCache = {};  // rack id -> its data (the rack data JSON), for this page's life
  var offlineIndex = null;

  // --- the scan field -----------------------------------------------------------------------------

  function focusScan() {
    if (document.activeElement === input) return;
    input.focus({ preventScroll: true });
  }

  function editing(node) {
    // Fields the technician edits on purpose (rack, U, device): they keep the focus until changed.
    return node && node !== input && (node.tagName === "SELECT" || (node.tagName === "INPUT" && node.type !== "button")
                                       || node.tagName === "TEXTAREA");
  }

  // Someone moving through the page with Tab (a keyboard, a screen reader) may leave the field on purpose;
  // otherwise the focus comes back to it whenever it goes nowhere in particular.
  var tabbing = false;
  document.addEventListener("pointerdown", function () { tabbing = false; }, true);
  function mayRefocus() {
    var active = document.activeElement;
    if (editing(active)) return false;
    return !tabbing || !active || active === document.body;
  }
  document.addEventListener("focusout", function () {
    setTimeout(function () { if (mayRefocus()) focusScan(); }, 0);
  });
  document.addEventListener("click", function (event) {
    if (!editing(event.target) && !(event.target.closest && event.target.closest("select"))) {
      setTimeout(function () { if (mayRefocus()) focusScan(); }, 0);
    }
  });
  document.addEventListener("visibilitychange", function () { if (!document.hidden) focusScan(); });
  flow.addEventListener("change", function (event) {
    if (editing(event.target)) setTimeout(focusScan, 0);
  });

  // Tapping a button or a port must not take the focus from the scan field (a scanner may fire right
  // after the tap): only the fields the technician edits on purpose take it.
  document.addEventListener("mousedown", function (event) {
    var target = event.target;
    if (!editing(target) && !(target.closest && target.closest("select, label, video"))) event.preventDefault();
  });
  // Keys that arrive while the focus is nowhere in particular (the page just redrew) belong to the scan
  // field: a scanner's first character is never lost.
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.key === "Tab") { tabbing = !(target === input && input.value.trim()); return; }
    if (target === input || editing(target) || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key.length === 1 && !(target.closest && target.closest("button, a, [role=button]") && event.key === " ")) {
      event.preventDefault();
      focusScan();
      input.value += event.key;
      input.dispatchEvent(new KeyboardEvent("keydown", { key: event.key }));
    } else if (event.key === "Enter" && input.value.trim()) {
      event.preventDefault();
      focusScan();
      send("key");
    }
  }, true);

  var burst = { first: 0, last: 0, keys: 0, timer: null };
  input.addEventListener("keydown", function (event) {
    if (event.key === "Enter" || (event.key === "Tab" && input.value.trim())) {
      event.preventDefault();
      send("key");
      return;
    }
    if (event.key.length !== 1) return;
    var now = performance.now();
    if (now - burst.last > BURST_GAP_MS) { burst.first = now; burst.keys = 0; }
    burst.keys += 1;
    burst.last = now;
    clearTimeout(burst.timer);
    burst.timer = setTimeout(function () {
      if (burst.keys >= BURST_MIN_KEYS && input.value.trim()) send("scanner");
    }, BURST_SETTLE_MS);
  });
  form.addEventListener("submit", function (event) { event.preventDefault(); send("button"); });

  function send(how) {
    clearTimeout(burst.timer);
    burst.keys = 0;
    var code = input.value.trim();
    input.value = "";
    if (!code) return;
    form.dataset.lastInput = how;
    onCode(code);
  }

  if (keyboardButton) {
    var applyKeyboard = function (on) {
      input.inputMode = on ? "text" : "none";
      keyboardButton.setAttribute("aria-pressed", on ? "true" : "false");
      keyboardButton.textContent = on ? "Hide keyboard" : "Show keyboard";
    };
    var keyboardOn = localStorage.getItem("floor-keyboard") !== "off";
    applyKeyboard(keyboardOn);
    keyboardButton.addEventListener("click", function () {
      keyboardOn = !keyboardOn;
      localStorage.setItem("floor-keyboard", keyboardOn ? "on" : "off");
      applyKeyboard(keyboardOn);
      input.blur();
      focusScan();
    });
  }

  var stopCamera = null;
  if (cameraButton) {
    cameraButton.addEventListener("click", function () {
      if (stopCamera) { stopCamera(); stopCamera = null; cameraButton.textContent = "Camera"; return; }
      cameraButton.textContent = "Stop camera";
      say("info", "Point the camera at the label", "QR code or bar code; hold it steady, about a hand's width away.");
      stopCamera = window.FloorCamera.start(video, function (code) {
        stopCamera = null;
        cameraButton.textContent = "Camera";
        form.dataset.lastInput = "camera";
        if (navigator.vibrate) navigator.vibrate(60);
        onCode(code);
      }, function (error) {
        stopCamera = null;
        cameraButton.textContent = "Camera";
        say("refused", "The camera is not available", error && error.message ? error.message : String(error));
      });
    });
  }

  // --- what the page says ----------------------------------------------------------------------------

  function h(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      var value = attrs[key];
      if (value === null || value === undefined || value === false) return;
      if (key === "text") node.textContent = value;
      else if (key === "onclick") node.addEventListener("click", value);
      else if (key === "className") node.className = value;
      else node.setAttribute(key, value === true ? "" : value);
    });
    (children || []).forEach(function (child) {
      if (child === null || child === undefined) return;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  /* The banner: the outcome of the last scan, in large type. kind: ok, refused, queued, info. */
  function say(kind, title, detail) {
    banner.className = "flow-banner " + kind;
    banner.dataset.result = kind;
    banner.textContent = "";
    banner.appendChild(h("p", { className: "banner-title", text: title }));
    if (detail) banner.appendChild(h("p", { className: "banner-detail", text: detail }));
    banner.hidden = false;
  }

  function clearBanner() { banner.hidden = true; banner.textContent = ""; banner.dataset.result = ""; }

  function step(text) {
    var node = document.getElementById("flow-step");
    if (node) node.textContent = text;
  }

  /* A time from the server in the tablet's local time ("3 Mar, 14:05"); "" when there is none. */
  function time(iso) {
    if (!iso) return "";
    var date = new Date(iso);
    if (isNaN(date.getTime())) return "";
    return date.toLocaleString([], { hour: "2-digit", minute: "2-digit", day: "numeric", month: "short" });
  }

  function idle() {
    state = { mode: "idle" };
    flow.textContent = "";
    flow.dataset.mode = "idle";
    step("Scan a device to rack it, an optic to seat it, or a cable label to confirm its ends.");
  }

  // --- talking to the server -------------------------------------------------------------------------

  function write(payload, where) {
    busy = true;
    flow.setAttribute("aria-busy", "true");
    return Queue.submit(payload, where).then(function (answer) {
      busy = false;
      flow.removeAttribute("aria-busy");
      return answer;
    }, function (error) {
      busy = false;
      flow.removeAttribute("aria-busy");
      throw error;
    });
  }

  function lookup(code) {
    if (!navigator.onLine) return offlineLookup(code);
    return write({ action: "lookup", code: code }).then(function (answer) {
      if (answer.offline) return offlineLookup(code);
      if (answer.status >= 300) return { result: "refused", reason: Queue.detailOf(answer.body), status: answer.status };
      return answer.body;
    });
  }

  function refusedText(answer) {
    return (answer.body && (answer.body.reason || Queue.detailOf(answer.body))) || "Refused (" + answer.status + ").";
  }

  // --- rack data (online: fetched once per page and kept; offline: what the tablet saved) ----------------

  function rackByName(name) {
    return (config.racks || []).filter(function (r) { return r.name === name; })[0] || null;
  }

  function loadRack(id) {
    if (!id) return Promise.resolve(null);
    if (rackCache[id]) return Promise.resolve(rackCache[id]);
    var fromTablet = function () {
      return FloorStore.rack(config.project, id).then(function (row) {
        return row && row.data.version === config.rackDataVersion ? (rackCache[id] = row.data) : null;
      }).catch(function () { return null; });
    };
    if (!navigator.onLine) return fromTablet();
    return fetch(config.rackData.replace("{id}", id), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      })
      .then(function (data) {
        rackCache[id] = data;
        offlineIndex = null;
        FloorStore.saveRack(config.project, data).catch(function () {});
        return data;
      })
      .catch(fromTablet);
  }

  function portsOf(data, deviceId) {
    if (!data) return [];
    var fields = data.port_fields;
    return data.ports.filter(function (row) { return row[fields.length - 1] === deviceId; }).map(function (row) {
      var port = {};
      fields.forEach(function (name, i) { port[name] = row[i]; });
      return port;
    });
  }

  /* What an accepted scan changed, on this page's copies of the racks: the port rows it draws next show
     the end confirmed and the optic in its cage without fetching the rack again. */
  function patchRacks(body) {
    Object.keys(rackCache).forEach(function (id) {
      var data = rackCache[id];
      var f = data.port_fields;
      var at = function (name) { return f.indexOf(name); };
      data.ports.forEach(function (row) {
        if (body.cable) {
          body.cable.ends.forEach(function (end) {
            if (row[at("end")] === end.id) {
              row[at("confirmed")] = !!end.confirmed_at;
              row[at("status")] = body.cable.status;
            }
          });
        }
        if (body.optic && body.optic.port_id === row[at("id")]) row[at("optic")] = body.optic.serial;
      });
    });
  }

  function deviceIn(data, deviceId) {
    return data ? data.devices.filter(function (d) { return d.id === deviceId; })[0] || null : null;
  }

  // --- offline lookups, in the racks saved on this tablet ----------------------------------------------

  function buildIndex() {
    if (offlineIndex) return Promise.resolve(offlineIndex);
    return FloorStore.racks(config.project).then(function (rows) {
      var index = { devices: {}, cables: {}, ends: {}, ports: {}, portById: {}, deviceById: {}, rackOf: {} };
      rows.forEach(function (row) {
        var data = row.data;
        rackCache[data.rack.id] = rackCache[data.rack.id] || data;
        data.devices.forEach(function (d) {
          index.deviceById[d.id] = d;
          index.rackOf[d.id] = data.rack;
          [d.serial, d.asset_tag, d.name].forEach(function (code) {
            if (code) index.devices[code.toLowerCase()] = d;
          });
        });
        var fields = data.port_fields;
        data.ports.forEach(function (r) {
          var port = {};
          fields.forEach(function (name, i) { port[name] = r[i]; });
          var device = index.deviceById[port.device];
          index.portById[port.id] = port;
          if (device) {
            index.ports[(device.name + ":" + port.name).toLowerCase()] = port;
            if (device.top_u) index.ports[(data.rack.name + "-U" + pad(device.top_u) + "-" + device.name + "-" + port.name).toLowerCase()] = port;
          }
        });
        data.cables.forEach(function (cable) {
          index.cables[cable.label.toLowerCase()] = cable;
          cable.ends.forEach(function (end) { index.ends[end.code.toLowerCase()] = { cable: cable, end: end }; });
        });
      });
      offlineIndex = index;
      return index;
    });
  }

  function pad(n) { return n < 10 ? "0" + n : String(n); }

  function offlineLookup(code) {
    return buildIndex().then(function (index) {
      var key = code.trim().toLowerCase().replace(/\s+/, ":");
      var answer = { offline: true, result: "found", reason: "", device: null, optic: null, port: null, cable: null };
      var end = index.ends[code.trim().toLowerCase()];
      if (end) { answer.cable = end.cable; answer.matches = [{ kind: "cable_end" }]; return answer; }
      var cable = index.cables[code.trim().toLowerCase()];
      if (cable) { answer.cable = cable; answer.matches = [{ kind: "cable" }]; return answer; }
      var port = index.ports[key] || index.ports[code.trim().toLowerCase()];
      if (port) {
        var device = index.deviceById[port.device];
        answer.port = { id: port.id, name: port.name, device: device ? device.name : "", device_id: port.device,
                        code: (device ? device.name + ":" : "") + port.name };
        answer.matches = [{ kind: "port" }];
        return answer;
      }
      var found = index.devices[code.trim().toLowerCase()];
      if (found) { answer.device = found; answer.matches = [{ kind: "device" }]; return answer; }
      answer.result = "unknown";
      answer.reason = "Not in the racks saved on this tablet. Online, the server knows every code of the project.";
      return answer;
    }).catch(function () {
      return { offline: true, result: "unknown", reason: "Nothing is saved on this tablet yet." };
    });
  }

  // --- the first code of a flow ----------------------------------------------------------------------

  /* Codes are handled one after the other, in the order they were read: a scanner fired twice in a row
     (the device, then its port) never loses the second code to the first one's round trip. */
  var pending = Promise.resolve();
  function onCode(code) {
    pending = pending.then(function () { return handle(code); }).catch(function (error) {
      say("refused", "That did not work", String(error && error.message || error));
    });
    return pending;
  }

  function handle(code) {
    var endCode = END_CODE.exec(code);
    var portLike = PORT_CODE.test(code) || END_TAG.test(code);
    if (state.mode === "cable" && !endCode && portLike) return confirmEnd({ port_code: code });
    if (state.mode === "optic" && portLike) return seatOptic({ port_code: code });
    if (state.mode === "rack" && state.code && code.toLowerCase() === state.code.toLowerCase()) return confirmRack();
    clearBanner();
    return lookup(code).then(function (answer) { return route(code, answer); });
  }

  /* What the code named first (the server lists the most specific match first). */
  function kindOf(answer) {
    var first = answer.matches && answer.matches[0];
    if (first && first.kind) return first.kind === "cable_end" ? "cable" : first.kind;
    if (answer.cable) return "cable";
    if (answer.optic) return "optic";
    if (answer.port) return "port";
    if (answer.device) return "device";
    return null;
  }

  function route(code, answer) {
    var kind = kindOf(answer);
    var inFlow = state.mode === "cable" || state.mode === "optic";
    if (kind === "cable" && answer.cable) { startCable(code, answer); return; }
    if (kind === "optic" && answer.optic) { startOptic(code, answer.optic); return; }
    if (kind === "port" && answer.port && inFlow) {
      return state.mode === "cable" ? confirmEnd({ port: answer.port.id, port_code: code })
                                    : seatOptic({ port: answer.port.id, port_code: code });
    }
    if (kind === "device" && answer.device && inFlow) return pickOn(answer.device);
    if (kind === "device" && answer.device) { startRack(code, answer.device, answer.offline); return; }
    if (kind === "port" && answer.port) {
      say("info", "That is port " + (answer.port.code || answer.port.name),
          "Scan a cable label, a device or an optic first; then this port.");
      return;
    }
    if (answer.offline && answer.result === "unknown") {
      offerOfflineOptic(code, answer.reason);
      return;
    }
    say("refused", answer.reason || ("Nothing in " + config.project + " is called " + code + "."),
        "Check the label, or type the code.");
  }

  // --- racking -------------------------------------------------------------------------------------

  function startRack(code, device, offline) {
    state = { mode: "rack", code: code, device: device };
    flow.dataset.mode = "rack";
    flow.textContent = "";
    var planned = device.rack ? (typeof device.rack === "object" ? device.rack.name : device.rack) : "";
    var rackSelect = h("select", { id: "rack-choice", name: "rack" }, [h("option", { value: "", text: "Choose the rack" })]
      .concat((config.racks || []).map(function (r) {
        return h("option", { value: r.name, selected: r.name === planned, text: r.name });
      })));
    var unitInput = h("input", { id: "unit-choice", name: "position_u", type: "number", min: "1", max: "60",
                                 inputmode: "numeric", value: device.position_u || "" });
    var status = device.status ? " · " + statusLabel(device.status) : "";
    var picture = h("div", { className: "flow-picture", id: "rack-picture" });
    var card = h("section", { className: "flow-card", "data-flow": "rack" }, [
      h("h2", { text: "Rack " + device.name }),
      h("p", { className: "flow-facts", text: [device.serial ? "serial " + device.serial : "",
        device.asset_tag ? "asset " + device.asset_tag : ""].filter(Boolean).join(" · ") + status }),
      h("p", { className: "flow-plan", text: planned ? "Planned: rack " + planned + ", U" + device.position_u
                                                       : "No planned place: choose the rack and U." }),
      h("div", { className: "flow-place" }, [
        h("label", { "for": "rack-choice" }, ["Rack", rackSelect]),
        h("label", { "for": "unit-choice" }, ["U (lowest unit)", unitInput])
      ]),
      picture,
      h("div", { className: "flow-actions" }, [
        h("button", { type: "button", id: "confirm-rack", className: "big ok", text: "Racked here", onclick: confirmRack }),
        h("button", { type: "button", className: "big secondary", text: "Cancel", onclick: function () { clearBanner(); idle(); } })
      ])
    ]);
    flow.appendChild(card);
    var redraw = function () { drawRackPicture(picture, rackSelect.value, parseInt(unitInput.value, 10), device); };
    rackSelect.addEventListener("change", redraw);
    unitInput.addEventListener("input", redraw);
    unitInput.addEventListener("keydown", function (event) {
      if (event.key === "Enter") { event.preventDefault(); confirmRack(); }
    });
    redraw();
    step(device.racked || isRacked(device.status)
      ? device.name + " is already racked. Confirm where it stands, or scan the next code."
      : "Check the rack and U, then tap “Racked here” (or scan the device again).");
    if (offline) say("info", "Offline", "From the rack saved on this tablet; your confirmation will be sent when the network returns.");
  }

  function isRacked(status) { return status === "racked" || status === "powered" || status === "ready"; }

  function statusLabel(status) { return status.charAt(0).toUpperCase() + status.slice(1); }

  function drawRackPicture(holder, rackName, unit, device) {
    var rack = rackByName(rackName);
    holder.textContent = "";
    if (!rack) return;
    var height = device.height_u || (device.top_u && device.position_u ? device.top_u - device.position_u + 1 : 1);
    loadRack(rack.id).then(function (data) {
      var others = data ? data.devices.filter(function (d) { return d.id !== device.id; }) : [];
      var here = unit ? { id: device.id, name: device.name, position_u: unit, top_u: unit + height - 1 } : null;
      Draw.elevation(holder, { name: rack.name, height_u: rack.height_u }, here ? others.concat([here]) : others,
                     { lit: device.id, litName: device.name + (unit ? " U" + unit : "") });
    });
  }

  function confirmRack() {
    if (state.mode !== "rack" || busy) return Promise.resolve();
    var rack = document.getElementById("rack-choice").value;
    var unit = parseInt(document.getElementById("unit-choice").value, 10);
    if (!rack || !unit) { say("refused", "Choose the rack and the U first."); return Promise.resolve(); }
    var payload = { action: "rack", code: state.code, rack: rack, position_u: unit };
    var device = state.device;
    return write(payload, rack + " U" + unit).then(function (answer) {
      if (answer.queued) {
        say("queued", device.name + ": saved on this tablet", "Racked in " + rack + " U" + unit +
            " will be sent when the network returns.");
        afterWrite();
        return;
      }
      var body = answer.body || {};
      if (answer.status < 300 && body.result === "accepted") {
        say("ok", body.reason || (device.name + " racked in " + rack + " U" + unit + "."));
        afterWrite();
      } else {
        say(body.result === "conflict" ? "conflict" : "refused", refusedText(answer), "Nothing was changed.");
      }
    });
  }

  function afterWrite() {
    idle();
  }

  // --- optics ----------------------------------------------------------------------------------------

  function startOptic(code, optic) {
    state = { mode: "optic", code: code, optic: optic, pick: null };
    flow.dataset.mode = "optic";
    flow.textContent = "";
    var where = optic.port ? (typeof optic.port === "object" ? (optic.port.device ? optic.port.device + " " : "") + optic.port.name : optic.port) : "";
    flow.appendChild(h("section", { className: "flow-card", "data-flow": "optic" }, [
      h("h2", { text: "Seat optic " + (optic.serial || code) }),
      h("p", { className: "flow-facts", text: [optic.part_number, optic.status ? statusLabel(String(optic.status).replace("_", " ")) : "",
        where ? "now in " + where : ""].filter(Boolean).join(" · ") }),
      devicePicker(),
      h("div", { className: "flow-picture", id: "optic-ports" }),
      h("div", { className: "flow-actions" }, [
        h("button", { type: "button", className: "big secondary", text: "Cancel", onclick: function () { clearBanner(); idle(); } })
      ])
    ]));
    step("Scan the port's label, or the device's label and tap the port.");
    var start = config.context_device || null;
    if (start) pickOn({ id: start });
  }

  function devicePicker() {
    var rackId = config.context_rack;
    var select = h("select", { id: "device-choice" }, [h("option", { value: "", text: "…or choose the device" })]);
    var label = h("label", { "for": "device-choice", className: "flow-device" }, ["Device", select]);
    var fill = function (data) {
      if (!data) return;
      data.devices.forEach(function (d) {
        select.appendChild(h("option", { value: String(d.id), text: d.name + " (U" + d.position_u + ")" }));
      });
    };
    if (rackId) loadRack(rackId).then(fill);
    select.addEventListener("change", function () {
      if (select.value) pickOn({ id: parseInt(select.value, 10) });
    });
    return label;
  }

  /* Show a device's port row to tap (optic flow: where the optic goes; cable flow: where this end is). */
  function pickOn(device) {
    var rack = device.rack ? rackByName(typeof device.rack === "object" ? device.rack.name : device.rack) : null;
    var rackId = rack ? rack.id : (config.context_rack || null);
    var find = rackId ? loadRack(rackId) : Promise.resolve(null);
    return find.then(function (data) {
      var known = deviceIn(data, device.id);
      if (!known) {
        return buildIndex().then(function (index) {
          var other = index.rackOf[device.id];
          return other ? loadRack(other.id) : null;
        });
      }
      return data;
    }).then(function (data) {
      var known = deviceIn(data, device.id) || device;
      var ports = portsOf(data, device.id);
      if (state.mode === "optic") {
        var holder = document.getElementById("optic-ports");
        if (!holder) return;
        state.pick = known;
        holder.textContent = "";
        holder.appendChild(h("p", { className: "flow-plan", text: "Ports of " + (known.name || "the device") + ": tap where the optic goes." }));
        var row = h("div", { className: "port-row-holder" });
        holder.appendChild(row);
        // A cage needs the part when its own end or one of its lanes' ends calls for it.
        var needs = {};
        ports.forEach(function (p) { if (p.needs) needs[p.parent || p.id] = (needs[p.parent || p.id] || []).concat([p.needs]); });
        var needing = ports.filter(function (p) {
          return !p.parent && !p.optic && (needs[p.id] || []).indexOf(state.optic.part_number) >= 0;
        });
        Draw.portRow(row, ports, {
          label: "Ports of " + known.name, lit: needing.length ? needing[0].id : null,
          onTap: function (port) { seatOptic({ port: port.id, port_code: (known.name ? known.name + ":" : "") + port.name }); }
        });
        if (!ports.length) holder.appendChild(h("p", { className: "muted", text: "Scan the port's label: this tablet has no port list of " + (known.name || "that device") + "." }));
      } else if (state.mode === "cable") {
        state.pickDevice = known;
        renderCable();
      }
    });
  }

  function offerOfflineOptic(code, reason) {
    say("info", code + ": not found on this tablet", reason);
    flow.textContent = "";
    flow.appendChild(h("section", { className: "flow-card" }, [
      h("p", { text: "If it is an optic, you can still seat it: the scan will be checked when the network returns." }),
      h("div", { className: "flow-actions" }, [
        h("button", { type: "button", className: "big", text: "Seat it as an optic", onclick: function () {
          clearBanner();
          startOptic(code, { serial: code });
        } }),
        h("button", { type: "button", className: "big secondary", text: "Cancel", onclick: function () { clearBanner(); idle(); } })
      ])
    ]));
  }

  function seatOptic(where) {
    if (state.mode !== "optic" || busy) return Promise.resolve();
    var optic = state.optic;
    var payload = { action: "optic", code: state.code };
    if (where.port) payload.port = where.port; else payload.port_code = where.port_code;
    var place = where.port_code || "the port";
    return write(payload, where.port_code).then(function (answer) {
      if (answer.queued) {
        say("queued", "Optic " + (optic.serial || state.code) + ": saved on this tablet",
            "Seated in " + place + " will be sent when the network returns.");
        afterWrite();
        return;
      }
      var body = answer.body || {};
      if (answer.status < 300 && body.result === "accepted") {
        patchRacks(body);
        say("ok", body.reason || ("Optic " + (optic.serial || state.code) + " seated in " + place + "."));
        afterWrite();
      } else {
        say(body.result === "conflict" ? "conflict" : "refused", refusedText(answer), "Nothing was changed.");
      }
    });
  }

  // --- cables --------------------------------------------------------------------------------------

  /* The page shows a cable as the server's last answer about it has it: the cable (its ends, who confirmed
     each) and `next`, the next step (the end to confirm next and where, every end still to confirm, who
     verified the cable and when). Nothing of an earlier answer is kept. Only what the server cannot know yet
     is this tablet's: the confirmations saved on it while offline (state.queued: idempotency key -> end id),
     each until its answer comes back from the queue. Offline, from a rack saved on the tablet, the next step
     is worked out here by the server's rule (localNext) until the server answers. */

  function startCable(code, answer) {
    var named = END_CODE.exec(code);
    state = { mode: "cable", code: code, named: !!named, cable: null, next: null, queued: {}, pickDevice: null };
    flow.dataset.mode = "cable";
    follow(answer, named ? code : null);
    renderCable();
    if (answer.offline) say("info", "Offline", "From the rack saved on this tablet; your confirmations will be sent when the network returns.");
    else clearBanner();
  }

  /* The cable and its next step as the answer has them (the server's answer, or offline the saved cable). */
  function follow(answer, namedCode) {
    state.cable = answer.cable;
    state.next = answer.next || localNext(answer.cable, namedCode);
  }

  /* The server's rule (cabling.services.scans.ends_to_confirm, end_expected), for a cable saved on the tablet. */
  function localNext(cable, namedCode) {
    var stale = cable.status === "planned" || cable.status === "faulty";
    var left = cable.ends.filter(function (e) { return stale || !e.confirmed_at; }).map(function (end) {
      return Object.assign({}, end, { leg: end.code.split("/")[1] || end.side, port_code: end.device + ":" + end.port });
    });
    var named = (namedCode || "").toLowerCase();
    var expected = left.filter(function (e) { return e.code.toLowerCase() === named; })[0] || left[0] || null;
    var verified = null;
    if (cable.status === "verified") {
      verified = cable.verified_at ? { how: "scan", by: cable.verified_by, by_name: cable.verified_by, at: cable.verified_at }
                                   : { how: "fabric", by: null, by_name: null, at: null };
    }
    return { cable: cable.label, expected: expected, left: left, verified: verified };
  }

  function queuedEnds() {
    return Object.keys(state.queued || {}).map(function (key) { return state.queued[key]; });
  }

  /* The end the page asks for: the server's expected end, else the next it lists, skipping the ends this
     tablet has confirmed and not sent yet. */
  function nextEnd() {
    var next = state.next;
    if (!next) return null;
    var waiting = queuedEnds();
    return (next.expected ? [next.expected] : []).concat(next.left || []).filter(function (end) {
      return waiting.indexOf(end.id) < 0;
    })[0] || null;
  }

  function endPlace(end) {
    var parts = [];
    if (end.rack) parts.push("rack " + end.rack);
    if (end.top_u) parts.push("U" + end.top_u);
    parts.push(end.device);
    parts.push("port " + end.port);
    if (end.lane !== null && end.lane !== undefined) parts.push("lane " + end.lane);
    if (end.plane !== null && end.plane !== undefined) parts.push("plane " + end.plane);
    return parts.join(" · ");
  }

  /* "Verified by Tomas Ruiz at 3 Mar, 14:05": who and when, as the server says; no "at" without a time. */
  function verifiedText(verified) {
    var who = verified.how === "fabric" ? "the fabric" : (verified.by_name || verified.by || "someone");
    var when = time(verified.at);
    return "Verified by " + who + (when ? " at " + when : "");
  }

  function renderCable() {
    var cable = state.cable;
    var next = state.next || {};
    var target = nextEnd();
    var waiting = queuedEnds();
    var left = next.left || [];
    var verified = next.verified || null;
    flow.textContent = "";
    var facts = [cable.network, cable.plane !== null && cable.plane !== undefined ? "plane " + cable.plane : "",
                 statusLabel(cable.status || "planned")].filter(Boolean).join(" · ");
    var card = h("section", { className: "flow-card", "data-flow": "cable", "data-cable": cable.label }, [
      h("h2", { text: "Cable " + cable.label }),
      h("p", { className: "flow-facts", text: facts })
    ]);
    if (verified) {
      card.appendChild(h("p", { className: "flow-verified", "data-verified": verified.how,
        text: verifiedText(verified) + (left.length ? ". Confirm its ends by scan too." : "") }));
    }
    var ends = h("ol", { className: "flow-ends" });
    cable.ends.forEach(function (end) {
      var isTarget = target && end.id === target.id;
      var queued = waiting.indexOf(end.id) >= 0;
      var confirmedAt = time(end.confirmed_at);
      var stateText = end.confirmed_at ? "Confirmed by " + (end.confirmed_by || "someone") + (confirmedAt ? " at " + confirmedAt : "")
        : queued ? "Confirmed on this tablet, waiting to be sent"
        : isTarget ? "Confirm this end: scan its port, or tap the port below" : "Not confirmed yet";
      var li = h("li", { className: "flow-end" + (isTarget ? " target" : "") + (end.confirmed_at ? " confirmed" : "") +
                         (queued ? " queued" : ""), "data-end": end.code, "data-side": end.side }, [
        h("div", { className: "end-picture", id: "elevation-" + end.id }),
        h("div", { className: "end-text" }, [
          h("p", { className: "end-side", text: "End " + (end.code.split("/")[1] || end.side) }),
          h("p", { className: "end-place", text: endPlace(end) }),
          end.optic_part ? h("p", { className: "muted", text: "optic " + end.optic_part }) : null,
          h("p", { className: "end-state", text: stateText })
        ])
      ]);
      ends.appendChild(li);
    });
    card.appendChild(ends);
    var portHolder = h("div", { className: "flow-picture", id: "cable-ports" });
    card.appendChild(portHolder);
    card.appendChild(h("div", { className: "flow-actions" }, [
      h("button", { type: "button", className: "big secondary", text: target ? "Cancel" : "Done",
                    onclick: function () { clearBanner(); idle(); } })
    ]));
    flow.appendChild(card);
    cable.ends.forEach(function (end) { drawEndElevation(end); });
    if (target || state.pickDevice) drawCablePorts(portHolder, target);
    var stepNode = document.getElementById("flow-step");
    if (stepNode) {
      stepNode.dataset.end = target ? target.code : "";
      stepNode.dataset.scan = target ? target.port_code : "";
    }
    if (target) {
      step("Go to " + endPlace(target) + " with end " + target.code + ". Scan the port's label: " + target.port_code +
           " (or tap the port).");
    } else if (waiting.length && left.length) {
      step("Every end is confirmed on this tablet; the cable is verified once they reach the server.");
    } else if (verified && verified.how === "scan") {
      step("Verified. Scan the next cable.");
    } else {
      step("Every end is confirmed; the cable is " + (cable.status || "planned") + ". Scan the next cable.");
    }
  }

  function drawEndElevation(end) {
    var holder = document.getElementById("elevation-" + end.id);
    var rack = rackByName(end.rack);
    if (!holder) return;
    if (!rack) { holder.textContent = ""; return; }
    var lit = { id: end.device_id, name: end.device, position_u: end.top_u, top_u: end.top_u };
    Draw.elevation(holder, { name: rack.name, height_u: rack.height_u }, [], { lit: end.device_id, litU: end.top_u, litName: end.device });
    loadRack(rack.id).then(function (data) {
      var device = deviceIn(data, end.device_id) || lit;
      var devices = data ? data.devices : [device];
      if (!document.getElementById("elevation-" + end.id)) return;
      Draw.elevation(holder, { name: rack.name, height_u: rack.height_u }, devices,
                     { lit: device.id, litU: end.top_u, litName: device.name });
    });
  }

  function drawCablePorts(holder, target) {
    var device = state.pickDevice || (target ? { id: target.device_id, name: target.device, rack: target.rack } : null);
    if (!device) return;
    var rack = rackByName(typeof device.rack === "object" && device.rack ? device.rack.name : device.rack);
    holder.appendChild(h("p", { className: "flow-plan", text: "Ports of " + device.name + (target && target.device_id === device.id
      ? ": the lit port is where this end goes." : ": tap the port where you are.") }));
    var row = h("div", { className: "port-row-holder" });
    var lanes = h("div", { className: "lane-picker", id: "lane-picker" });
    holder.appendChild(row);
    holder.appendChild(lanes);
    var load = rack ? loadRack(rack.id) : buildIndex().then(function (index) {
      var r = index.rackOf[device.id];
      return r ? loadRack(r.id) : null;
    });
    load.then(function (data) {
      var ports = portsOf(data, device.id);
      if (!ports.length) {
        holder.appendChild(h("p", { className: "muted", text: "No port list of " + device.name +
          " on this tablet: scan the port's label instead." }));
        return;
      }
      Draw.portRow(row, ports, {
        label: "Ports of " + device.name, lit: target ? target.port_id : null,
        onTap: function (port, portLanes) {
          var withEnds = portLanes.filter(function (l) { return l.end; });
          if (portLanes.length && (!port.end || withEnds.length)) { pickLane(lanes, device, port, portLanes, target); return; }
          confirmEnd({ port: port.id, port_code: device.name + ":" + port.name, tapped: true });
        }
      });
    });
  }

  function pickLane(holder, device, port, lanes, target) {
    holder.textContent = "";
    holder.appendChild(h("p", { text: "Which lane of " + port.name + "?" }));
    var buttons = h("div", { className: "flow-actions" });
    (port.end ? [port] : []).concat(lanes).forEach(function (lane) {
      var name = lane.parent ? "lane " + lane.lane + (lane.plane !== null && lane.plane !== undefined ? " (plane " + lane.plane + ")" : "") : "whole port";
      buttons.appendChild(h("button", {
        type: "button", className: "big" + (target && lane.id === target.port_id ? " lit" : ""), text: name,
        onclick: function () { confirmEnd({ port: lane.id, port_code: device.name + ":" + lane.name, tapped: true }); }
      }));
    });
    holder.appendChild(buttons);
  }

  /* The code sent with the port: when the flow began with an end's label (the technician holds labelled
     ends), the end the page asks for, which the server checks is at this port; else the label scanned (an
     old label without end codes) or, at a device picked by hand, the cable's label: the server tells the end
     by the port. */
  function codeFor(target) {
    if (!state.named) return state.code;
    if (state.pickDevice) return state.cable.label;
    return target ? target.code : state.code;
  }

  function confirmEnd(where) {
    if (state.mode !== "cable" || busy) return Promise.resolve();
    var cable = state.cable;
    var target = nextEnd();
    var payload = { action: "cable_end", code: codeFor(target) };
    if (where.port) payload.port = where.port; else payload.port_code = where.port_code;
    // A port tapped in the picture of the end the page asks for: that end.
    if (target && where.tapped && !state.pickDevice) payload.end = target.id;
    return write(payload, where.port_code).then(function (answer) {
      if (answer.queued) {
        // Offline the server cannot say whether the port is right; the plan on this tablet can warn.
        var local = findEndAt({ port: where.port || portIdFor(where.port_code) }, target);
        var detail = "This end (" + (where.port_code || "the port") + ") will be sent when the network returns.";
        if (local) state.queued[answer.key] = local.id;
        else if (target && (where.port || portIdFor(where.port_code))) detail += " Careful: " + target.code + " belongs in " + target.device +
          " port " + target.port + ".";
        say("queued", cable.label + ": saved on this tablet", detail);
        state.pickDevice = null;
        renderCable();
        return;
      }
      showAnswer(answer.status, answer.body || {}, false);
    });
  }

  /* A cable-end scan's answer, sent now or (fromQueue) from this tablet's queue: the page shows the cable and
     the next step as the server says, and the outcome in the banner. */
  function showAnswer(status, body, fromQueue) {
    if (body.cable && body.cable.id === state.cable.id) follow(body, null);
    var accepted = status < 300 && body.result === "accepted";
    if (accepted) patchRacks(body);
    if (accepted && !fromQueue) state.pickDevice = null;  // a queued answer does not take the device picked now
    renderCable();
    var next = state.next || {};
    var label = state.cable.label;
    if (accepted && !nextEnd() && !(next.left || []).length && next.verified) {
      say("ok", label + " verified", verifiedText(next.verified) + ".");
    } else if (accepted) {
      say("ok", fromQueue ? label + ": sent from this tablet" : "End confirmed", body.reason || "");
    } else {
      var reason = body.reason || Queue.detailOf(body) || "Refused (" + status + ").";
      say(body.result === "conflict" ? "conflict" : "refused", reason,
          fromQueue ? "Saved on this tablet earlier; nothing was verified (see Problems to fix)." : "Nothing was verified.");
    }
  }

  /* The answers to the scans this tablet kept while offline, as its queue sends them: the one about the
     cable on the page moves it on (the last one sent is the latest word). */
  window.addEventListener("floor:answer", function (event) {
    var detail = event.detail || {};
    if (state.mode !== "cable" || !state.cable) return;
    var mine = Object.prototype.hasOwnProperty.call(state.queued, detail.key);
    delete state.queued[detail.key];
    var body = detail.body || {};
    if (body.cable && body.cable.id === state.cable.id) showAnswer(detail.status, body, true);
    else if (mine) renderCable();
  });

  function portIdFor(code) {
    if (!code || !offlineIndex) return null;
    var port = offlineIndex.ports[code.trim().toLowerCase().replace(/\s+/, ":")];
    return port ? port.id : null;
  }

  /* The cable's end planned on the port given (a port id), or on its cage/lane; null when none is. */
  function findEndAt(where, target) {
    if (!state.cable || !where.port) return null;
    var index = offlineIndex || { portById: {} };
    var port = index.portById[where.port];
    var related = function (end) {
      if (end.port_id === where.port) return true;
      var planned = index.portById[end.port_id];
      return !!((planned && planned.parent === where.port) || (port && port.parent === end.port_id));
    };
    var ends = state.cable.ends.filter(related);
    var theTarget = target ? ends.filter(function (end) { return end.id === target.id; })[0] : null;
    return theTarget || ends[0] || null;
  }

  // --- problems and this tablet's recent scans ---------------------------------------------------------

  var problemList = document.getElementById("problem-list");
  var problemSection = document.getElementById("problems");
  var recentList = document.getElementById("recent-list");

  function showProblems() {
    if (!problemList) return;
    Queue.problems().then(function (items) {
      items.sort(function (a, b) { return a.at < b.at ? 1 : -1; });
      problemList.textContent = "";
      problemSection.hidden = !items.length;
      items.forEach(function (item) {
        var payload = item.payload || {};
        problemList.appendChild(h("li", { className: "problem", "data-key": item.key }, [
          h("p", { className: "problem-reason", text: item.reason }),
          h("p", { className: "muted", text: actionLabel(payload.action) + " " + payload.code +
                   (item.where ? " at " + item.where : "") + " · scanned " + time(payload.scanned_at) }),
          h("div", { className: "flow-actions" }, [
            h("button", { type: "button", className: "big", text: "Scan it again", onclick: function () {
              Queue.dismissProblem(item.key).then(function () { onCode(payload.code); });
            } }),
            h("button", { type: "button", className: "big secondary", text: "Dismiss", onclick: function () {
              Queue.dismissProblem(item.key);
            } })
          ])
        ]));
      });
    });
  }

  function actionLabel(action) {
    return { rack: "Rack", optic: "Optic", cable_end: "Cable end", lookup: "Look up" }[action] || action;
  }

  function showRecent() {
    if (!recentList) return;
    Queue.recent().then(function (rows) {
      rows = rows.filter(function (r) { return r.project === config.project && r.action !== "lookup"; }).slice(0, 8);
      recentList.textContent = "";
      rows.forEach(function (row) {
        recentList.appendChild(h("li", { className: "recent result-" + row.result, "data-result": row.result }, [
          h("span", { className: "recent-what", text: actionLabel(row.action) + " " + row.code +
                      (row.where ? " at " + row.where : "") }),
          h("span", { className: "recent-result", text: row.result + (row.replayed ? " (replayed)" : "") })
        ]));
      });
    });
  }

  window.addEventListener("floor:queue", function () { showProblems(); showRecent(); });

  // --- start ---------------------------------------------------------------------------------------

  window.FloorScan = { onCode: onCode, state: function () { return state; }, offlineLookup: offlineLookup };
  idle();
  showProblems();
  showRecent();
  focusScan();
  if (config.startCode) onCode(config.startCode);
})();
