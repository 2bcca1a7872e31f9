package report

// script is everything the page runs: the table, hover and live updates (pageScript), and
// the canvas plots (plotScript).
const script = pageScript + plotScript + curveScript

// plotScript draws the canvas plots from the plot data (plotdata.go): the parallel
// coordinates, with a range brushed on any axis keeping only the trials within it (the
// table is told by a "runall:filter" event; the SVG charts' marks of the others get the
// class "out"; the contour interpolates the trials kept), and the contour of the chosen
// pair. A live page's update ("runall:swapped") reads the new data and draws again, keeping
// the ranges and the pair. Lines are stroked in batches of one colour each, so that 10,000
// trials are a few dozen strokes. Like pageScript, it holds no "<" or "&".
const plotScript = `
(function () {
  "use strict";
  var doc = document, SHADES = 32;
  var st = {data: null, brush: {}, drag: null, keep: null, pair: null, frame: 0, filtered: false, bg: null, gen: 0, marks: []};
  var RAMP = [[84, 174, 255], [9, 105, 218], [130, 80, 223], [191, 57, 137]];
  var DASHED = {pruned: [5, 4], paused: [2, 3], failed: [1, 3], stopped: [1, 3], ignored: [1, 3]};
  var FLAT = {pruned: "rgba(140,149,159,.45)", paused: "rgba(130,80,223,.6)", failed: "rgba(207,34,46,.45)",
    stopped: "rgba(188,76,0,.45)", ignored: "rgba(154,103,0,.45)", running: "rgba(84,174,255,.9)"};

  function read() {
    var el = doc.getElementById("plot-data");
    st.data = el ? JSON.parse(el.textContent) : null;
    st.bg = null;
    st.marks = doc.querySelectorAll("#curves [data-task], #params [data-task], #front [data-task]");
    if (st.data) { ranks(); }
  }
  function frac(ax, v) {
    var lo = ax.lo, hi = ax.hi;
    if (ax.scale === "log") { v = Math.log10(v); lo = Math.log10(lo); hi = Math.log10(hi); }
    return hi === lo ? 0.5 : (v - lo) / (hi - lo);
  }
  function unfrac(ax, f) {
    if (ax.scale === "log") { return Math.pow(10, Math.log10(ax.lo) + f * (Math.log10(ax.hi) - Math.log10(ax.lo))); }
    return ax.lo + f * (ax.hi - ax.lo);
  }
  function shade(f) {
    f = Math.max(0, Math.min(1, f)) * (RAMP.length - 1);
    var i = Math.min(Math.floor(f), RAMP.length - 2), u = f - i, a = RAMP[i], b = RAMP[i + 1];
    return "rgb(" + [0, 1, 2].map(function (k) { return Math.round(a[k] + u * (b[k] - a[k])); }).join(",") + ")";
  }
  // goodness is how good a value of the colouring axis is, 0 (the worst trial that
  // succeeded) to 1 (the best): its rank among theirs, so that a few outliers (a trial
  // pruned at its first epoch) leave the others' colours apart. -1 for none.
  function ranks() {
    var d = st.data, ax = d.axes[d.color];
    st.sorted = [];
    if (!ax) { return; }
    ax.values.forEach(function (v, i) { if (v !== null ? d.status[i] === "ok" : false) { st.sorted.push(v); } });
    st.sorted.sort(function (p, q) { return p - q; });
  }
  function goodnessOf(v) {
    var s = st.sorted, lo = 0, hi = s.length;
    if (v === null || hi === 0) { return -1; }
    while (hi > lo) { var mid = (lo + hi) >> 1; if (v > s[mid]) { lo = mid + 1; } else { hi = mid; } }
    var f = s.length === 1 ? 0.5 : Math.min(lo, s.length - 1) / (s.length - 1);
    return st.data.better === "min" ? 1 - f : f;
  }
  function goodness(i) {
    var d = st.data, ax = d.axes[d.color];
    return ax ? goodnessOf(ax.values[i]) : -1;
  }
  function axisIndex(name) {
    var axes = st.data.axes;
    for (var i = 0; axes.length !== i; i++) { if (axes[i].name === name) { return i; } }
    return -1;
  }
  // kept says which trials lie within every brushed range: null when none is brushed.
  function kept() {
    var d = st.data, names = Object.keys(st.brush).filter(function (n) { return axisIndex(n) !== -1; });
    if (names.length === 0) { return null; }
    return d.ids.map(function (id, i) {
      return names.every(function (n) {
        var r = st.brush[n], v = d.axes[axisIndex(n)].values[i];
        return v !== null ? !(r[0] - 1e-12 * Math.abs(r[0]) > v || v > r[1] + 1e-12 * Math.abs(r[1])) : false;
      });
    });
  }
  function filter(reset) {
    if (!st.data) { later(function () {}); return; }
    var d = st.data, keep = kept(), only = null;
    st.keep = keep;
    if (keep) {
      only = {};
      d.ids.forEach(function (id, i) { if (keep[i]) { only[id] = true; } });
    }
    if (keep || st.filtered) { // a page never brushed has nothing to undo
      st.marks.forEach(function (el) {
        var out = only !== null ? only[el.getAttribute("data-task")] !== true : false;
        if (el.classList.contains("out") !== out) { el.classList.toggle("out", out); }
      });
      doc.dispatchEvent(new CustomEvent("runall:filter", {detail: {only: only, reset: reset}}));
    }
    st.filtered = !!keep;
    var sec = doc.getElementById("parcoords");
    if (sec) {
      var n = keep ? keep.filter(Boolean).length : 0;
      sec.querySelector(".count").textContent = keep ? n + " of " + d.ids.length + " trials in the ranges" : "";
      sec.querySelector(".clear").hidden = !keep;
      sec.setAttribute("data-brushed", JSON.stringify(st.brush));
    }
    drawParcoords();
    later(function () { drawContour(); drawScatters(); });
  }
  // later runs draw once the table and the parallel coordinates are painted: brushing
  // answers there at once, and the charts below follow; a newer brushing drops an older
  // one's. Each time every chart is drawn, the section's data-drawn counts one more.
  function later(draw) {
    var gen = ++st.gen;
    requestAnimationFrame(function () {
      requestAnimationFrame(function () { // the frame that shows the answer is under way
        setTimeout(function () {
          if (gen !== st.gen) { return; }
          draw();
          doc.dispatchEvent(new CustomEvent("runall:drawn"));
          var sec = doc.getElementById("parcoords");
          if (sec) { sec.setAttribute("data-drawn", String(gen)); }
        }, 0);
      });
    });
  }

  // The parallel coordinates' layout, in the canvas's pixels.
  function layout(cv) {
    var n = st.data.axes.length, w = cv.width, h = cv.height, l = 56, r = 72;
    var xs = st.data.axes.map(function (ax, i) { return n === 1 ? w / 2 : l + i * (w - l - r) / (n - 1); });
    return {xs: xs, top: 40, bottom: h - 26, w: w, h: h};
  }
  function yAt(lay, f) { return lay.bottom - f * (lay.bottom - lay.top); }
  function strokeLines(ctx, lay, list, style, width, dash) {
    if (list.length === 0) { return; }
    var axes = st.data.axes;
    ctx.setLineDash(dash || []);
    ctx.strokeStyle = style;
    ctx.lineWidth = width;
    ctx.beginPath();
    list.forEach(function (i, n) {
      var pen = false;
      if (n % 100 === 99) { ctx.stroke(); ctx.beginPath(); } // a path of thousands of lines strokes slowly
      axes.forEach(function (ax, a) {
        var v = ax.values[i];
        if (v === null) { pen = false; return; }
        var x = lay.xs[a], y = yAt(lay, frac(ax, v));
        if (pen) { ctx.lineTo(x, y); } else { ctx.moveTo(x, y); pen = true; }
      });
    });
    ctx.stroke();
  }
  // drawParcoords draws every line once on a canvas of its own, kept until the data
  // changes; a brushed page draws that faded and the kept lines over it, so that brushing
  // costs the lines kept, not all of them.
  function drawParcoords() {
    var sec = doc.getElementById("parcoords"), cv = sec ? sec.querySelector("canvas") : null;
    if (!cv || !st.data) { return; }
    var ctx = cv.getContext("2d"), lay = layout(cv);
    if (!st.bg || st.bg.width !== cv.width || st.bg.height !== cv.height) {
      st.bg = doc.createElement("canvas");
      st.bg.width = cv.width;
      st.bg.height = cv.height;
      drawLines(st.bg.getContext("2d"), lay, null);
    }
    cv.setAttribute("data-layout", JSON.stringify(lay));
    ctx.clearRect(0, 0, lay.w, lay.h);
    ctx.globalAlpha = st.keep ? 0.12 : 1;
    ctx.drawImage(st.bg, 0, 0);
    ctx.globalAlpha = 1;
    if (st.keep) { drawLines(ctx, lay, st.keep); }
    drawAxes(ctx, lay);
  }
  function drawLines(ctx, lay, keep) {
    var d = st.data, flat = {}, shades = [], best = [];
    for (var s = 0; SHADES !== s; s++) { shades.push([]); }
    d.ids.forEach(function (id, i) {
      var status = d.status[i];
      if (keep ? !keep[i] : false) { return; }
      if (status === "other" || status === "skipped") { return; } // waiting, or never run: no line yet
      if (id === d.best) { best.push(i); return; }
      if (FLAT[status]) { (flat[status] = flat[status] || []).push(i); return; }
      var g = goodness(i);
      if (0 > g) { (flat.pruned = flat.pruned || []).push(i); return; } // ended with no value of the objective
      shades[Math.round(g * (SHADES - 1))].push(i);
    });
    ["pruned", "failed", "stopped", "ignored", "paused"].forEach(function (k) { strokeLines(ctx, lay, flat[k] || [], FLAT[k], 1, DASHED[k]); });
    shades.forEach(function (list, s) { strokeLines(ctx, lay, list, shade(s / (SHADES - 1)), 1); });
    strokeLines(ctx, lay, flat.running || [], FLAT.running, 2);
    strokeLines(ctx, lay, best, "#bf3989", 3);
    ctx.setLineDash([]);
  }
  function drawAxes(ctx, lay) {
    ctx.font = "11px system-ui, sans-serif";
    st.data.axes.forEach(function (ax, a) {
      var x = lay.xs[a], r = st.brush[ax.name], drag = st.drag;
      if (drag ? drag.axis === a : false) { r = [unfrac(ax, drag.f0), unfrac(ax, drag.f1)].sort(function (p, q) { return p - q; }); }
      ctx.strokeStyle = "#57606a";
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(x, lay.top);
      ctx.lineTo(x, lay.bottom);
      ctx.stroke();
      if (r) {
        var y0 = yAt(lay, Math.max(0, Math.min(1, frac(ax, r[1])))), y1 = yAt(lay, Math.max(0, Math.min(1, frac(ax, r[0]))));
        ctx.fillStyle = "rgba(9,105,218,.25)";
        ctx.strokeStyle = "#0969da";
        ctx.fillRect(x - 7, y0, 14, Math.max(2, y1 - y0));
        ctx.strokeRect(x - 7, y0, 14, Math.max(2, y1 - y0));
      }
      ctx.textAlign = "right";
      ax.ticks.forEach(function (t) { halo(ctx, t.text, x - 4, yAt(lay, frac(ax, t.v)) + 4); });
      ctx.textAlign = "center";
      ctx.fillStyle = "#1f2328";
      ctx.fillText(ax.name + (ax.scale === "log" ? " (log)" : "") + (ax.kind === "objective" ? " \u2605" : ""), x, lay.top - 22);
      ctx.fillStyle = "#57606a";
      ctx.fillText(ax.kind === "objective" ? (ax.mode || "metric") : "", x, lay.top - 9);
    });
  }

  function halo(ctx, text, x, y) {
    ctx.strokeStyle = "rgba(255,255,255,.85)";
    ctx.lineWidth = 3;
    ctx.strokeText(text, x, y);
    ctx.fillStyle = "#57606a";
    ctx.fillText(text, x, y);
  }

  // Brushing: a drag along an axis keeps the trials within its range; a click clears it.
  function at(cv, e) {
    var b = cv.getBoundingClientRect();
    return {x: (e.clientX - b.left) * cv.width / b.width, y: (e.clientY - b.top) * cv.height / b.height};
  }
  function fracAt(lay, y) { return Math.max(0, Math.min(1, (lay.bottom - y) / (lay.bottom - lay.top))); }
  doc.addEventListener("mousedown", function (e) {
    var cv = e.target.closest ? e.target.closest("#parcoords canvas") : null;
    if (!cv || !st.data) { return; }
    var p = at(cv, e), lay = layout(cv), axis = -1;
    lay.xs.forEach(function (x, a) { if (12 > Math.abs(p.x - x)) { axis = a; } });
    if (axis === -1 || lay.top - 8 > p.y || p.y > lay.bottom + 8) { return; }
    e.preventDefault();
    st.drag = {cv: cv, axis: axis, y0: p.y, f0: fracAt(lay, p.y), f1: fracAt(lay, p.y)};
  });
  doc.addEventListener("mousemove", function (e) {
    var g = st.drag;
    if (!g) { return; }
    if (!g.cv.isConnected) { g.cv = doc.querySelector("#parcoords canvas") || g.cv; } // a live update replaced it
    g.y1 = at(g.cv, e).y;
    g.f1 = fracAt(layout(g.cv), g.y1);
    if (!st.frame) { st.frame = requestAnimationFrame(function () { st.frame = 0; drawParcoords(); }); }
  });
  doc.addEventListener("mouseup", function (e) {
    var g = st.drag;
    if (!g) { return; }
    st.drag = null;
    if (!g.cv.isConnected) { g.cv = doc.querySelector("#parcoords canvas") || g.cv; }
    var ax = st.data.axes[g.axis], y1 = at(g.cv, e).y, f1 = fracAt(layout(g.cv), y1);
    if (3 > Math.abs(y1 - g.y0)) {
      delete st.brush[ax.name];
    } else {
      st.brush[ax.name] = [unfrac(ax, Math.min(g.f0, f1)), unfrac(ax, Math.max(g.f0, f1))];
    }
    filter(true);
  });
  doc.addEventListener("click", function (e) {
    if (e.target.closest ? e.target.closest("#parcoords .clear") : false) {
      st.brush = {};
      filter(true);
    }
  });
  doc.addEventListener("change", function (e) {
    if (e.target.closest ? e.target.closest("#contour select") : false) { drawContour(); }
  });

  // The contour: the first objective over the chosen pair, each cell of a grid weighted by
  // the inverse square of its distance to each trial that succeeded (and is kept).
  function drawContour() {
    var sec = doc.getElementById("contour"), cv = sec ? sec.querySelector("canvas") : null;
    if (!cv || !st.data) { return; }
    var d = st.data, cx = sec.querySelector(".cx"), cy = sec.querySelector(".cy");
    if (st.pair) {
      if (axisIndex(st.pair[0]) !== -1) { cx.value = st.pair[0]; }
      if (axisIndex(st.pair[1]) !== -1) { cy.value = st.pair[1]; }
    }
    st.pair = [cx.value, cy.value];
    var ax = d.axes[axisIndex(cx.value)], ay = d.axes[axisIndex(cy.value)], az = d.axes[d.color];
    var ctx = cv.getContext("2d"), l = 56, r = 90, t = 12, b = 40, w = cv.width - l - r, h = cv.height - t - b;
    ctx.clearRect(0, 0, cv.width, cv.height);
    if (!ax || !ay || !az) { return; }
    var GX = 56, GY = 40, cells = {}, pts = [], n = 0;
    d.ids.forEach(function (id, i) {
      var x = ax.values[i], y = ay.values[i], z = az.values[i];
      if (x === null || y === null || z === null || d.status[i] !== "ok" || (st.keep ? !st.keep[i] : false)) { return; }
      var fx = frac(ax, x), fy = frac(ay, y), k = Math.min(GX - 1, Math.floor(fx * GX)) * GY + Math.min(GY - 1, Math.floor(fy * GY));
      var c = cells[k] || (cells[k] = [0, 0, 0, 0]);
      c[0] += fx; c[1] += fy; c[2] += z; c[3]++;
      n++;
    });
    sec.setAttribute("data-points", String(n));
    if (n === 0) { return; }
    // The trials in one cell of the grid count as one, at their mean, weighted by how many
    // they are: 10,000 trials cost what 2,240 cells do.
    Object.keys(cells).forEach(function (k) { var c = cells[k]; pts.push([c[0] / c[3], c[1] / c[3], c[2] / c[3], c[3]]); });
    var cw = w / GX, ch = h / GY;
    for (var gx = 0; GX !== gx; gx++) {
      for (var gy = 0; GY !== gy; gy++) {
        ctx.fillStyle = shade(goodnessOf(interpolate(pts, (gx + 0.5) / GX, (gy + 0.5) / GY)));
        ctx.fillRect(Math.floor(l + gx * cw), Math.floor(t + h - (gy + 1) * ch), Math.ceil(cw) + 1, Math.ceil(ch) + 1);
      }
    }
    ctx.fillStyle = "rgba(31,35,40,.55)";
    pts.forEach(function (q) { ctx.fillRect(l + q[0] * w - 1.5, t + h - q[1] * h - 1.5, 3, 3); });
    contourAxes(ctx, ax, ay, az, l, t, w, h);
  }
  function interpolate(pts, x, y) {
    var sw = 0, sz = 0;
    for (var i = 0; pts.length !== i; i++) {
      var dx = pts[i][0] - x, dy = pts[i][1] - y, d2 = dx * dx + dy * dy;
      if (1e-12 > d2) { return pts[i][2]; }
      sw += pts[i][3] / d2;
      sz += pts[i][3] * pts[i][2] / d2;
    }
    return sz / sw;
  }
  function contourAxes(ctx, ax, ay, az, l, t, w, h) {
    ctx.font = "11px system-ui, sans-serif";
    ctx.fillStyle = "#57606a";
    ctx.textAlign = "center";
    ax.ticks.forEach(function (k) { ctx.fillText(k.text, l + frac(ax, k.v) * w, t + h + 14); });
    ctx.fillText(ax.name + (ax.scale === "log" ? " (log)" : ""), l + w / 2, t + h + 32);
    ctx.textAlign = "right";
    ay.ticks.forEach(function (k) { ctx.fillText(k.text, l - 4, t + h - frac(ay, k.v) * h + 4); });
    ctx.save();
    ctx.translate(12, t + h / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = "center";
    ctx.fillText(ay.name + (ay.scale === "log" ? " (log)" : ""), 0, 0);
    ctx.restore();
    var s0 = st.sorted, kx = l + w + 10, best = s0[st.data.better === "min" ? 0 : s0.length - 1], worst = s0[st.data.better === "min" ? s0.length - 1 : 0];
    if (s0.length === 0) { return; }
    for (var s = 0; 100 !== s; s++) {
      ctx.fillStyle = shade(s / 99);
      ctx.fillRect(kx, t + h - (s + 1) * h / 100, 12, h / 100 + 0.5);
    }
    ctx.fillStyle = "#57606a";
    ctx.textAlign = "left";
    ctx.fillText(String(+best.toPrecision(4)), kx + 16, t + 10);
    ctx.fillText(String(+worst.toPrecision(4)), kx + 16, t + h);
  }

  // The scatter plots of a large sweep: the metric against each parameter, one canvas each.
  function drawScatters() {
    if (!st.data) { return; }
    doc.querySelectorAll("#params canvas.scatter").forEach(function (cv) {
      var d = st.data, ax = d.axes[axisIndex(cv.getAttribute("data-param"))], ay = d.axes[d.color];
      var ctx = cv.getContext("2d"), l = 56, t = 12, w = cv.width - l - 12, h = cv.height - t - 34, groups = {};
      ctx.clearRect(0, 0, cv.width, cv.height);
      if (!ax || !ay) { return; }
      d.ids.forEach(function (id, i) {
        var x = ax.values[i], y = ay.values[i];
        if (x === null || y === null) { return; }
        var k = (st.keep ? !st.keep[i] : false) ? "out" : id === d.best ? "best" : d.status[i] === "ok" ? "ok" : d.status[i] === "running" ? "running" : "failed";
        (groups[k] = groups[k] || []).push([l + 8 + frac(ax, x) * (w - 16), t + h - 4 - frac(ay, y) * (h - 8)]);
      });
      [["out", "rgba(208,215,222,.6)"], ["failed", "rgba(207,34,46,.6)"], ["ok", "rgba(9,105,218,.45)"], ["running", "#54aeff"], ["best", "#bf3989"]].forEach(function (g) {
        ctx.fillStyle = g[1];
        var r = g[0] === "best" ? 4 : 1.5;
        (groups[g[0]] || []).forEach(function (q) { ctx.fillRect(q[0] - r, q[1] - r, 2 * r, 2 * r); });
      });
      ctx.font = "11px system-ui, sans-serif";
      ctx.strokeStyle = "#8c959f";
      ctx.strokeRect(l + 0.5, t + 0.5, w, h);
      ctx.fillStyle = "#57606a";
      ctx.textAlign = "center";
      ax.ticks.forEach(function (k) { ctx.fillText(k.text, l + 8 + frac(ax, k.v) * (w - 16), t + h + 14); });
      ctx.fillText(ax.name + (ax.scale === "log" ? " (log)" : ""), l + w / 2, t + h + 30);
      ctx.textAlign = "right";
      ay.ticks.forEach(function (k) { ctx.fillText(k.text, l - 4, t + h - 4 - frac(ay, k.v) * (h - 8) + 4); });
    });
  }

  read();
  filter(false);
  doc.addEventListener("runall:swapped", function () { read(); filter(false); });
  window.addEventListener("resize", function () { drawParcoords(); });
})();
`
