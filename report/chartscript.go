package report

// chartScript draws the contour of the chosen pair and a large sweep's scatter plots (part of
// plotScript), the trials outside the brushed ranges left out of the contour and drawn apart
// in the scatter plots. It holds no "<" or "&".
const chartScript = `
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

`
