package report

// brushScript is brushing the parallel coordinates (part of plotScript): a drag along an
// axis keeps the trials within its range, a click on an axis clears it, and the button
// clears them all. While the mouse moves only the ranges' layer is drawn again; the
// release filters. It holds no "<" or "&".
const brushScript = `
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
    if (!st.frame) { st.frame = requestAnimationFrame(function () { st.frame = 0; drawRanges(); }); }
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
`
