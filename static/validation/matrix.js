/* The bandwidth matrix of a large run, drawn as an image (a pixel square per node pair): name the pair under
 * the pointer, and open the results of that pair on a click.
 *
 * Markup (templates/validation/run_detail.html): <img id="matrix-image" data-nodes-url="…">, whose URL
 * answers {"nodes": [names in the image's row order]}, and <p id="matrix-pointer">. Row i and column i of
 * the image are node i. No dependencies.
 */
(function () {
  "use strict";
  var image = document.getElementById("matrix-image");
  var pointer = document.getElementById("matrix-pointer");
  if (!image || !pointer || !image.dataset.nodesUrl) return;
  var nodes = [];
  fetch(image.dataset.nodesUrl, { credentials: "same-origin" })
    .then(function (response) { return response.ok ? response.json() : { nodes: [] }; })
    .then(function (answer) { nodes = answer.nodes || []; });

  function pairAt(event) {
    var box = image.getBoundingClientRect();
    var n = nodes.length;
    if (!n) return null;
    var col = Math.floor(((event.clientX - box.left) / box.width) * n);
    var row = Math.floor(((event.clientY - box.top) / box.height) * n);
    if (row < 0 || col < 0 || row >= n || col >= n || row === col) return null;
    return [nodes[row], nodes[col]];
  }

  image.addEventListener("mousemove", function (event) {
    var pair = pairAt(event);
    pointer.textContent = pair ? pair[0] + " ~ " + pair[1] : "\u00a0";
  });
  image.addEventListener("click", function (event) {
    var pair = pairAt(event);
    if (!pair) return;
    window.location.href = "?pair=" + encodeURIComponent(pair[0] + "~" + pair[1]) + "#results";
  });
})();
