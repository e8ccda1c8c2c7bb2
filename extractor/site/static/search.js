// Search over the index that search-index.js assigns (no fetch(): it must work from file://).
(function () {
  "use strict";
  var index = window.SGLANG_ERRORS_INDEX;
  var LIMIT = 100;
  var $ = function (id) { return document.getElementById(id); };
  var q = $("q"), status = $("status"), results = $("results");
  var filters = { subsystem: $("f-subsystem"), "class": $("f-class"), cause: $("f-cause"), tag: $("f-tag") };
  if (!index || !q) { if (status) { status.textContent = "The search index is missing."; } return; }

  function words(text) {
    var found = text.toLowerCase().match(/--[a-z0-9-]+|[a-z0-9_][a-z0-9_.\/-]*/g) || [];
    return found.map(function (w) { return w.replace(/[.\/-]+$/, ""); });
  }

  var rows = index.records.map(function (r) {
    var tags = r[6].map(function (i) { return index.tags[i]; });
    var pattern = null, literal = 0;
    if (r[8]) {
      try { pattern = new RegExp("^(?:" + r[8] + ")$"); } catch (e) { pattern = null; }
      // How much of a runtime message the pattern pins down: "{x}" alone matches anything.
      literal = r[8].replace(/\[\\s\\S\]\*/g, "").replace(/\\(.)/g, "$1").length;
    }
    var other = [r[2], r[3], r[7].join(" "), tags.join(" "), r[9], r[0]].join(" ");
    var set = function (list) { var o = {}; list.forEach(function (w) { o[w] = true; }); return o; };
    return {
      page: r[0], message: r[1], cls: r[2], where: r[3], subsystem: index.subsystems[r[4]],
      cause: r[5], tags: tags, knobs: r[7], pattern: pattern, literal: literal, scope: r[9],
      low: r[1].toLowerCase(), hay: (r[1] + " " + other).toLowerCase(),
      messageWords: set(words(r[1])), otherWords: set(words(other))
    };
  });

  // What a pasted line may carry around the message: "ValueError: ...", surrounding space.
  function candidates(text) {
    var out = [text.trim()];
    var m = /^\s*[\w.]*(?:Error|Exception|Warning|Exit|Interrupt)\s*:\s*([\s\S]*)$/.exec(text);
    if (m) { out.push(m[1].trim()); }
    return out;
  }

  // 3..4: the pattern full-matches the pasted message (more so the more of it is literal text);
  // 3: the text is part of the message; 2.5: part of the class, file, flags or tags; below:
  // the share of query words found, message words counting most.
  function score(row, text, toks) {
    if (!text.trim()) { return 1; }
    if (row.pattern) {
      var full = candidates(text);
      for (var i = 0; i < full.length; i++) {
        var share = row.literal / Math.max(full[i].length, 1);
        if (row.literal >= 3 && share >= 0.3 && row.pattern.test(full[i])) { return 3 + Math.min(share, 1); }
      }
    }
    var low = text.toLowerCase().trim();
    if (low.length >= 3 && row.low.indexOf(low) >= 0) { return 3; }
    if (low.length >= 3 && row.hay.indexOf(low) >= 0) { return 2.5; }
    if (!toks.length) { return 0; }
    var hit = 0;
    for (var j = 0; j < toks.length; j++) {
      if (row.messageWords[toks[j]]) { hit += 1; } else if (row.otherWords[toks[j]]) { hit += 0.7; }
    }
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
      a.href = "errors/" + f.row.page + ".html";
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
