
(function () {
  "use strict";
  // Everything the trace holds is put into the page with textContent, as
  // text: never as markup.
  var data = JSON.parse(document.getElementById("mcpx-trace").textContent);
  var app = document.getElementById("app");
  var items = [];
  var byId = {};

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }

  function fmtDur(us) {
    if (us < 1000) { return us + " µs"; }
    if (us < 1000000) { return (us / 1000).toFixed(1) + " ms"; }
    return (us / 1000000).toFixed(2) + " s";
  }

  function fmtTime(us) {
    return (us / 1000000).toFixed(3) + " s";
  }

  // pretty re-indents JSON text without parsing its values, so that
  // numbers and strings are shown exactly as recorded.
  function pretty(text) {
    try { JSON.parse(text); } catch (e) { return text; }
    var out = [], ind = 0, inStr = false, esc = false, i, c, j;
    function nl(n) { return "\n" + new Array(n + 1).join("  "); }
    for (i = 0; i < text.length; i++) {
      c = text.charAt(i);
      if (inStr) {
        out.push(c);
        if (esc) { esc = false; } else if (c === "\\") { esc = true; } else if (c === "\"") { inStr = false; }
        continue;
      }
      if (c === "\"") { inStr = true; out.push(c); continue; }
      if (c === " " || c === "\n" || c === "\t" || c === "\r") { continue; }
      if (c === "{" || c === "[") {
        j = i + 1;
        while (j < text.length && " \n\t\r".indexOf(text.charAt(j)) >= 0) { j++; }
        if (text.charAt(j) === (c === "{" ? "}" : "]")) { out.push(c, text.charAt(j)); i = j; continue; }
        ind++;
        out.push(c, nl(ind));
        continue;
      }
      if (c === "}" || c === "]") { ind--; out.push(nl(ind), c); continue; }
      if (c === ",") { out.push(",", nl(ind)); continue; }
      if (c === ":") { out.push(": "); continue; }
      out.push(c);
    }
    return out.join("");
  }

  var kindLabel = {
    request: "request", response: "response", notification: "notification", invalid: "invalid",
    stderr: "stderr", note: "note", http: "http", stream: "stream"
  };
  function label(r) {
    if (r.kind === "request" && r.dir === "s2c") { return "server request"; }
    return kindLabel[r.kind] || r.kind;
  }
  function isMessage(r) {
    return r.kind === "request" || r.kind === "response" || r.kind === "notification" || r.kind === "invalid";
  }

  // ---- header and controls
  var h = data.header;
  var header = el("header");
  header.appendChild(el("h1", null, h.title));
  var info = [];
  if (h.created) { info.push("recorded " + h.created); }
  if (h.mcpx) { info.push("by mcpx " + h.mcpx); }
  if (h.target) { info.push(h.target); }
  info.push(h.redacted ? "secrets redacted" : "NOT redacted: may hold secrets");
  info.push("exported by " + h.exporter);
  header.appendChild(el("p", "info", info.join(" · ")));

  var controls = el("div", "controls");
  function select(id, title, options) {
    var s = el("select");
    s.id = id;
    s.title = title;
    options.forEach(function (o) {
      var opt = el("option", null, o[1]);
      opt.value = o[0];
      s.appendChild(opt);
    });
    controls.appendChild(s);
    return s;
  }
  var sessionOpts = [["", "all sessions"]];
  data.sessions.forEach(function (s) { sessionOpts.push([String(s.n), "session " + s.n + ": " + s.text]); });
  var sessionSel = select("f-session", "session", sessionOpts);
  var dirSel = select("f-dir", "direction", [["", "both directions"], ["c2s", "→ client to server"], ["s2c", "← server to client"]]);
  var methods = {};
  data.sessions.forEach(function (s) { s.rows.forEach(function (r) { if (r.method) { methods[r.method] = true; } }); });
  var methodOpts = [["", "all methods"]];
  Object.keys(methods).sort().forEach(function (m) { methodOpts.push([m, m]); });
  var methodSel = select("f-method", "method", methodOpts);
  function check(id, text, on) {
    var l = el("label");
    var c = el("input");
    c.type = "checkbox";
    c.id = id;
    c.checked = on;
    l.appendChild(c);
    l.appendChild(document.createTextNode(text));
    controls.appendChild(l);
    return c;
  }
  var transportBox = check("f-transport", "transport events", true);
  var errorsBox = check("f-errors", "errors only", false);
  var search = el("input");
  search.type = "search";
  search.id = "f-search";
  search.placeholder = "search methods, ids and messages";
  controls.appendChild(search);
  var count = el("span", "count");
  count.id = "count";
  controls.appendChild(count);
  header.appendChild(controls);
  app.appendChild(header);

  // ---- sessions
  var main = el("main");
  var sections = [];
  data.sessions.forEach(function (s) {
    var sec = el("section", "session");
    sec.dataset.session = String(s.n);
    sec.appendChild(el("h2", null, "Session " + s.n + ": " + s.text));
    var sub = [s.transport];
    if (s.target && s.text.indexOf(s.target) < 0) { sub.push(s.target); }
    if (s.client) { sub.push("host " + s.client); }
    if (s.prelude) { sub.push("recording began mid-session"); }
    sub.push(s.rows.length + " events over " + fmtDur(s.end - s.start));
    sec.appendChild(el("p", "sub", sub.join(" · ")));
    var rows = el("div", "rows");
    var span = Math.max(s.end - s.start, 1);
    if (s.rows.length === 0) { rows.appendChild(el("div", "empty", "no events")); }
    s.rows.forEach(function (r) {
      var item = el("div", "item kind-" + r.kind + (r.dir ? " dir-" + r.dir : "") + (r.error ? " error" : "") + (r.pending ? " pending" : ""));
      item.id = r.id;
      item.dataset.kind = r.kind;
      item.dataset.dir = r.dir || "";
      item.dataset.method = r.method || "";
      item.dataset.session = String(s.n);
      if (r.pair) { item.dataset.pair = r.pair; }
      var row = el("div", "row");
      row.appendChild(el("span", "t", fmtTime(r.t)));
      row.appendChild(el("span", "arrow", r.dir === "c2s" ? "→" : (r.dir === "s2c" ? "←" : "·")));
      row.appendChild(el("span", "kind", label(r) + (r.batch ? " (batch)" : "")));
      row.appendChild(el("span", "method", r.method || ""));
      row.appendChild(el("span", "rid", r.rpcId ? "#" + r.rpcId : ""));
      var sum = r.error ? r.error + (r.text ? " · " + r.text : "") : (r.text || "");
      var sumEl = el("span", "sum", sum);
      sumEl.title = sum;
      row.appendChild(sumEl);
      var durText = "";
      if (r.pending) { durText = "no response"; } else if (r.pair && r.kind === "request") { durText = fmtDur(r.dur); }
      row.appendChild(el("span", "dur", durText));
      var track = el("span", "track");
      var left = (r.t - s.start) / span * 100;
      if (r.kind === "request") {
        var bar = el("span", "bar" + (r.pending ? " pending" : ""));
        var w = r.pending ? 100 - left : (r.dur || 0) / span * 100;
        bar.style.left = left + "%";
        bar.style.width = Math.max(w, 0) + "%";
        bar.title = r.pending ? "no response recorded" : fmtDur(r.dur || 0);
        track.appendChild(bar);
      } else {
        var tick = el("span", "tick");
        tick.style.left = left + "%";
        track.appendChild(tick);
      }
      row.appendChild(track);
      item.appendChild(row);
      row.addEventListener("click", function () { toggle(item, r); });
      row.addEventListener("mouseenter", function () { highlight(r, true); });
      row.addEventListener("mouseleave", function () { highlight(r, false); });
      rows.appendChild(item);
      var hay = [r.kind, label(r), r.method, r.rpcId, r.error, r.text, r.frame, (r.meta || []).join("\n")].join("\n").toLowerCase();
      var entry = { item: item, row: r, session: String(s.n), hay: hay, section: sec };
      items.push(entry);
      byId[r.id] = entry;
    });
    sec.appendChild(rows);
    main.appendChild(sec);
    sections.push(sec);
  });
  app.appendChild(main);

  function highlight(r, on) {
    if (!r.pair || !byId[r.pair]) { return; }
    byId[r.pair].item.firstChild.classList.toggle("hl", on);
  }

  function toggle(item, r) {
    var d = item.querySelector(".detail");
    if (d) {
      d.hidden = !d.hidden;
      item.classList.toggle("open", !d.hidden);
      return;
    }
    d = el("div", "detail");
    (r.meta || []).forEach(function (m) { d.appendChild(el("p", "meta", m)); });
    if (r.pair && byId[r.pair]) {
      var b = el("button", "jump", r.kind === "request" ? "go to the response (" + fmtDur(r.dur) + ")" : "go to the request");
      b.addEventListener("click", function (ev) {
        ev.stopPropagation();
        var p = byId[r.pair].item;
        p.hidden = false;
        p.scrollIntoView({ block: "center" });
        p.classList.remove("flash");
        void p.offsetWidth;
        p.classList.add("flash");
      });
      d.appendChild(b);
    }
    var pre = el("pre", "json", r.frame !== undefined && r.frame !== "" ? pretty(r.frame) : (r.text || ""));
    d.appendChild(pre);
    item.appendChild(d);
    item.classList.add("open");
  }

  function apply() {
    var sess = sessionSel.value, dir = dirSel.value, method = methodSel.value;
    var transport = transportBox.checked, errors = errorsBox.checked;
    var q = search.value.trim().toLowerCase();
    var shown = 0, perSection = new Map();
    items.forEach(function (e) {
      var r = e.row;
      var ok = (sess === "" || e.session === sess) &&
        (dir === "" || r.dir === dir) &&
        (method === "" || r.method === method) &&
        (transport || isMessage(r)) &&
        (!errors || !!r.error) &&
        (q === "" || e.hay.indexOf(q) >= 0);
      e.item.hidden = !ok;
      if (ok) {
        shown++;
        perSection.set(e.section, true);
      }
    });
    sections.forEach(function (sec) {
      sec.hidden = sess !== "" ? sec.dataset.session !== sess : (!perSection.has(sec) && items.length > 0 && shown < items.length);
    });
    count.textContent = shown + " of " + items.length + " events";
  }
  [sessionSel, dirSel, methodSel, transportBox, errorsBox].forEach(function (c) { c.addEventListener("change", apply); });
  search.addEventListener("input", apply);
  apply();
  document.body.dataset.ready = "true";
})();
