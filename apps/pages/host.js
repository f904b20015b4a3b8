// The mcpx host page: shows each view in a sandbox proxy frame of the
// sandbox origin and relays postMessage between those frames and mcpx.
// mcpx speaks the protocol; this page only carries messages: host→view
// from an event stream, view→host in POSTs, in order. Text from servers
// and views is only ever set as textContent.
"use strict";
(() => {
  const cfg = document.documentElement.dataset;
  const sandboxOrigin = cfg.sandboxOrigin;
  // Both bounds are mcpx's, in bytes of UTF-8: a message larger than
  // maxMessage is dropped here, and a post larger than maxPost is refused
  // whole by mcpx, so each post takes only the messages that fit.
  const maxMessage = Number(cfg.maxMessage) || 4194304;
  const maxPost = Number(cfg.maxPost) || maxMessage + 1048576;
  const POST_RESERVE = 65536; // for the post's other members
  const MAX_QUEUE = 1000; // messages waiting to be posted; more are dropped
  // Answers to mcpx's own requests (a teardown's, a tool input's) may
  // take this many more: a view that floods must not have the answers
  // that mcpx waits for dropped with its flood.
  const ANSWER_RESERVE = 100;
  const MAX_BATCH = 64;
  // A view's notifications beyond mcpx's rate limit (rate a second on
  // average, burst at once) are dropped here, before they are serialized
  // and carried: mcpx would refuse them, and a flood would otherwise fill
  // the queue in front of the answers mcpx waits for (a teardown's, after
  // 5000 notifications, came seconds late on a busy machine). The view's
  // sandbox drops them first (sandbox.js); this holds when a view got
  // round it (it is of the sandbox's origin). Requests still go, for mcpx
  // to answer (refusing them when over its limit: a view must not wait
  // for an answer that never comes), and answers do.
  const rate = Number(cfg.rate) || 50;
  const burst = Number(cfg.burst) || 200;
  const utf8 = new TextEncoder();
  const list = document.getElementById("views");
  const status = document.getElementById("status");
  const views = new Map(); // id -> {box, frame, state, mode}

  let conn = null;
  let queue = []; // {view, text, bytes}
  const dropped = new Map(); // view -> {count, why}
  const modes = []; // {view, mode}: display mode changes the person asked for
  let envDirty = true;
  let posting = false;

  function setStatus(text, cls) {
    status.textContent = text;
    status.className = cls || "";
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // The height of a full-screen view's head (host.css), above its frame.
  const FULL_HEAD = 40;

  // env is the browser's environment, and the space of a view's frame
  // (its content box: what the view's document gets), which the view is
  // told in containerDimensions: inline, the views' column (a frame is
  // 100% of it wide), full screen, the viewport (without its scroll
  // bars) less the head.
  function env() {
    const bar = document.getElementById("bar");
    const barH = bar ? bar.offsetHeight : 0;
    const cs = getComputedStyle(list);
    const root = document.documentElement;
    let tz = "";
    try { tz = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { /* none */ }
    return {
      timeZone: tz,
      locale: navigator.language || "",
      dark: window.matchMedia("(prefers-color-scheme: dark)").matches,
      inline: {
        width: Math.floor(list.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight)),
        maxHeight: Math.max(200, Math.floor((window.innerHeight - barH) * 0.9)),
      },
      fullscreen: { width: root.clientWidth, height: Math.max(100, root.clientHeight - FULL_HEAD) },
    };
  }

  function drop(view, why, n) {
    const d = dropped.get(view) || { count: 0, why };
    d.count += n || 1;
    dropped.set(view, d);
  }

  // isAnswer reports whether data is a JSON-RPC response: an id, a result
  // or an error, no method.
  function isAnswer(data) {
    return data !== null && typeof data === "object" && !Array.isArray(data) && "id" in data &&
      ("result" in data || "error" in data) && !("method" in data);
  }

  function isNotification(data) {
    return data !== null && typeof data === "object" && !Array.isArray(data) && "method" in data && !("id" in data);
  }

  // allow takes a token from v's bucket: false when the view sent more
  // than burst at once, or more than rate a second on average.
  function allow(v) {
    const now = performance.now();
    v.tokens = Math.min(burst, v.tokens + ((now - v.last) / 1000) * rate);
    v.last = now;
    if (v.tokens < 1) return false;
    v.tokens--;
    return true;
  }

  function enqueue(view, data) {
    const v = views.get(view);
    if (v && isNotification(data) && !allow(v)) return drop(view, "too many messages");
    let text;
    try {
      text = JSON.stringify(data);
      if (text === undefined) text = "null";
    } catch (e) {
      text = JSON.stringify("unserializable message: " + e);
    }
    // A UTF-16 code unit is at least one byte of UTF-8: the length alone
    // rules out most messages that are too large without encoding them.
    if (text.length > maxMessage) return drop(view, "too large");
    const bytes = utf8.encode(text).length + view.length + 32;
    if (bytes - view.length - 32 > maxMessage) return drop(view, "too large");
    if (queue.length >= MAX_QUEUE && (!isAnswer(data) || queue.length >= MAX_QUEUE + ANSWER_RESERVE)) return drop(view, "queue full");
    queue.push({ view, text, bytes });
    flush();
  }

  // nextBatch takes the queued messages of the next post: at least one,
  // at most MAX_BATCH, and no more bytes than fit in a post.
  function nextBatch() {
    let n = 0;
    let size = 0;
    while (n < queue.length && n < MAX_BATCH && (n === 0 || size + queue[n].bytes <= maxPost - POST_RESERVE)) {
      size += queue[n].bytes;
      n++;
    }
    return queue.splice(0, n);
  }

  async function flush() {
    if (posting || !conn) return;
    posting = true;
    try {
      while (conn && (queue.length || dropped.size || modes.length || envDirty)) {
        const batch = nextBatch();
        const parts = ['"messages":[' + batch.map((m) => '{"view":' + JSON.stringify(m.view) + ',"message":' + m.text + "}").join(",") + "]"];
        if (dropped.size) {
          parts.push('"dropped":' + JSON.stringify([...dropped].map(([view, d]) => ({ view, count: d.count, why: d.why }))));
          dropped.clear();
        }
        if (modes.length) parts.push('"modes":' + JSON.stringify(modes.splice(0)));
        if (envDirty) {
          parts.push('"env":' + JSON.stringify(env()));
          envDirty = false;
        }
        const res = await fetch(cfg.post + "?c=" + encodeURIComponent(conn), {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: "{" + parts.join(",") + "}",
          cache: "no-store",
          credentials: "omit",
        });
        if (!res.ok) {
          setStatus("mcpx refused a message (" + res.status + ")", "error");
          if (res.status === 409) conn = null;
        }
      }
    } catch (e) {
      setStatus("mcpx is not reachable: " + e, "error");
    } finally {
      posting = false;
    }
  }

  function viewState(v, text, cls) {
    v.state.textContent = text;
    v.state.className = "state" + (cls ? " " + cls : "");
  }

  function addView(d) {
    const old = views.get(d.id);
    if (old) old.box.remove();
    const empty = document.getElementById("empty");
    if (empty) empty.remove();
    const box = el("section", "view");
    box.id = d.id;
    if (d.border !== false) box.classList.add("border");
    const head = el("div", "head");
    head.append(el("span", "tool", d.tool), el("span", "uri", d.uri));
    const state = el("span", "state", "loading…");
    const exit = el("button", "exit", "Exit full screen");
    exit.hidden = true;
    exit.addEventListener("click", () => {
      modes.push({ view: d.id, mode: "inline" });
      flush();
    });
    head.append(state, exit);
    const details = el("details");
    details.append(el("summary", "", "Content-Security-Policy"), el("code", "", d.policy));
    const frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
    if (d.allow) frame.setAttribute("allow", d.allow);
    frame.setAttribute("referrerpolicy", "no-referrer");
    frame.title = "View of " + d.tool;
    frame.src = d.sandbox;
    box.append(head, details, frame);
    list.append(box);
    const v = { box, frame, state, exit, mode: "inline", tokens: burst, last: performance.now() };
    views.set(d.id, v);
    setMode(v, d.mode);
    if (location.hash === "#" + d.id) box.scrollIntoView();
  }

  function setMode(v, mode) {
    v.mode = mode;
    v.box.classList.toggle("fullscreen", mode === "fullscreen");
    v.exit.hidden = mode !== "fullscreen";
  }

  function clampPx(n, max) {
    return Math.max(0, Math.min(Number(n) || 0, max)) + "px";
  }

  function connect() {
    const es = new EventSource(cfg.events);
    const on = (name, fn) => es.addEventListener(name, (e) => fn(JSON.parse(e.data)));
    on("hello", (d) => {
      conn = d.conn;
      if (d.theme === "dark" || d.theme === "light") document.documentElement.className = d.theme;
      for (const v of views.values()) v.box.remove();
      views.clear();
      envDirty = true;
      setStatus("connected", "ok");
      flush();
    });
    on("view", addView);
    on("rpc", (d) => {
      const v = views.get(d.view);
      if (v && v.frame.contentWindow) v.frame.contentWindow.postMessage(d.msg, sandboxOrigin);
    });
    on("state", (d) => {
      const v = views.get(d.view);
      if (v) viewState(v, d.text, d.error ? "error" : "");
    });
    on("size", (d) => {
      const v = views.get(d.view);
      if (!v || v.mode === "fullscreen") return;
      if (typeof d.height === "number") v.frame.style.height = clampPx(d.height, 100000);
    });
    on("mode", (d) => {
      const v = views.get(d.view);
      if (v) setMode(v, d.mode);
    });
    on("closed", (d) => {
      const v = views.get(d.view);
      if (!v) return;
      v.box.classList.add("closed");
      v.frame.remove();
      setMode(v, "inline");
      viewState(v, "closed: " + d.reason);
    });
    on("replaced", () => {
      es.close();
      conn = null;
      setStatus("this session is shown in another tab now", "error");
    });
    on("bye", (d) => {
      es.close();
      conn = null;
      setStatus(d.reason, "error");
      for (const v of views.values()) {
        v.frame.remove();
        viewState(v, "closed");
      }
    });
    es.onerror = () => {
      // No automatic reconnection: a new connection starts every view
      // over, which a reload does deliberately.
      es.close();
      setStatus(conn === null ? "cannot reach mcpx" : "disconnected from mcpx (reload to reconnect)", "error");
      conn = null;
    };
  }

  window.addEventListener("message", (e) => {
    if (e.origin !== sandboxOrigin) return;
    for (const [id, v] of views) {
      if (v.frame.contentWindow === e.source) {
        // What the view's sandbox dropped for the view's rate (sandbox.js).
        const d = e.data;
        if (d !== null && typeof d === "object" && d.method === "ui/notifications/sandbox-dropped") {
          const n = d.params && d.params.count;
          if (Number.isSafeInteger(n) && n > 0) drop(id, "too many messages", n);
          flush();
          return;
        }
        enqueue(id, e.data);
        return;
      }
    }
  });

  let resizeTimer = 0;
  const changed = () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      envDirty = true;
      flush();
    }, 150);
  };
  window.addEventListener("resize", changed);
  window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", changed);

  connect();
})();
