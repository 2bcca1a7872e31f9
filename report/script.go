package report

import (
	"crypto/sha256"
	"encoding/base64"
)

// logPanel is where a served page shows a trial's log as it grows; a page written to disk
// links the log files instead, and leaves it hidden.
func (p *page) logPanel() {
	p.printf("<section id=\"log\" hidden=\"\">\n<h2>Log of <span class=\"name\"></span> <button type=\"button\" class=\"close\">close</button></h2>\n" +
		"<p class=\"note\"></p>\n<pre></pre>\n</section>\n")
}

// script is the page's behaviour, the same in a page written to disk and one served while
// the run goes on. Any page: the table sorts by the clicked column (numbers as numbers,
// empty cells last), pages through long tables, and hovering a trial anywhere (row, bar,
// curve, point) marks it everywhere. A served page (data-live: the version of the run's
// state it shows) also follows the run: told of a new version by the server's events, it
// fetches the page again and replaces the parts that changed, keeping the user's sort,
// page, scroll and hovered trial; and it shows a trial's log as it grows. Everything it
// puts on the page from the run arrives as HTML the server escaped, or as text
// (textContent). It holds no "<" or "&", so that the page is well-formed XML too.
const pageScript = `
(function () {
  "use strict";
  var doc = document, root = doc.documentElement, PAGE = 100;
  var state = {key: null, dir: 1, page: 0, hl: null, only: null, body: null, rows: [], ids: null, shown: null, rest: false};
  var parts = ["summary", "trials", "parcoords", "timeline", "sharing", "curves", "params", "contour", "importance", "front"], seen = {};
  if (root.getAttribute("data-live") !== null) { // only a page that follows the run compares its parts
    parts.forEach(function (id) { var el = doc.getElementById(id); seen[id] = el ? el.outerHTML : ""; });
  }

  // rows are the table's rows in its order, each with its trial's ID: read once per table
  // (a live update brings a new one), so that brushing 10,000 rows reads no attribute.
  function rows() {
    var body = doc.querySelector("#trials tbody");
    if (!body) { return []; }
    if (state.body !== body) {
      state.body = body;
      state.rows = Array.prototype.slice.call(body.rows);
      state.ids = new Map(state.rows.map(function (r) { return [r, r.getAttribute("data-task")]; }));
      state.shown = null;
    }
    return state.rows;
  }
  function sortRows() {
    var ths = Array.prototype.slice.call(doc.querySelectorAll("#trials th")), col = -1;
    ths.forEach(function (th, i) {
      th.removeAttribute("aria-sort");
      if (th.getAttribute("data-key") === state.key) { col = i; }
    });
    if (col === -1) { return; }
    ths[col].setAttribute("aria-sort", state.dir === 1 ? "ascending" : "descending");
    var body = doc.querySelector("#trials tbody"), list = rows();
    list.sort(function (a, b) {
      var x = a.cells[col].getAttribute("data-v"), y = b.cells[col].getAttribute("data-v");
      if ((x === "") !== (y === "")) { return x === "" ? 1 : -1; }
      var nx = Number(x), ny = Number(y);
      var c = (isNaN(nx) || isNaN(ny)) ? x.localeCompare(y) : nx - ny;
      return c * state.dir;
    });
    list.forEach(function (r) { body.appendChild(r); });
  }
  function button(text, page, enabled) {
    var b = doc.createElement("button");
    b.type = "button";
    b.textContent = text;
    b.setAttribute("data-page", String(page));
    b.disabled = !enabled;
    return b;
  }
  // paginate shows the current page's rows, or its first upto rows alone (the rest are left
  // for a later call), and says which rows these are.
  function paginate(upto) {
    var all = rows(), pager = doc.querySelector("#trials .pager"), only = state.only;
    var ids = state.ids, list = only ? all.filter(function (r) { return only[ids.get(r)] === true; }) : all;
    var pages = Math.ceil(list.length / PAGE), brushed = only ? " (" + list.length + " of " + all.length + " in the brushed ranges)" : "";
    if (!pager) { return; }
    state.page = Math.max(0, Math.min(state.page, pages - 1));
    var start = state.page * PAGE, show = list.slice(start, start + Math.min(PAGE, upto || PAGE)), shown = new Set(show);
    (state.shown || all).forEach(function (r) { // the rows shown until now (every one at first) that change
      if (!shown.has(r) ? !r.hidden : false) { r.hidden = true; }
    });
    show.forEach(function (r) { if (r.hidden) { r.hidden = false; } });
    state.shown = show;
    if (!(pages > 1)) {
      pager.hidden = !only;
      pager.textContent = only ? "rows in the brushed ranges: " + list.length + " of " + all.length : "";
      return;
    }
    var first = state.page * PAGE + 1, last = Math.min(list.length, first + PAGE - 1);
    pager.textContent = "";
    pager.appendChild(button("\u2039 previous", state.page - 1, state.page !== 0));
    pager.appendChild(doc.createTextNode(" rows " + first + "\u2013" + last + " of " + list.length + brushed + " "));
    pager.appendChild(button("next \u203A", state.page + 1, state.page !== pages - 1));
    pager.hidden = false;
  }
  function highlight(id) {
    doc.querySelectorAll(".hl").forEach(function (e) { e.classList.remove("hl"); });
    state.hl = id;
    if (id === null) { return; }
    doc.querySelectorAll("[data-task=\"" + id + "\"]").forEach(function (e) { e.classList.add("hl"); });
  }
  function taskOf(el) {
    var t = el.closest ? el.closest("[data-task]") : null;
    return t ? t.getAttribute("data-task") : null;
  }
  doc.addEventListener("mouseover", function (e) {
    var id = taskOf(e.target);
    if (id !== state.hl) { highlight(id); }
  });
  doc.addEventListener("click", function (e) {
    var th = e.target.closest("#trials th"), pg = e.target.closest("#trials .pager button");
    var log = e.target.closest("a.log"), close = e.target.closest("#log .close");
    if (th) {
      var key = th.getAttribute("data-key");
      state.dir = state.key === key ? -state.dir : 1;
      state.key = key;
      state.page = 0;
      sortRows();
      paginate();
    } else if (pg) {
      state.page = Number(pg.getAttribute("data-page"));
      paginate();
    } else if (log) {
      if (live !== null) {
        e.preventDefault();
        openLog(log.getAttribute("data-task"), log.closest("td").getAttribute("data-v"));
      }
    } else if (close) {
      closeLog();
    }
  });
  // A brushing's answer shows the rows in the table's view at once, with the parallel
  // coordinates; the rest of the page's rows follow with the charts below ("runall:drawn"),
  // so that the answer lays out a few dozen rows and not a hundred.
  // A live update's filtering (no reset) shows the whole page at once, as the update did.
  doc.addEventListener("runall:filter", function (e) {
    var first = e.detail.reset ? inView() : PAGE;
    state.only = e.detail.only;
    if (e.detail.reset) { state.page = 0; }
    state.rest = PAGE > first;
    paginate(first);
  });
  doc.addEventListener("runall:drawn", function () {
    if (state.rest) { state.rest = false; paginate(); }
  });
  // inView is how many of a page's rows reach the bottom of the table's view, and two
  // more; it reads the layout before the rows change it.
  function inView() {
    var wrap = doc.querySelector("#trials .wrap"), row = wrap ? wrap.querySelector("tbody tr:not([hidden])") : null;
    var h = row ? row.offsetHeight : 0;
    return h > 0 ? Math.ceil((wrap.scrollTop + wrap.clientHeight) / h) + 2 : PAGE;
  }
  paginate();

  var live = root.getAttribute("data-live");
  var status = doc.getElementById("live");
  function say(text) { status.textContent = text; status.hidden = false; }
  if (live === null) { return; }
  var busy = false, again = false;
  function swap(next) {
    var wrap = doc.querySelector("#trials .wrap");
    var top = wrap ? wrap.scrollTop : 0, left = wrap ? wrap.scrollLeft : 0;
    parts.forEach(function (id) {
      var fresh = next.getElementById(id), old = doc.getElementById(id);
      if (!fresh || !old) { return; }
      var html = fresh.outerHTML;
      if (html === seen[id]) { return; }
      seen[id] = html;
      old.replaceWith(doc.importNode(fresh, true));
    });
    sortRows();
    paginate();
    highlight(state.hl);
    doc.dispatchEvent(new CustomEvent("runall:swapped"));
    wrap = doc.querySelector("#trials .wrap");
    if (wrap) { wrap.scrollTop = top; wrap.scrollLeft = left; }
  }
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch("./", {cache: "no-store"}).then(function (r) {
      if (!r.ok) { throw new Error("HTTP " + r.status); }
      return r.text();
    }).then(function (html) {
      var next = new DOMParser().parseFromString(html, "text/html");
      swap(next);
      live = next.documentElement.getAttribute("data-live") || live;
      root.setAttribute("data-live", live);
      say("live: updated " + new Date().toLocaleTimeString());
    }).catch(function (err) {
      say("live: could not update (" + err.message + "); trying again at the next change");
    }).then(function () {
      busy = false;
      if (again) { again = false; refresh(); }
    });
  }
  var events = new EventSource("api/events");
  events.addEventListener("version", function (e) {
    if (e.data !== live) { refresh(); } else { say("live: following the run"); }
  });
  events.addEventListener("error", function () {
    say("live: runall does not answer (the run may have ended); the page shows its last state");
  });

  var logState = null;
  function openLog(id, name) {
    var panel = doc.getElementById("log");
    closeLog();
    logState = {id: id, from: -1, pre: panel.querySelector("pre"), note: panel.querySelector(".note")};
    panel.querySelector(".name").textContent = name;
    logState.pre.textContent = "";
    logState.note.textContent = "";
    panel.hidden = false;
    panel.scrollIntoView();
    pollLog(logState);
  }
  function closeLog() {
    if (logState) { clearTimeout(logState.timer); }
    logState = null;
    doc.getElementById("log").hidden = true;
  }
  function pollLog(st) {
    fetch("api/log/" + encodeURIComponent(st.id) + "?from=" + st.from, {cache: "no-store"}).then(function (r) {
      if (!r.ok) { throw new Error("HTTP " + r.status); }
      return r.json();
    }).then(function (j) {
      if (st !== logState) { return; }
      var pre = st.pre, atEnd = pre.scrollTop + pre.clientHeight + 4 - pre.scrollHeight;
      if (st.from === -1) {
        if (j.start !== 0) { st.note.textContent = "The first " + j.start + " bytes are left out: its tail follows."; }
      }
      st.from = j.next;
      // A bar redrawn with \r shows its newest state alone, as a terminal does.
      pre.textContent = (pre.textContent + j.text).replace(/[^\r\n]*\r(?=[^\r\n])/g, "").slice(-524288);
      if (atEnd >= 0) { pre.scrollTop = pre.scrollHeight; }
      st.timer = setTimeout(function () { pollLog(st); }, 1000);
    }).catch(function (err) {
      if (st !== logState) { return; }
      st.note.textContent = "The log cannot be read now (" + err.message + "); trying again.";
      st.timer = setTimeout(function () { pollLog(st); }, 3000);
    });
  }
})();
`

// ContentSecurityPolicy is the policy a server sends with the page: the browser runs the
// page's own script and style, nothing else (no handler or script that a trial's name or
// output might smuggle in), fetches only from where the page came, and shows it in no
// frame.
func ContentSecurityPolicy() string {
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	return "default-src 'none'; script-src " + hash(script) + "; style-src " + hash(css) +
		"; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}
