/* The floor's service worker: keeps the floor pages and their static files so that a tablet whose Wi-Fi
   dropped can still open (or reload) the floor home, the scan page and the worklists it has seen.
   Served by cabling.floor.views.ServiceWorkerView at /p/<code>/floor/sw.js, which puts its configuration
   in front as self.FLOOR_SW: {version, project, scope, pages, static, lazyStatic, staticPrefix}.

   - Pages under the scope and the racks' data: network first (always the latest when online), the kept
     copy when the network fails; a page never seen offline falls back to the floor home.
   - Static files: the kept copy first (they change with the version, which empties the cache).
   - Everything else (the API, other pages, writes): untouched. Scans never go through here: the page
     keeps them in IndexedDB and sends them itself (floor-queue.js). */
"use strict";

var CONFIG = self.FLOOR_SW;
var PREFIX = "bringup-floor-" + CONFIG.project + "-";
var CACHE = PREFIX + CONFIG.version;

function keep(cache, url) {
  // A page answered with a redirect (signed out: the login page) or an error is not a floor page to keep.
  return fetch(url, { credentials: "same-origin" }).then(function (response) {
    if (response.ok && !response.redirected) return cache.put(url, response);
    return null;
  }).catch(function () { return null; });
}

self.addEventListener("install", function (event) {
  event.waitUntil(caches.open(CACHE).then(function (cache) {
    return Promise.all(CONFIG.static.concat(CONFIG.lazyStatic || [], CONFIG.pages).map(function (url) { return keep(cache, url); }));
  }).then(function () { return self.skipWaiting(); }));
});

self.addEventListener("activate", function (event) {
  event.waitUntil(caches.keys().then(function (names) {
    return Promise.all(names.filter(function (name) {
      return name.indexOf(PREFIX) === 0 && name !== CACHE;
    }).map(function (name) { return caches.delete(name); }));
  }).then(function () { return self.clients.claim(); }));
});

function isStatic(url) {
  return url.pathname.indexOf(CONFIG.staticPrefix) === 0;
}

function networkFirst(request) {
  return caches.open(CACHE).then(function (cache) {
    return fetch(request).then(function (response) {
      if (response.ok && !response.redirected && response.type === "basic") cache.put(request, response.clone());
      return response;
    }).catch(function () {
      return cache.match(request).then(function (kept) {
        if (kept) return kept;
        return cache.match(request, { ignoreSearch: true }).then(function (loose) {
          if (loose) return loose;
          if (request.mode === "navigate") return cache.match(CONFIG.scope).then(function (home) {
            return home || offlinePage();
          });
          return Response.error();
        });
      });
    });
  });
}

function cacheFirst(request) {
  return caches.open(CACHE).then(function (cache) {
    return cache.match(request).then(function (kept) {
      if (kept) return kept;
      return fetch(request).then(function (response) {
        if (response.ok) cache.put(request, response.clone());
        return response;
      });
    });
  });
}

function offlinePage() {
  var html = "<!doctype html><meta charset=utf-8><meta name=viewport content='width=device-width'>" +
    "<title>Offline</title><body style='font:20px system-ui;padding:1rem'><h1>Offline</h1>" +
    "<p>This page was not kept on this tablet. The floor home and the scan page work offline: " +
    "<a href='" + CONFIG.scope + "'>floor home</a>.</p>";
  return new Response(html, { headers: { "Content-Type": "text/html; charset=utf-8" } });
}

self.addEventListener("fetch", function (event) {
  var request = event.request;
  if (request.method !== "GET") return;
  var url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (isStatic(url)) { event.respondWith(cacheFirst(request)); return; }
  if (url.pathname.indexOf(CONFIG.scope) === 0 && url.pathname !== CONFIG.scope + "sw.js") {
    event.respondWith(networkFirst(request));
  }
});
