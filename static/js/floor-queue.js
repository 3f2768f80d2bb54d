/* The floor's memory on the tablet (IndexedDB) and the way scans reach the server.

   Every scan the page sends carries an idempotency key chosen here, once. When the network is down the
   scan is kept in the "queue" store with that key and sent when the network returns (the "online"
   event, a timer, or the next page load); the server records a key once, so a scan sent twice (the
   answer lost on the way back) is recorded once and answered "replayed". A queued scan that the server
   refuses when it finally arrives is not dropped: it moves to the "problems" store, which the floor
   pages list until the technician deals with it. The "racks" store keeps each rack's data
   (floor/racks/<id>/data.json) so the scan page can find codes and draw port rows offline.

   window.FloorStore: the IndexedDB stores. window.FloorQueue: submit(payload), flush(), counts().
   Every change fires a "floor:queue" event on window; the status bar of every floor page listens. The answer
   to each kept scan, when it is finally sent, fires a "floor:answer" event ({key, payload, status, body}):
   the scan page follows it. */
(function () {
  "use strict";

  var DB_NAME = "bringup-floor";
  var DB_VERSION = 1;
  var STORES = { queue: "key", problems: "key", racks: "key", recent: "key" };
  var RECENT_KEPT = 30;
  var REFUSED = { refused: true, conflict: true };
  var config = readConfig();
  var dbPromise = null;

  function readConfig() {
    var node = document.getElementById("floor-config");
    try { return node ? JSON.parse(node.textContent) : {}; } catch (e) { return {}; }
  }

  function openDb() {
    if (dbPromise) return dbPromise;
    dbPromise = new Promise(function (resolve, reject) {
      if (!window.indexedDB) { reject(new Error("This browser keeps nothing offline (no IndexedDB).")); return; }
      var request = indexedDB.open(DB_NAME, DB_VERSION);
      request.onupgradeneeded = function () {
        var db = request.result;
        Object.keys(STORES).forEach(function (name) {
          if (!db.objectStoreNames.contains(name)) db.createObjectStore(name, { keyPath: STORES[name] });
        });
      };
      request.onsuccess = function () { resolve(request.result); };
      request.onerror = function () { reject(request.error); };
    });
    return dbPromise;
  }

  function tx(store, mode, work) {
    return openDb().then(function (db) {
      return new Promise(function (resolve, reject) {
        var transaction = db.transaction(store, mode);
        var result;
        transaction.oncomplete = function () { resolve(result); };
        transaction.onerror = function () { reject(transaction.error); };
        transaction.onabort = function () { reject(transaction.error); };
        result = work(transaction.objectStore(store));
      });
    });
  }

  function request(store, mode, make) {
    return openDb().then(function (db) {
      return new Promise(function (resolve, reject) {
        var req = make(db.transaction(store, mode).objectStore(store));
        req.onsuccess = function () { resolve(req.result); };
        req.onerror = function () { reject(req.error); };
      });
    });
  }

  var FloorStore = {
    put: function (store, value) { return request(store, "readwrite", function (s) { return s.put(value); }); },
    get: function (store, key) { return request(store, "readonly", function (s) { return s.get(key); }); },
    remove: function (store, key) { return request(store, "readwrite", function (s) { return s.delete(key); }); },
    all: function (store) { return request(store, "readonly", function (s) { return s.getAll(); }); },
    clear: function (store) { return request(store, "readwrite", function (s) { return s.clear(); }); },
    saveRack: function (project, data) {
      return FloorStore.put("racks", {
        key: project + ":" + data.rack.id, project: project, id: data.rack.id, name: data.rack.name,
        saved_at: new Date().toISOString(), data: data
      });
    },
    rack: function (project, id) { return FloorStore.get("racks", project + ":" + id); },
    racks: function (project) {
      return FloorStore.all("racks").then(function (rows) {
        return rows.filter(function (row) {
          return row.project === project && row.data && row.data.version === config.rackDataVersion;
        });
      });
    },
    tx: tx
  };

  /* An idempotency key: 8-64 characters of [A-Za-z0-9_-]. crypto.randomUUID needs a secure context
     (https or localhost); a floor server on plain http still gets 128 random bits. */
  function newKey() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    var bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }

  function csrfToken() {
    var match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    if (match) return decodeURIComponent(match[1]);
    var field = document.querySelector("input[name=csrfmiddlewaretoken]");
    return field ? field.value : "";
  }

  /* POST one scan. Resolves {status, body}; rejects only when nothing came back (no network). */
  function post(payload) {
    return fetch(config.api || "/api/scans/", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify(payload)
    }).then(function (response) {
      return response.text().then(function (text) {
        var body = null;
        try { body = text ? JSON.parse(text) : null; } catch (e) { body = { detail: text.slice(0, 300) }; }
        return { status: response.status, body: body || {} };
      });
    });
  }

  function detailOf(body) {
    if (!body) return "";
    if (typeof body.detail === "string") return body.detail;
    if (typeof body.reason === "string" && body.reason) return body.reason;
    var parts = [];
    Object.keys(body).forEach(function (field) {
      var value = body[field];
      var text = Array.isArray(value) ? value.join(" ") : (typeof value === "string" ? value : "");
      if (text) parts.push(field === "non_field_errors" ? text : field + ": " + text);
    });
    return parts.join("; ");
  }

  /* The session is gone (signed out, expired) or its CSRF cookie with it: the scan is still good, it
     waits for the technician to sign in again rather than becoming a problem. */
  function needsSignIn(result) {
    if (result.status === 401) return true;
    if (result.status !== 403) return false;
    var detail = detailOf(result.body);
    return /CSRF|credentials|authenticat/i.test(detail);
  }

  /* What a row of the tablet's stores belongs to: the technician who scanned it (a shared tablet shows each
     person their own). */
  function ofThisUser(row) { return !config.user || !row.user || row.user === config.user; }

  function emit() {
    counts().then(function (c) {
      window.dispatchEvent(new CustomEvent("floor:queue", { detail: c }));
    });
  }

  function counts() {
    return Promise.all([FloorStore.all("queue"), FloorStore.all("problems")]).then(function (lists) {
      var mine = lists[0].filter(ofThisUser);
      return {
        waiting: lists[0].length,
        waitingMine: mine.length,
        problems: lists[1].filter(ofThisUser).length,
        signIn: lists[0].some(function (item) { return item.needs_sign_in; })
      };
    }).catch(function () { return { waiting: 0, waitingMine: 0, problems: 0, signIn: false, broken: true }; });
  }

  function remember(payload, result, body, where) {
    var item = {
      key: payload.idempotency_key, code: payload.code, action: payload.action, project: payload.project,
      where: where || "", user: config.user || "",
      result: result, reason: (body && (body.reason || detailOf(body))) || "", replayed: !!(body && body.replayed),
      at: new Date().toISOString()
    };
    return FloorStore.put("recent", item).then(function () {
      return FloorStore.all("recent");
    }).then(function (rows) {
      rows.sort(function (a, b) { return a.at < b.at ? 1 : -1; });
      return Promise.all(rows.slice(RECENT_KEPT).map(function (row) { return FloorStore.remove("recent", row.key); }));
    }).catch(function () {});
  }

  function enqueue(payload, where) {
    var item = {
      key: payload.idempotency_key, payload: payload, user: config.user || "", project: payload.project,
      where: where || "", queued_at: new Date().toISOString(), attempts: 0
    };
    return FloorStore.put("queue", item).then(function () {
      return remember(payload, "queued", null, where);
    }).then(function () { emit(); return { queued: true, key: item.key }; });
  }

  function problem(item, reason, result) {
    return FloorStore.put("problems", {
      key: item.key, payload: item.payload, reason: reason || "The server refused this scan.", result: result,
      where: item.where || "", user: item.user || "", queued_at: item.queued_at, at: new Date().toISOString()
    });
  }

  /* Send a scan now if we can, else keep it. Resolves:
     {queued: true} when kept on the tablet, or {status, body} as the server answered. Lookups are never
     queued: a lookup changes nothing, and its answer is only useful now. `where` says in words where the
     technician was (for the lists of this tablet's scans and problems). */
  function submit(payload, where) {
    payload = Object.assign({}, payload);
    payload.project = payload.project || config.project;
    payload.idempotency_key = payload.idempotency_key || newKey();
    payload.scanned_at = payload.scanned_at || new Date().toISOString();
    payload.source = payload.source || "page";
    var keep = payload.action !== "lookup";
    if (!navigator.onLine) {
      return keep ? enqueue(payload, where) : Promise.resolve({ offline: true });
    }
    return post(payload).then(function (result) {
      if (retryLater(result) && keep) return enqueue(payload, where);
      if (keep && needsSignIn(result)) return enqueue(payload, where);
      var outcome = result.status < 300 ? (result.body.result || "accepted") : "refused";
      if (keep || result.status < 300) remember(payload, outcome, result.body, where).then(emit);
      return result;
    }, function () {
      return keep ? enqueue(payload, where) : { offline: true };
    });
  }

  /* The server could not take it now (down, overloaded, throttled): the scan stays on the tablet and is
     tried again, never turned into a problem for the technician. */
  function retryLater(result) {
    return result.status >= 500 || result.status === 429 || result.status === 408;
  }

  var flushing = null;

  /* A kept scan's answer, now that it arrived: the scan page shows what the server says next. */
  function answered(key, payload, result) {
    window.dispatchEvent(new CustomEvent("floor:answer", {
      detail: { key: key, payload: payload, status: result.status, body: result.body || {} }
    }));
  }

  /* Send every waiting scan of the signed-in technician, oldest first, each marked source "offline".
     Stops at the first one that cannot get through (still offline, or the server is down) and tries
     again later; whatever the server answers otherwise, the scan leaves the queue: recorded (or
     recorded before: "replayed"), or refused and listed as a problem. */
  function flush() {
    if (flushing) return flushing;
    if (!navigator.onLine) return Promise.resolve(false);
    flushing = FloorStore.all("queue").then(function (items) {
      items = items.filter(ofThisUser);
      items.sort(function (a, b) { return a.queued_at < b.queued_at ? -1 : 1; });
      return sendEach(items, 0);
    }).catch(function () { return false; }).then(function (done) {
      flushing = null;
      emit();
      return done;
    });
    return flushing;
  }

  function sendEach(items, index) {
    if (index >= items.length) return Promise.resolve(true);
    var item = items[index];
    var payload = Object.assign({}, item.payload, { source: "offline" });
    return post(payload).then(function (result) {
      if (retryLater(result)) return false;
      if (needsSignIn(result)) {
        item.needs_sign_in = true;
        item.attempts += 1;
        return FloorStore.put("queue", item).then(function () { return false; });
      }
      var body = result.body || {};
      var refused = result.status >= 300 || REFUSED[body.result];
      var done = refused ? problem(item, body.reason || detailOf(body), body.result || String(result.status))
                         : Promise.resolve();
      return done.then(function () {
        return remember(payload, result.status < 300 ? body.result : "refused", body, item.where);
      }).then(function () {
        return FloorStore.remove("queue", item.key);
      }).then(function () {
        answered(item.key, payload, result);
        emit();
        return sendEach(items, index + 1);
      });
    }, function () { return false; });
  }

  window.FloorStore = FloorStore;
  window.FloorQueue = {
    config: config,
    newKey: newKey,
    submit: submit,
    flush: flush,
    counts: counts,
    emit: emit,
    post: post,
    detailOf: detailOf,
    problems: function () { return FloorStore.all("problems").then(function (rows) { return rows.filter(ofThisUser); }); },
    dismissProblem: function (key) { return FloorStore.remove("problems", key).then(emit); },
    recent: function () {
      return FloorStore.all("recent").then(function (rows) {
        rows = rows.filter(ofThisUser);
        rows.sort(function (a, b) { return a.at < b.at ? 1 : -1; });
        return rows;
      });
    },
    waiting: function () { return FloorStore.all("queue"); }
  };

  window.addEventListener("online", function () { flush(); });
  // The "online" event is not always fired (a Wi-Fi that comes back without the OS noticing): try again
  // now and then while something waits.
  setInterval(function () {
    counts().then(function (c) { if (c.waitingMine && navigator.onLine) flush(); });
  }, 15000);
})();
