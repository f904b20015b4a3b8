// The sandbox proxy of one view (MCP Apps, "Sandbox proxy"). It runs on
// the sandbox origin, under the view's Content-Security-Policy (a header
// of this page, which the view's document inherits), framed only by the
// mcpx host page (frame-ancestors). It loads the view's HTML into an
// inner frame when the host sends it, and relays every other message
// between the host page and the view, except the sandbox's own
// ui/notifications/sandbox-* messages.
"use strict";
(() => {
  const host = document.documentElement.dataset.host;
  const own = location.origin;
  const reserved = "ui/notifications/sandbox-";
  if (window.parent === window) {
    document.body.textContent = "This page is part of mcpx and only works inside its host page.";
    return;
  }
  let inner = null;

  // The view's notifications over mcpx's rate limit (rate a second on
  // average, burst at once) are dropped here, before they cross to the
  // host page's process: a view's burst of 5000 took the page a second
  // or more to receive, and the answers mcpx waited for (a teardown's)
  // came after it. The page is told how many were dropped (and limits
  // them itself: a view of this origin can reach this page's script).
  const rate = Number(document.documentElement.dataset.rate) || 50;
  const burst = Number(document.documentElement.dataset.burst) || 200;
  let tokens = burst;
  let last = performance.now();
  let dropped = 0;
  let telling = false;

  function tooMany(d) {
    if (d === null || typeof d !== "object" || Array.isArray(d) || !("method" in d) || "id" in d) return false;
    const now = performance.now();
    tokens = Math.min(burst, tokens + ((now - last) / 1000) * rate);
    last = now;
    if (tokens >= 1) {
      tokens--;
      return false;
    }
    dropped++;
    if (!telling) {
      telling = true;
      setTimeout(() => {
        telling = false;
        window.parent.postMessage({ jsonrpc: "2.0", method: reserved + "dropped", params: { count: dropped } }, host);
        dropped = 0;
      }, 100);
    }
    return true;
  }

  // The spec's permissions, as Permission Policy features of the inner frame.
  function allowOf(p) {
    if (!p || typeof p !== "object") return "";
    const names = [];
    if (p.camera) names.push("camera");
    if (p.microphone) names.push("microphone");
    if (p.geolocation) names.push("geolocation");
    if (p.clipboardWrite) names.push("clipboard-write");
    return names.join("; ");
  }

  function load(p) {
    if (inner || typeof p.html !== "string") return;
    inner = document.createElement("iframe");
    // Both attributes take effect when the frame is inserted.
    inner.setAttribute("sandbox", typeof p.sandbox === "string" ? p.sandbox : "allow-scripts allow-same-origin allow-forms");
    const allow = allowOf(p.permissions);
    if (allow) inner.setAttribute("allow", allow);
    inner.title = "MCP App view";
    document.body.appendChild(inner);
    // Written into the frame's initial document, which keeps this page's
    // origin and CSP (a srcdoc or data: document would not).
    const doc = inner.contentDocument;
    doc.open();
    doc.write(p.html);
    doc.close();
  }

  const isReserved = (d) => d && typeof d.method === "string" && d.method.startsWith(reserved);

  window.addEventListener("message", (e) => {
    if (e.source === window.parent) {
      if (e.origin !== host) return;
      if (isReserved(e.data)) {
        if (e.data.method === reserved + "resource-ready") load(e.data.params || {});
        return;
      }
      if (inner && inner.contentWindow) inner.contentWindow.postMessage(e.data, own);
    } else if (inner && e.source === inner.contentWindow) {
      if (e.origin !== own || isReserved(e.data) || tooMany(e.data)) return;
      window.parent.postMessage(e.data, host);
    }
  });

  window.parent.postMessage({ jsonrpc: "2.0", method: reserved + "proxy-ready", params: {} }, host);
})();
