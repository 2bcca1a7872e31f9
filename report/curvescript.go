package report

// curveScript draws a large sweep's curves (curvecanvas.go) on their canvas: the ordinary
// ones, then the pruned (dashed), the running and the best (thick), each stroked alone (one
// path of 10,000 translucent curves costs Chrome seconds to stroke; 10,000 paths, tens of ms),
// leaving out the trials outside the brushed ranges ("runall:filter"; drawn with the other
// charts, at "runall:drawn"), as the SVG's are hidden; a live page's update reads the new data there too. It holds no "<" or
// "&".
const curveScript = `
(function () {
  "use strict";
  var doc = document, only = null;
  var STYLE = {line: ["rgba(140,149,159,.35)", 1.2, []], pruned: ["rgba(140,149,159,.35)", 1.2, [3, 2]],
    running: ["#0969da", 1.5, []], best: ["#bf3989", 2.5, []]};
  function draw() {
    var el = doc.getElementById("curve-data"), cv = doc.querySelector("#curves canvas.curves");
    if (!el || !cv) { return; }
    var d = JSON.parse(el.textContent), ctx = cv.getContext("2d");
    ctx.clearRect(0, 0, cv.width, cv.height);
    ["line", "pruned", "running", "best"].forEach(function (kind) {
      var s = STYLE[kind];
      ctx.strokeStyle = s[0];
      ctx.lineWidth = s[1];
      ctx.setLineDash(s[2]);
      d.ids.forEach(function (id, i) {
        if (d.kind[i] !== kind || (only ? only[id] !== true : false)) { return; }
        var xy = d.xy[i];
        ctx.beginPath();
        if (xy.length === 2) {
          ctx.arc(xy[0], xy[1], 2.5, 0, 2 * Math.PI);
        } else {
          ctx.moveTo(xy[0], xy[1]);
          for (var k = 2; xy.length !== k; k += 2) { ctx.lineTo(xy[k], xy[k + 1]); }
        }
        ctx.stroke();
      });
    });
  }
  doc.addEventListener("runall:filter", function (e) { only = e.detail.only; });
  doc.addEventListener("runall:drawn", draw); // with the other charts, after the table's answer
})();
`
