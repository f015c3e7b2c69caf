// Enhancements only: every page works without this file.
(function () {
  "use strict";

  // Copy buttons: <button class="copy" data-copy="ELEMENT_ID" hidden> (hidden until JS runs).
  function copyText(text, button) {
    var done = function () {
      button.classList.add("done");
      var old = button.textContent;
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = old; button.classList.remove("done"); }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { fallback(text); done(); });
    } else {
      fallback(text);
      done();
    }
  }
  function fallback(text) {
    var ta = document.createElement("textarea");
    ta.value = text;
    ta.setAttribute("readonly", "");
    ta.style.position = "absolute";
    ta.style.left = "-9999px";
    document.body.appendChild(ta);
    ta.select();
    try { document.execCommand("copy"); } catch (e) { /* nothing more to try */ }
    document.body.removeChild(ta);
  }
  document.querySelectorAll("button.copy[data-copy]").forEach(function (b) {
    b.hidden = false;
    b.addEventListener("click", function () {
      var el = document.getElementById(b.getAttribute("data-copy"));
      if (el) copyText(el.textContent, b);
    });
  });
  // Small copy buttons next to values marked .copyable.
  document.querySelectorAll(".copyable").forEach(function (el) {
    // A shared comparison's id copies as its full address.
    var url = el.getAttribute("data-copy-url");
    var text = url ? location.origin + url : el.textContent.trim();
    if (!text || text.length > 100000) return;
    var b = document.createElement("button");
    b.type = "button";
    b.className = "copy";
    b.textContent = "copy";
    b.title = "Copy to the clipboard";
    b.addEventListener("click", function () { copyText(text, b); });
    // Inline values get the button after them, inside the same element (grids stay intact);
    // blocks (config, samples) get it just before.
    if (el.tagName === "PRE") el.insertAdjacentElement("beforebegin", b);
    else { el.appendChild(document.createTextNode(" ")); el.appendChild(b); }
  });

  // Live filtering of the comparison table; the same fields submit as a GET form without JS.
  var form = document.getElementById("filters");
  var table = document.getElementById("results");
  // A capped table lists only some rows: the form filters through the server instead.
  if (!form || !table || table.hasAttribute("data-capped")) return;
  var only = document.getElementById("f-only");
  var hideNs = document.getElementById("f-hide-ns");
  var q = document.getElementById("f-q");
  var count = document.getElementById("shown-count");
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var changes = { regression: 1, improvement: 1, increase: 1, decrease: 1 };

  function apply() {
    var o = only.value, h = hideNs.checked;
    var words = q.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    rows.forEach(function (tr) {
      var v = tr.getAttribute("data-verdict");
      var s = tr.getAttribute("data-search") || "";
      var keep = true;
      if (o === "regressions" && v !== "regression") keep = false;
      if (o === "changes" && !changes[v]) keep = false;
      if (h && v === "no_significant_change") keep = false;
      for (var i = 0; keep && i < words.length; i++) if (s.indexOf(words[i]) < 0) keep = false;
      tr.hidden = !keep;
      if (keep) shown++;
    });
    if (count) count.textContent = shown + " of " + rows.length + " series shown";
    var none = document.getElementById("no-rows");
    if (none) none.hidden = shown > 0;
    // Keep the address bookmarkable: the same query the GET form would send.
    var params = new URLSearchParams(new FormData(form));
    ["only", "q"].forEach(function (k) { if (!params.get(k)) params.delete(k); });
    var url = form.getAttribute("action") + "?" + params.toString();
    history.replaceState(null, "", url.replace(/\?$/, ""));
  }
  only.addEventListener("change", apply);
  hideNs.addEventListener("change", apply);
  q.addEventListener("input", apply);
})();
