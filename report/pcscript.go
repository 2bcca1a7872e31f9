package report

// parcoordsScript draws the parallel coordinates (part of plotScript) on four canvases
// stacked in one place (parcoords.go): every line, drawn once for each data and faded by
// the style while a range is brushed; the lines kept, drawn at each brushing; the brushed
// ranges, drawn at each move of a drag; and on top the axes, drawn once, which take the
// mouse. Each trial's height on each axis and its line's colour are worked out once for
// each data, so that a brushing strokes the kept lines and does nothing else. Lines are
// stroked in batches of one colour each, so that 10,000 trials are a few dozen strokes. It
// holds no "<" or "&".
const parcoordsScript = `
  var DASHED = {pruned: [5, 4], paused: [2, 3], failed: [1, 3], stopped: [1, 3], ignored: [1, 3]};
  var FLAT = {pruned: "rgba(140,149,159,.45)", paused: "rgba(130,80,223,.6)", failed: "rgba(207,34,46,.45)",
    stopped: "rgba(188,76,0,.45)", ignored: "rgba(154,103,0,.45)", running: "rgba(84,174,255,.9)"};

  // layers are the four canvases, the axes' first (the one tests and the mouse find).
  function layers() {
    var sec = doc.getElementById("parcoords"), cvs = sec ? sec.querySelectorAll("canvas") : [];
    return cvs.length === 4 ? {axes: cvs[0], all: cvs[1], kept: cvs[2], ranges: cvs[3]} : null;
  }
  // The parallel coordinates' layout, in the canvas's pixels.
  function layout(cv) {
    var n = st.data.axes.length, w = cv.width, h = cv.height, l = 56, r = 72;
    var xs = st.data.axes.map(function (ax, i) { return n === 1 ? w / 2 : l + i * (w - l - r) / (n - 1); });
    return {xs: xs, top: 40, bottom: h - 26, w: w, h: h};
  }
  function yAt(lay, f) { return lay.bottom - f * (lay.bottom - lay.top); }
  // heights are each trial's height on each axis (trial i's on axis a at i * axes + a),
  // NaN where it has no value.
  function heights(lay) {
    var axes = st.data.axes, m = axes.length, n = st.data.ids.length, ys = new Float32Array(n * m);
    axes.forEach(function (ax, a) {
      for (var i = 0; n !== i; i++) { var v = ax.values[i]; ys[i * m + a] = v === null ? NaN : yAt(lay, frac(ax, v)); }
    });
    return ys;
  }
  // group sorts the trials drawn into the batches they are stroked in, in the order drawn:
  // the pruned and the others that ended early (dashed), the shades of the objective, the
  // running, and the best on top.
  function group() {
    var d = st.data, flat = {}, shades = [], best = [];
    for (var s = 0; SHADES !== s; s++) { shades.push([]); }
    d.ids.forEach(function (id, i) {
      var status = d.status[i];
      if (status === "other" || status === "skipped") { return; } // waiting, or never run: no line yet
      if (id === d.best) { best.push(i); return; }
      if (FLAT[status]) { (flat[status] = flat[status] || []).push(i); return; }
      var g = goodness(i);
      if (0 > g) { (flat.pruned = flat.pruned || []).push(i); return; } // ended with no value of the objective
      shades[Math.round(g * (SHADES - 1))].push(i);
    });
    st.groups = [];
    ["pruned", "failed", "stopped", "ignored", "paused"].forEach(function (k) { st.groups.push({list: flat[k] || [], style: FLAT[k], width: 1, dash: DASHED[k]}); });
    shades.forEach(function (list, s) { st.groups.push({list: list, style: shade(s / (SHADES - 1)), width: 1, dash: []}); });
    st.groups.push({list: flat.running || [], style: FLAT.running, width: 2, dash: []});
    st.groups.push({list: best, style: "#bf3989", width: 3, dash: []});
  }

  // drawParcoords draws the layers that changed: all of them for new data or a new canvas
  // (a live update), else the kept lines and the ranges.
  function drawParcoords() {
    var ly = layers();
    if (!ly || !st.data) { return; }
    var lay = layout(ly.axes);
    if (st.drawnOn !== ly.axes) {
      st.drawnOn = ly.axes;
      st.ys = heights(lay);
      ly.axes.setAttribute("data-layout", JSON.stringify(lay));
      clear(ly.all);
      drawLines(ly.all, lay, null);
      drawAxes(ly.axes.getContext("2d"), lay);
    }
    if (ly.all.classList.contains("faded") !== !!st.keep) { ly.all.classList.toggle("faded", !!st.keep); }
    if (st.keptDrawn) { clear(ly.kept); }
    if (st.keep) { drawLines(ly.kept, lay, st.keep); }
    st.keptDrawn = !!st.keep;
    drawRanges();
  }
  function clear(cv) { cv.getContext("2d").clearRect(0, 0, cv.width, cv.height); }
  // drawLines strokes on a layer the lines of the trials kept (every one for keep null).
  function drawLines(cv, lay, keep) {
    var ctx = cv.getContext("2d"), m = st.data.axes.length;
    st.groups.forEach(function (g) {
      var list = keep ? g.list.filter(function (i) { return keep[i] === 1; }) : g.list;
      if (list.length !== 0) { strokeLines(ctx, lay.xs, m, list, g); }
    });
    ctx.setLineDash([]);
  }
  function strokeLines(ctx, xs, m, list, g) {
    var ys = st.ys;
    ctx.setLineDash(g.dash);
    ctx.strokeStyle = g.style;
    ctx.lineWidth = g.width;
    ctx.beginPath();
    for (var n = 0; list.length !== n; n++) {
      if (n % 100 === 99) { ctx.stroke(); ctx.beginPath(); } // a path of thousands of lines strokes slowly
      var o = list[n] * m, pen = false;
      for (var a = 0; m !== a; a++) {
        var y = ys[o + a];
        if (y !== y) { pen = false; continue; } // NaN: no value on this axis
        if (pen) { ctx.lineTo(xs[a], y); } else { ctx.moveTo(xs[a], y); pen = true; }
      }
    }
    ctx.stroke();
  }
  // drawRanges draws each brushed range, and the one being dragged, as a box on its axis.
  function drawRanges() {
    var ly = layers();
    if (!ly || !st.data) { return; }
    var cv = ly.ranges, ctx = cv.getContext("2d"), lay = layout(cv);
    clear(cv);
    ctx.fillStyle = "rgba(9,105,218,.25)";
    ctx.strokeStyle = "#0969da";
    ctx.lineWidth = 1;
    st.data.axes.forEach(function (ax, a) {
      var x = lay.xs[a], r = st.brush[ax.name], drag = st.drag;
      if (drag ? drag.axis === a : false) { r = [unfrac(ax, drag.f0), unfrac(ax, drag.f1)].sort(function (p, q) { return p - q; }); }
      if (!r) { return; }
      var y0 = yAt(lay, Math.max(0, Math.min(1, frac(ax, r[1])))), y1 = yAt(lay, Math.max(0, Math.min(1, frac(ax, r[0]))));
      ctx.fillRect(x - 7, y0, 14, Math.max(2, y1 - y0));
      ctx.strokeRect(x - 7, y0, 14, Math.max(2, y1 - y0));
    });
  }
  function drawAxes(ctx, lay) {
    ctx.clearRect(0, 0, lay.w, lay.h);
    ctx.font = "11px system-ui, sans-serif";
    st.data.axes.forEach(function (ax, a) {
      var x = lay.xs[a];
      ctx.strokeStyle = "#57606a";
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(x, lay.top);
      ctx.lineTo(x, lay.bottom);
      ctx.stroke();
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
`
