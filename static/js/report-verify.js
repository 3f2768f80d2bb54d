/* "Check a file" on the acceptance report page (templates/delivery/reports/_check.html).
 *
 * A file dropped on the zone or picked from it is checked at once, and the answer shown in #check-result
 * without a reload. In a secure context (https, or localhost) the browser hashes the file itself with
 * crypto.subtle and sends only its SHA-256 (GET check/?sha256=); elsewhere (plain http on a site network,
 * where crypto.subtle does not exist) the file is uploaded as the form would (POST, multipart). Both ask
 * for JSON: {matched, message, sha256, file_name, matches: [{version, text, url}]} or {errors: {field: [..]}}.
 * Without this script the form posts and the server renders the same answer. No dependencies.
 */
(function () {
  "use strict";

  var section = document.getElementById("check-file");
  if (!section) return;
  var form = document.getElementById("check-form");
  var input = document.getElementById("check-file-input");
  var zone = section.querySelector("[data-drop]");
  var result = document.getElementById("check-result");
  var checkUrl = section.getAttribute("data-check-url");
  var maxBytes = parseInt(section.getAttribute("data-max-bytes") || "0", 10);
  var canHash = window.isSecureContext && window.crypto && window.crypto.subtle;

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // The same markup as _check_result.html, built with textContent only (file names are anyone's text).
  function showOutcome(answer) {
    var box = element("div", "check-outcome " + (answer.matched ? "is-match" : "is-none"));
    box.setAttribute("data-matched", answer.matched ? "yes" : "no");
    if (answer.matched) {
      answer.matches.forEach(function (match) {
        var line = element("p");
        line.appendChild(element("b", "", match.text));
        line.appendChild(document.createTextNode(" "));
        var link = element("a", "", "Open version " + match.version);
        link.href = match.url;
        line.appendChild(link);
        box.appendChild(line);
      });
    } else {
      var none = element("p");
      none.appendChild(element("b", "", answer.message));
      box.appendChild(none);
    }
    var hash = element("p", "muted", (answer.file_name ? answer.file_name + " · " : "") + "SHA-256 ");
    hash.appendChild(element("code", "", answer.sha256));
    box.appendChild(hash);
    result.replaceChildren(box);
  }

  function showProblem(text) {
    var box = element("div", "check-outcome is-none");
    box.setAttribute("data-matched", "error");
    box.appendChild(element("p", "", text));
    result.replaceChildren(box);
  }

  function errorsText(errors) {
    var lines = [];
    Object.keys(errors || {}).forEach(function (field) {
      lines = lines.concat(errors[field]);
    });
    return lines.join(" ") || "The file could not be checked.";
  }

  function answered(response) {
    return response.json().then(function (body) {
      if (!response.ok) throw new Error(body.errors ? errorsText(body.errors) : "HTTP " + response.status);
      return body;
    }, function () {
      throw new Error("The server answered " + response.status + ": the file could not be checked.");
    });
  }

  function hex(buffer) {
    var bytes = new Uint8Array(buffer);
    var out = "";
    for (var i = 0; i < bytes.length; i++) out += (bytes[i] < 16 ? "0" : "") + bytes[i].toString(16);
    return out;
  }

  function byHash(file) {
    // WebCrypto digests a whole buffer (it has no streaming form): the size cap above bounds it.
    return file.arrayBuffer()
      .then(function (buffer) { return window.crypto.subtle.digest("SHA-256", buffer); })
      .then(function (digest) {
        var query = "?sha256=" + hex(digest) + "&name=" + encodeURIComponent(file.name);
        return fetch(checkUrl + query, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      });
  }

  function byUpload(file) {
    var body = new FormData(form);
    body.set("file", file, file.name);
    return fetch(form.action, { method: "POST", body: body, headers: { Accept: "application/json" },
                                credentials: "same-origin" });
  }

  function check(file) {
    if (!file) return;
    if (maxBytes && file.size > maxBytes) {
      showProblem(file.name + " is larger than any report file (" + maxBytes.toLocaleString() + " bytes): it is none of them.");
      return;
    }
    result.replaceChildren(element("p", "muted", "Checking " + file.name + "…"));
    section.setAttribute("data-checking", "");
    (canHash ? byHash(file) : byUpload(file))
      .then(answered)
      .then(showOutcome, function (error) { showProblem(error.message); })
      .then(function () { section.removeAttribute("data-checking"); });
  }

  input.addEventListener("change", function () {
    check(input.files && input.files[0]);
  });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (input.files && input.files[0]) check(input.files[0]);
    else showProblem("Choose the file to check.");
  });

  ["dragenter", "dragover"].forEach(function (name) {
    zone.addEventListener(name, function (event) {
      event.preventDefault();
      zone.classList.add("is-over");
    });
  });
  ["dragleave", "drop"].forEach(function (name) {
    zone.addEventListener(name, function () { zone.classList.remove("is-over"); });
  });
  zone.addEventListener("drop", function (event) {
    event.preventDefault(); // the file is checked here, not opened by the browser
    var files = event.dataTransfer && event.dataTransfer.files;
    if (files && files.length) check(files[0]);
  });
})();
