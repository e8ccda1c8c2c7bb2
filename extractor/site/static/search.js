// Search over the index that search-index.js assigns (no fetch(): it must work from file://).
(function () {
  "use strict";
  var index = window.SGLANG_ERRORS_INDEX;
  var LIMIT = 100;
  var $ = function (id) { return document.getElementById(id); };
  var q = $("q"), status = $("status"), results = $("results");
  var filters = { subsystem: $("f-subsystem"), "class": $("f-class"), cause: $("f-cause"), tag: $("f-tag") };
  if (!index || !q) { if (status) { status.textContent = "The search index is missing."; } return; }

  var rows = index.records.map(function (r) {
    var tags = r[6].map(function (i) { return index.tags[i]; });
    var pattern = null;
    if (r[8]) { try { pattern = new RegExp("^(?:" + r[8] + ")$"); } catch (e) { pattern = null; } }
    return {
      slug: r[0], message: r[1], cls: r[2], where: r[3], subsystem: index.subsystems[r[4]],
      cause: r[5], tags: tags, knobs: r[7], pattern: pattern, scope: r[9],
      low: r[1].toLowerCase(),
      hay: [r[1], r[2], r[3], r[7].join(" "), tags.join(" "), r[9], r[0]].join(" ").toLowerCase()
    };
  });

  function words(text) { return text.toLowerCase().match(/[\w.\/-]+/g) || []; }

  // What a pasted line may carry around the message: "ValueError: ...", quotes, a traceback tail.
  function candidates(text) {
    var out = [text];
    var m = /^\s*(?:[\w.]+(?:Error|Exception|Warning|Exit|Interrupt))\s*:\s*([\s\S]*)$/.exec(text);
    if (m) { out.push(m[1]); }
    return out.map(function (s) { return s.trim(); });
  }

  function score(row, text, toks) {
    if (!text) { return 1; }
    var full = candidates(text);
    if (row.pattern) {
      for (var i = 0; i < full.length; i++) { if (row.pattern.test(full[i])) { return 4; } }
    }
    var low = text.toLowerCase().trim();
    if (low.length >= 3 && row.low.indexOf(low) >= 0) { return 3; }
    if (row.hay.indexOf(low) >= 0) { return 2.5; }
    if (!toks.length) { return 0; }
    var hit = 0;
    for (var j = 0; j < toks.length; j++) { if (row.hay.indexOf(toks[j]) >= 0) { hit++; } }
    return 2 * hit / toks.length;
  }

  function render() {
    var text = q.value;
    var toks = words(text);
    var want = {};
    Object.keys(filters).forEach(function (k) { want[k] = filters[k].value.trim(); });
    var found = [];
    rows.forEach(function (row, order) {
      if (want.subsystem && row.subsystem !== want.subsystem) { return; }
      if (want["class"] && row.cls !== want["class"]) { return; }
      if (want.cause && row.cause !== want.cause) { return; }
      if (want.tag && row.tags.indexOf(want.tag) < 0) { return; }
      var s = score(row, text, toks);
      // A token match must cover most of the query: a pasted message carries values the template lacks.
      if (s >= 1.2 || (s > 0 && !text.trim())) { found.push({ row: row, s: s, order: order }); }
    });
    found.sort(function (a, b) { return b.s - a.s || a.order - b.order; });
    results.textContent = "";
    var shown = found.slice(0, LIMIT);
    shown.forEach(function (f) {
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = "errors/" + f.row.slug + ".html";
      var c = document.createElement("code");
      c.className = "cls";
      c.textContent = f.row.cls;
      a.appendChild(c);
      a.appendChild(document.createTextNode(" " + (f.row.message || "(no message)")));
      li.appendChild(a);
      var w = document.createElement("span");
      w.className = "where";
      w.textContent = " " + f.row.where;
      li.appendChild(w);
      results.appendChild(li);
    });
    var filtered = text.trim() || Object.keys(want).some(function (k) { return want[k]; });
    status.textContent = !filtered ? rows.length + " errors; type to search." :
      found.length === 0 ? "No error matches." :
      (found.length > LIMIT ? "Showing the best " + LIMIT + " of " : "") + found.length +
      " matching error" + (found.length === 1 ? "" : "s") + ".";
    if (!filtered) { results.textContent = ""; }
  }

  // index.html#tag=x (or cause=, subsystem=, class=, q=) opens with exactly that filter set.
  function fromHash() {
    var hash = window.location.hash.replace(/^#/, "");
    if (!hash) { return; }
    var params = new URLSearchParams(hash);
    q.value = params.get("q") || "";
    Object.keys(filters).forEach(function (k) { filters[k].value = params.get(k) || ""; });
  }

  var timer = null;
  function later() { clearTimeout(timer); timer = setTimeout(render, 120); }
  q.addEventListener("input", later);
  Object.keys(filters).forEach(function (k) {
    filters[k].addEventListener("change", render);
    filters[k].addEventListener("input", later);
  });
  window.addEventListener("hashchange", function () { fromHash(); render(); });
  fromHash();
  render();
})();
