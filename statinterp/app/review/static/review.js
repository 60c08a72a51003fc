// statinterp review: keyboard labelling, context and explanations on demand, notes, undo.
// Text from the server is inserted with textContent; the context and explain fragments are
// server-rendered HTML in which every case-law text is already escaped.
(function () {
  "use strict";
  var LABELS = ["high value", "certain value", "potential value", "no value"];
  var list = document.getElementById("ranking");
  if (!list) { return; }
  // every URL comes from the server (statinterp/app/review/views.py), none is written here
  var urls = JSON.parse(document.body.dataset.urls);
  var method = list.dataset.method;
  var csrf = document.querySelector('meta[name="csrf-token"]').content;
  var cards = Array.prototype.slice.call(list.querySelectorAll("li.card"));
  var current = -1;
  var undoStack = [];
  var toastTimer = null;

  function toast(text, isError) {
    var el = document.getElementById("toast");
    el.textContent = text;
    el.className = isError ? "show error" : "show";
    clearTimeout(toastTimer);
    toastTimer = setTimeout(function () { el.className = ""; }, isError ? 6000 : 2500);
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: {"Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": csrf},
      body: JSON.stringify(body)
    }).then(function (r) {
      return r.json().catch(function () { return {ok: false, error: "the server answered " + r.status}; })
        .then(function (data) {
          if (!r.ok || !data.ok) { throw new Error(data.error || ("the server answered " + r.status)); }
          return data;
        });
    });
  }

  function focusCard(i) {
    if (!cards.length) { return; }
    i = Math.max(0, Math.min(cards.length - 1, i));
    if (current >= 0 && cards[current]) { cards[current].classList.remove("current"); }
    current = i;
    cards[i].classList.add("current");
    cards[i].focus({preventScroll: true});
    cards[i].scrollIntoView({block: "nearest", behavior: "auto"});
  }

  function cardOf(sid) {
    for (var i = 0; i < cards.length; i++) { if (cards[i].dataset.sid === sid) { return cards[i]; } }
    return null;
  }

  function showLabel(card, label) {
    card.dataset.label = label || "";
    card.classList.toggle("labelled", !!label);
    card.querySelectorAll(".lb").forEach(function (b) {
      var on = b.dataset.label === label;
      b.classList.toggle("on", on);
      b.setAttribute("aria-pressed", on ? "true" : "false");
    });
  }

  function showCounts(counts) {
    document.getElementById("n-labelled").textContent = counts.labelled;
    var bar = document.getElementById("progress");
    bar.value = counts.labelled;
    LABELS.forEach(function (l, i) { document.getElementById("count-" + (i + 1)).textContent = counts[l]; });
  }

  // Give `label` (null clears) to the sentences `ids`; the server answers with their labels
  // before the change, which `remember` keeps for undo.
  function setLabels(ids, label, remember) {
    var shown = cards.map(function (c) { return c.dataset.sid; });
    return post(urls.labels, {sentence_ids: ids, label: label, method: method, shown: shown}).then(function (data) {
      ids.forEach(function (sid) { var c = cardOf(sid); if (c) { showLabel(c, data.labels[sid]); } });
      showCounts(data.counts);
      if (data.continuous) { showContinuous(data.continuous); }
      if (remember) { undoStack.push({ids: ids, previous: data.previous}); }
      return data;
    }).catch(function (err) { toast("Not saved: " + err.message, true); throw err; });
  }

  // Continuous mode: the server re-ranked the rest below the reviewer's last label. Show the
  // estimate of what is left and move the cards below the current one to their new places.
  var contBox = document.getElementById("continuous");
  function showContinuous(cont) {
    if (!contBox) { return; }
    document.getElementById("cont-labels").textContent = cont.labels;
    var left = cont.remaining;
    document.getElementById("left-expected").textContent = Math.round(left.expected);
    document.getElementById("left-low").textContent = left.low;
    document.getElementById("left-high").textContent = left.high;
    document.getElementById("left-unread").textContent = left.unread;
    document.getElementById("stop-hint").hidden = !left.stop;
    refreshList();
  }

  // After a live re-rank the page's cards are those a reload would show: the page is fetched again
  // and its list rebuilt in the new order (the cards still there are kept, with their open panels;
  // the focus stays on the same sentence), so the rank numbers are the new order's, strictly
  // increasing down the page, with no stale or repeated number. Only the latest answer is used.
  var refreshes = 0;
  function refreshList() {
    var mine = ++refreshes;
    var focused = current >= 0 && cards[current] ? cards[current].dataset.sid : null;
    fetch(window.location.href, {credentials: "same-origin", headers: {"Accept": "text/html"}}).then(function (r) {
      if (!r.ok) { throw new Error("the server answered " + r.status); }
      return r.text();
    }).then(function (html) {
      if (mine !== refreshes) { return; }
      var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("ranking");
      if (!fresh) { return; }
      var kept = {};
      cards.forEach(function (c) { kept[c.dataset.sid] = c; });
      var items = Array.prototype.slice.call(fresh.children);
      var rebuilt = items.map(function (item) {
        var old = item.dataset ? kept[item.dataset.sid] : null;
        if (!old) { return document.importNode(item, true); }
        var rank = old.querySelector(".rank"), newRank = item.querySelector(".rank");
        if (rank && newRank) { rank.textContent = newRank.textContent; }
        var score = old.querySelector(".score"), newScore = item.querySelector(".score");
        if (score && newScore) { score.replaceWith(document.importNode(newScore, true)); }
        old.id = item.id;
        return old;
      });
      if (current >= 0 && cards[current]) { cards[current].classList.remove("current"); }
      while (list.firstChild) { list.removeChild(list.firstChild); }
      rebuilt.forEach(function (el) { list.appendChild(el); });
      cards = Array.prototype.slice.call(list.querySelectorAll("li.card"));
      current = -1;
      var at = focused === null ? -1 : cards.findIndex(function (c) { return c.dataset.sid === focused; });
      if (at >= 0) { focusCard(at); }
      list.dataset.reranks = String(Number(list.dataset.reranks || "0") + 1);
    }).catch(function (err) { toast("Could not show the new order: " + err.message + " (reload the page)", true); });
  }

  function labelCard(card, label) {
    var ids = [card.dataset.sid];
    var copies = JSON.parse(card.dataset.copies || "[]");
    if (copies.length && window.confirm("Also label its " + copies.length + " near-duplicate" +
        (copies.length === 1 ? "" : "s") + " as \u201c" + label + "\u201d?")) {
      ids = ids.concat(copies);
    }
    return setLabels(ids, label, true).then(function () {
      // the cursor stays on the labelled card: j moves on, so "j, then 1-4" labels every card in order
      toast("Labelled \u201c" + label + "\u201d" + (ids.length > 1 ? " (" + ids.length + " sentences)" : ""));
    });
  }

  function undo() {
    var last = undoStack.pop();
    if (!last) { toast("Nothing to undo"); return; }
    var byLabel = {};
    last.ids.forEach(function (sid) {
      var key = last.previous[sid] || "";
      (byLabel[key] = byLabel[key] || []).push(sid);
    });
    var chain = Promise.resolve();
    Object.keys(byLabel).forEach(function (key) {
      chain = chain.then(function () { return setLabels(byLabel[key], key || null, false); });
    });
    chain.then(function () {
      var c = cardOf(last.ids[0]);
      if (c) { focusCard(cards.indexOf(c)); }
      toast("Undone");
    });
  }

  function togglePanel(card, kind) {
    var panel = card.querySelector('[data-panel="' + kind + '"]');
    if (!panel.hidden) { panel.hidden = true; return; }
    panel.hidden = false;
    if (panel.dataset.loaded) { return; }
    panel.textContent = "Loading\u2026";
    var url = urls[kind].replace("{sid}", encodeURIComponent(card.dataset.sid)) +
      (kind === "explain" ? "?method=" + encodeURIComponent(method) : "");
    fetch(url, {credentials: "same-origin"}).then(function (r) {
      return r.text().then(function (html) {
        if (!r.ok) { throw new Error("the server answered " + r.status); }
        return html;
      });
    }).then(function (html) {
      panel.innerHTML = html;  // server-rendered, escaped
      panel.dataset.loaded = "1";
      var mark = panel.querySelector(".context-opinion mark.sentence");
      var box = panel.querySelector(".context-opinion");
      if (mark && box) { box.scrollTop = mark.offsetTop - box.offsetTop - box.clientHeight / 3; }
    }).catch(function (err) { panel.textContent = "Could not load: " + err.message; });
  }

  function toggleNote(card) {
    var box = card.querySelector(".note-box");
    box.hidden = !box.hidden;
    if (!box.hidden) { box.querySelector("textarea").focus(); }
  }

  function saveNote(card) {
    var box = card.querySelector(".note-box");
    var status = box.querySelector(".note-status");
    post(urls.note, {sentence_id: card.dataset.sid, note: box.querySelector("textarea").value}).then(function () {
      status.textContent = "saved";
    }).catch(function (err) { status.textContent = "not saved: " + err.message; });
  }

  list.addEventListener("click", function (ev) {
    var card = ev.target.closest("li.card");
    if (!card) { return; }
    var i = cards.indexOf(card);
    if (i !== current) { focusCard(i); }
    var button = ev.target.closest("button");
    if (!button) { return; }
    if (button.dataset.label) { labelCard(card, button.dataset.label); return; }
    var action = button.dataset.action;
    if (action === "context" || action === "explain") { togglePanel(card, action); }
    else if (action === "note") { toggleNote(card); }
    else if (action === "save-note") { saveNote(card); }
    else if (action === "copy-cite") { copyCite(button.dataset.cite); }
  });

  function copyCite(text) {
    if (!navigator.clipboard) { toast("Copying needs a secure page (https or localhost)", true); return; }
    navigator.clipboard.writeText(text).then(function () { toast("Copied: " + text); },
      function (err) { toast("Not copied: " + err.message, true); });
  }

  document.addEventListener("keydown", function (ev) {
    var tag = (ev.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select" || ev.ctrlKey || ev.metaKey || ev.altKey) {
      if (ev.key === "Escape" && tag === "textarea") { ev.target.blur(); }
      return;
    }
    var card = current >= 0 ? cards[current] : null;
    var next = document.querySelector('a[rel="next"]');
    var prev = document.querySelector('a[rel="prev"]');
    if (ev.key === "j" && current === cards.length - 1 && next) { window.location.href = next.href; }
    else if (ev.key === "k" && current === 0 && prev) { window.location.href = prev.href; }
    else if (ev.key === "j") { focusCard(current + 1); }
    else if (ev.key === "k") { focusCard(current < 0 ? 0 : current - 1); }
    else if (ev.key >= "1" && ev.key <= "4") {
      if (!card) { focusCard(0); card = cards[0]; }
      if (card) { labelCard(card, LABELS[Number(ev.key) - 1]); }
    }
    else if (ev.key === "u") { undo(); }
    else if (ev.key === "c" && card) { togglePanel(card, "context"); }
    else if (ev.key === "e" && card) { togglePanel(card, "explain"); }
    else if (ev.key === "n" && card) { toggleNote(card); }
    else { return; }
    ev.preventDefault();
  });

  var methodSelect = document.getElementById("method");
  if (methodSelect) {
    methodSelect.addEventListener("change", function () { methodSelect.form.submit(); });
  }

  var rerank = document.getElementById("rerank");
  if (rerank) {
    rerank.form.addEventListener("submit", function () {
      rerank.disabled = true;
      rerank.textContent = "Re-ranking\u2026";
    });
  }

  // no cursor at first: j goes to the top card, and 1-4 label the top card (the cursor then rests there)
  if (cards.length) { window.scrollTo(0, 0); }
})();
