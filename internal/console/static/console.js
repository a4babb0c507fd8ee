// occ console: progressive enhancement only. Every page works without this
// file; with it, a deployment's timeline follows the API's event stream.
// Text is set with textContent, never parsed as HTML.
(function () {
  "use strict";
  function item(text, code) {
    var li = document.createElement("li");
    li.appendChild(document.createTextNode(text));
    if (code) {
      li.appendChild(document.createTextNode(": "));
      var c = document.createElement("code");
      c.textContent = code;
      li.appendChild(c);
    }
    return li;
  }
  function describe(d) {
    var parts = [d.status];
    var code = "";
    var msg = "";
    if (d.error) { code = d.error.code; msg = d.error.message; }
    else if (d.progress && d.progress.lastAttempt) { code = d.progress.lastAttempt.code; msg = d.progress.lastAttempt.message; }
    return { text: parts.join(" "), code: code, msg: msg, next: d.progress && d.progress.nextAttemptAt };
  }
  function follow(list) {
    var url = list.getAttribute("data-events");
    if (!url || !window.EventSource) { return; }
    var status = document.getElementById("deployment-status");
    var last = "";
    var es = new EventSource(url);
    es.addEventListener("status", function (ev) {
      var d;
      try { d = JSON.parse(ev.data); } catch (e) { return; }
      d = d.data || d;
      var s = describe(d);
      var key = s.text + "|" + s.code + "|" + s.next;
      if (key === last) { return; }
      last = key;
      var li = item(s.text, s.code);
      if (s.msg) { li.appendChild(document.createTextNode(" " + s.msg)); }
      if (s.next) { li.appendChild(document.createTextNode("; next attempt " + s.next)); }
      li.setAttribute("data-status", d.status);
      list.appendChild(li);
      if (status) {
        status.textContent = d.status;
        status.className = "dep dep-" + d.status;
      }
      if (d.status === "succeeded" || d.status === "failed") { es.close(); }
    });
    es.addEventListener("error", function (ev) {
      if (ev.data) {
        try { var e = JSON.parse(ev.data); list.appendChild(item("stream ended", e.code)); } catch (x) { /* ignore */ }
      }
      es.close();
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    var list = document.getElementById("timeline");
    if (list) { follow(list); }
  });
})();
