/* Pictures for the floor, drawn as SVG from data the page already has (a rack's data, the scan API's
   answer): a small rack elevation with one device lit, and a device's port row with the expected port
   lit, where every port is a target at least 44 px square that a gloved finger can tap.

   window.FloorDraw.portRow(container, ports, options) and .elevation(container, rack, devices, options).
   A port is {id, name, parent, lane, plane, optic, end, label, status, confirmed, needs}; lanes (ports
   with a parent) are drawn inside their physical port. */
(function () {
  "use strict";

  var SVG = "http://www.w3.org/2000/svg";
  var CELL = 52;  // a port's square, px: above the 44 px a touch target needs, with room for its name
  var GAP = 6;

  function el(name, attrs, parent) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attrs || {}).forEach(function (key) {
      if (attrs[key] !== null && attrs[key] !== undefined) node.setAttribute(key, attrs[key]);
    });
    if (parent) parent.appendChild(node);
    return node;
  }

  function text(parent, x, y, value, attrs) {
    var node = el("text", Object.assign({ x: x, y: y }, attrs || {}), parent);
    node.textContent = value;
    return node;
  }

  function portState(port) {
    if (!port.end) return "free";
    if (port.status === "faulty") return "faulty";
    if (port.status === "verified") return "verified";
    if (port.confirmed) return "confirmed";
    if (port.status === "installed") return "installed";
    return "planned";
  }

  /* Physical ports in order, each with its lanes. */
  function physical(ports) {
    var byParent = {};
    ports.forEach(function (p) {
      if (p.parent) (byParent[p.parent] = byParent[p.parent] || []).push(p);
    });
    return ports.filter(function (p) { return !p.parent; }).map(function (p) {
      var lanes = (byParent[p.id] || []).slice().sort(function (a, b) { return (a.lane || 0) - (b.lane || 0); });
      return { port: p, lanes: lanes };
    });
  }

  /* options: {lit: port id (a lane or a port), marked: {id: "tapped"|...}, onTap(port, physicalPort),
     label: accessible name, physicalOnly: only physical ports are tappable (optics sit in cages)} */
  function portRow(container, ports, options) {
    options = options || {};
    container.textContent = "";
    var groups = physical(ports);
    var width = Math.max(container.clientWidth || 0, CELL + 2 * GAP);
    var columns = Math.max(1, Math.floor((width - GAP) / (CELL + GAP)));
    var rows = Math.max(1, Math.ceil(groups.length / columns));
    var svgWidth = Math.min(width, columns * (CELL + GAP) + GAP);
    var svgHeight = rows * (CELL + GAP) + GAP;
    var svg = el("svg", {
      width: svgWidth, height: svgHeight, viewBox: "0 0 " + svgWidth + " " + svgHeight, role: "group",
      "class": "port-row", "aria-label": options.label || "Port row"
    }, container);
    var lit = options.lit;
    groups.forEach(function (group, index) {
      var x = GAP + (index % columns) * (CELL + GAP);
      var y = GAP + Math.floor(index / columns) * (CELL + GAP);
      var port = group.port;
      var hasLit = port.id === lit || group.lanes.some(function (lane) { return lane.id === lit; });
      var laneEnds = group.lanes.filter(function (lane) { return lane.end; });
      var state = laneEnds.length ? worst(laneEnds.map(portState)) : portState(port);
      var g = el("g", {
        "class": "port state-" + state + (hasLit ? " lit" : "") + (port.optic ? " has-optic" : ""),
        "data-port": port.name, "data-port-id": port.id, role: "button", tabindex: "0",
        "aria-label": describe(port, group.lanes, hasLit)
      }, svg);
      el("title", {}, g).textContent = describe(port, group.lanes, hasLit);
      el("rect", { x: x, y: y, width: CELL, height: CELL, rx: 6 }, g);
      if (group.lanes.length > 1) {
        var laneWidth = (CELL - 8) / group.lanes.length;
        group.lanes.forEach(function (lane, i) {
          el("rect", {
            "class": "lane state-" + portState(lane) + (lane.id === lit ? " lit" : ""),
            x: x + 4 + i * laneWidth, y: y + CELL - 14, width: Math.max(laneWidth - 2, 2), height: 10, rx: 2
          }, g);
        });
      }
      text(g, x + CELL / 2, y + (group.lanes.length > 1 ? 24 : 31), shortName(port.name), {
        "text-anchor": "middle", "class": "port-name"
      });
      if (port.optic) el("circle", { "class": "optic-dot", cx: x + CELL - 8, cy: y + 8, r: 4 }, g);
      if (options.onTap) {
        var tap = function (event) {
          event.preventDefault();
          options.onTap(port, group.lanes);
        };
        g.addEventListener("click", tap);
        g.addEventListener("keydown", function (event) {
          if (event.key === "Enter" || event.key === " ") tap(event);
        });
      }
    });
    return svg;
  }

  function worst(states) {
    if (states.indexOf("faulty") >= 0) return "faulty";
    var order = ["planned", "installed", "confirmed", "verified"];
    for (var i = 0; i < order.length; i++) if (states.indexOf(order[i]) >= 0) return order[i];
    return "free";
  }

  function shortName(name) {
    return name.length > 7 ? name.slice(0, 6) + "…" : name;
  }

  function describe(port, lanes, lit) {
    var parts = ["Port " + port.name];
    if (port.label) parts.push("cable " + port.label + " (" + portState(port) + ")");
    lanes.filter(function (l) { return l.end; }).forEach(function (lane) {
      parts.push("lane " + lane.lane + (lane.plane !== null && lane.plane !== undefined ? " plane " + lane.plane : "") +
                 ": cable " + lane.label + " (" + portState(lane) + ")");
    });
    if (port.optic) parts.push("optic " + port.optic);
    if (lit) parts.push("this is the port");
    return parts.join(", ");
  }

  /* A small rack elevation: the rack's units, the devices we know of, and the lit one.
     rack {name, height_u}; devices [{id, name, position_u, top_u, height_u}]; options {lit: device id,
     litU: unit to mark when the device is not among `devices`, litName} */
  function elevation(container, rack, devices, options) {
    options = options || {};
    container.textContent = "";
    var height = rack.height_u || 48;
    var unit = options.unit || 5;
    var frameX = 26, frameY = 18, frameWidth = 96;
    var svgHeight = frameY + height * unit + 8;
    var svg = el("svg", {
      width: frameX + frameWidth + 6, height: svgHeight,
      viewBox: "0 0 " + (frameX + frameWidth + 6) + " " + svgHeight, role: "img", "class": "mini-elevation",
      "aria-label": "Rack " + rack.name + (options.litName ? ", " + options.litName : "")
    }, container);
    text(svg, frameX + frameWidth / 2, 13, rack.name, { "text-anchor": "middle", "class": "rack-name" });
    el("rect", { "class": "rack-frame", x: frameX, y: frameY, width: frameWidth, height: height * unit }, svg);
    for (var u = 1; u <= height; u += 1) {
      if (u % 5 === 0 || u === 1) {
        text(svg, frameX - 3, frameY + (height - u + 1) * unit - 1, String(u), { "text-anchor": "end", "class": "u-label" });
      }
    }
    var drawn = false;
    (devices || []).forEach(function (device) {
      if (!device.position_u) return;
      var top = device.top_u || device.position_u;
      var isLit = device.id === options.lit;
      drawn = drawn || isLit;
      box(svg, frameX, frameY, frameWidth, unit, height, device.position_u, top, isLit, isLit ? device.name : "");
    });
    if (!drawn && options.litU) {
      box(svg, frameX, frameY, frameWidth, unit, height, options.litU, options.litU, true, options.litName || "");
    }
    return svg;
  }

  function box(svg, frameX, frameY, frameWidth, unit, height, bottom, top, lit, name) {
    var y = frameY + (height - top) * unit;
    var g = el("g", { "class": "dev" + (lit ? " lit" : "") }, svg);
    el("rect", { x: frameX + 2, y: y + 0.5, width: frameWidth - 4, height: (top - bottom + 1) * unit - 1, rx: 1 }, g);
    if (name) {
      text(g, frameX + frameWidth / 2, y + Math.min((top - bottom + 1) * unit, 14) - 3, name.slice(0, 14),
           { "text-anchor": "middle", "class": "dev-name" });
    }
  }

  window.FloorDraw = { portRow: portRow, elevation: elevation, portState: portState, physical: physical };
})();
