package report

// script is everything the page runs: the table, hover and live updates (pageScript), and
// the canvas plots (plotScript).
const script = pageScript + plotScript + curveScript

// plotScript draws the canvas plots from the plot data (plotdata.go): the parallel
// coordinates (parcoordsScript), with a range brushed on any axis keeping only the trials
// within it (the table is told by a "runall:filter" event; the SVG charts' marks of the
// others get the class "out"; the contour interpolates the trials kept), and the contour
// of the chosen pair and a large sweep's scatter plots (chartScript). A live page's update
// ("runall:swapped") reads the new data and draws again, keeping the ranges and the pair.
// The pieces are one function's body, in four constants so that each file holds one
// concern. Like pageScript, it holds no "<" or "&".
const plotScript = plotHead + parcoordsScript + brushScript + chartScript + `
  read();
  filter(false);
  doc.addEventListener("runall:swapped", function () { read(); filter(false); });
})();
`

// plotHead holds the state, reading the data, the scales and colours, and filtering: a
// brushing answers in the table and the parallel coordinates at once, and the charts below
// follow once that answer is painted.
const plotHead = `
(function () {
  "use strict";
  var doc = document, SHADES = 32;
  var st = {data: null, brush: {}, drag: null, keep: null, pair: null, frame: 0, filtered: false, gen: 0, marks: [],
    groups: [], ys: null, drawnOn: null};
  var RAMP = [[84, 174, 255], [9, 105, 218], [130, 80, 223], [191, 57, 137]];

  function read() {
    var el = doc.getElementById("plot-data");
    st.data = el ? JSON.parse(el.textContent) : null;
    st.drawnOn = null; // every layer of the parallel coordinates is drawn again
    st.marks = doc.querySelectorAll("#curves [data-task], #params [data-task], #front [data-task]");
    if (st.data) { ranks(); group(); }
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
  // kept says which trials lie within every brushed range (1 kept, 0 not), one axis's
  // values at a time: null when none is brushed.
  function kept() {
    var d = st.data, n = d.ids.length, keep = null;
    Object.keys(st.brush).forEach(function (name) {
      var a = axisIndex(name);
      if (a === -1) { return; }
      var r = st.brush[name], lo = r[0] - 1e-12 * Math.abs(r[0]), hi = r[1] + 1e-12 * Math.abs(r[1]), vs = d.axes[a].values;
      if (!keep) { keep = new Uint8Array(n).fill(1); }
      for (var i = 0; n !== i; i++) {
        var v = vs[i];
        if (v === null || lo > v || v > hi) { keep[i] = 0; }
      }
    });
    return keep;
  }
  function filter(reset) {
    if (!st.data) { later(function () {}); return; }
    var d = st.data, keep = kept(), only = null, n = 0;
    st.keep = keep;
    if (keep) {
      only = {};
      d.ids.forEach(function (id, i) { if (keep[i]) { only[id] = true; n++; } });
    }
    if (keep || st.filtered) { // a page never brushed has nothing to undo
      st.marks.forEach(function (el) {
        var out = only !== null ? only[el.getAttribute("data-task")] !== true : false;
        if (el.classList.contains("out") !== out) { el.classList.toggle("out", out); }
      });
      doc.dispatchEvent(new CustomEvent("runall:filter", {detail: {only: only, reset: reset}}));
    }
    st.filtered = !!keep;
    drawParcoords(); // after the table read its layout (before anything changed it)
    var sec = doc.getElementById("parcoords");
    if (sec) {
      sec.querySelector(".count").textContent = keep ? n + " of " + d.ids.length + " trials in the ranges" : "";
      sec.querySelector(".clear").hidden = !keep;
      sec.setAttribute("data-brushed", JSON.stringify(st.brush));
    }
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
`
