/* shardwise chat widget — one script tag, no dependencies, no build step.
 *
 *   <script src="https://ADVISOR/widget.js" defer></script>
 *
 * Attributes: data-base-url (the shardwise server; default: where this script came from),
 * data-target (CSS selector: render inline there instead of a floating button), data-title.
 * Talks to POST {base}/api/chat (server-sent events: session, delta, tool, configs, done, error).
 * Model text is only ever inserted as text; the finished answer's HTML comes from the server,
 * which renders markdown with raw HTML disabled and sanitises it with an allow-list.
 */
(function () {
  "use strict";
  var script = document.currentScript || (function () {
    var all = document.querySelectorAll("script[src*='widget.js']");
    return all[all.length - 1];
  })();
  var ds = (script && script.dataset) || {};
  var scriptOrigin = script && script.src ? new URL(script.src, location.href).origin : location.origin;
  var BASE = (ds.baseUrl !== undefined ? ds.baseUrl : scriptOrigin).replace(/\/+$/, "");
  var EXAMPLES = [
    "Llama 3.1 70B on 64 H100s, 8k context, 4M-token batches: what plan?",
    "What if we had H200s instead?",
    "Give me the DeepSpeed config",
  ];

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else if (k === "className") node.className = attrs[k];
      else if (k.slice(0, 2) === "on") node.addEventListener(k.slice(2), attrs[k]);
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(c); });
    return node;
  }


  function copyText(text, button) {
    function done(ok) {
      var old = button.textContent;
      button.textContent = ok ? "Copied" : "Press Ctrl+C";
      setTimeout(function () { button.textContent = old; }, 1500);
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { done(true); }, function () { done(false); });
      return;
    }
    var area = el("textarea", { style: "position:fixed;opacity:0" });
    area.value = text;
    (button.getRootNode().host || document.body).appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    area.remove();
    done(ok);
  }

  /* Tabs with arrow-key navigation (WAI-ARIA tabs pattern). */
  function configTabs(configs, idPrefix, planLabel, notes) {
    var names = Object.keys(configs || {});
    if (!names.length) return null;
    var noteNames = Object.keys(notes || {});
    var list = el("div", { className: "sw-tablist", role: "tablist", "aria-label": "Configs" });
    var panels = [];
    var tabs = names.map(function (name, i) {
      var tab = el("button", { type: "button", role: "tab", className: "sw-tab", id: idPrefix + "-tab-" + i,
        "aria-controls": idPrefix + "-panel-" + i, "aria-selected": i === 0 ? "true" : "false", tabindex: i === 0 ? "0" : "-1",
        text: name });
      var pre = el("pre", { tabindex: "0" }, [el("code", { text: String(configs[name]) })]);
      var copy = el("button", { type: "button", className: "sw-copy", text: "Copy " + name,
        onclick: function () { copyText(String(configs[name]), copy); } });
      var panel = el("div", { role: "tabpanel", id: idPrefix + "-panel-" + i, "aria-labelledby": tab.id },
        [el("div", { className: "sw-code-head" }, [copy]), pre]);
      if (i) panel.hidden = true;
      panels.push(panel);
      tab.addEventListener("click", function () { select(i); });
      tab.addEventListener("keydown", function (ev) {
        var j = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: names.length - 1 }[ev.key];
        if (j === undefined) return;
        ev.preventDefault();
        j = (j + names.length) % names.length;
        select(j); tabs[j].focus();
      });
      list.appendChild(tab);
      return tab;
    });
    function select(k) {
      tabs.forEach(function (t, i) { t.setAttribute("aria-selected", i === k ? "true" : "false"); t.tabIndex = i === k ? 0 : -1; });
      panels.forEach(function (p, i) { p.hidden = i !== k; });
    }
    var title = el("div", { className: "sw-configs-title", text: "Configs for " + (planLabel || "this plan") });
    var box = el("div", { className: "sw-configs" }, [title, list].concat(panels));
    if (noteNames.length) {
      var ul = el("ul", { className: "sw-notes" });
      noteNames.forEach(function (n) { ul.appendChild(el("li", { text: n + ": " + notes[n] })); });
      box.appendChild(el("details", { className: "sw-refused" }, [el("summary", { text: noteNames.length + " format(s) cannot express this plan" }), ul]));
    }
    return box;
  }

  async function streamChat(message, sessionId, extra, onEvent, signal) {
    var body = Object.assign({ message: message, session_id: sessionId || null }, extra || {});
    var res = await fetch(BASE + "/api/chat", { method: "POST", signal: signal,
      headers: { "content-type": "application/json", accept: "text/event-stream" }, body: JSON.stringify(body) });
    if (!res.ok) {
      var msg = "the advisor answered " + res.status;
      try { msg = (await res.json()).message || msg; } catch (e) { /* not JSON */ }
      throw new Error(msg);
    }
    var reader = res.body.getReader(), decoder = new TextDecoder(), buf = "";
    for (;;) {
      var chunk = await reader.read();
      if (chunk.done) break;
      buf += decoder.decode(chunk.value, { stream: true });
      var cut;
      while ((cut = buf.indexOf("\n\n")) >= 0) {
        var frame = buf.slice(0, cut); buf = buf.slice(cut + 2);
        var name = "message", data = "";
        frame.split("\n").forEach(function (line) {
          if (line.indexOf("event:") === 0) name = line.slice(6).trim();
          else if (line.indexOf("data:") === 0) data += line.slice(5).trim();
        });
        if (data) onEvent(name, JSON.parse(data));
      }
    }
  }

  var counter = 0;

  function modeLabel(data) {
    if (data.mode === "offline") return "offline planner";
    if (data.mode === "llm") return "LLM" + (data.model ? ": " + data.model : "");
    return String(data.mode);
  }

  function mount(host, opts) {
    opts = opts || {};
    var root = host.attachShadow ? host.attachShadow({ mode: "open" }) : host;
    root.appendChild(el("link", { rel: "stylesheet", href: BASE + "/static/chat.css" }));
    var uid = "sw" + (++counter);
    /* The conversation lives as long as the page: a reload starts afresh, so no follow-up ever
       builds on a scenario the reader can no longer see. */
    var sessionId = null;
    var pendingContext = null;
    var profile = null;  /* a calibration profile the page's form holds: sent with every question */
    var busy = false, controller = null;

    var mode = el("span", { className: "sw-mode", text: opts.mode || "" });
    if (!opts.mode) mode.hidden = true;
    var log = el("div", { className: "sw-log", role: "log", "aria-live": "polite", "aria-label": "Conversation" });
    var input = el("textarea", { id: uid + "-q", rows: "2", placeholder: EXAMPLES[0], "aria-describedby": uid + "-hint" });
    if (opts.maxChars) input.maxLength = opts.maxChars;
    var send = el("button", { type: "submit", className: "sw-send", text: "Send" });
    var form = el("form", { className: "sw-form" }, [el("label", { className: "sw-visually-hidden", for: uid + "-q", text: "Your question" }), input, send]);
    var newChat = el("button", { type: "button", className: "sw-new", text: "New chat", onclick: reset });
    var title = opts.title === "" ? null : el("span", { className: "sw-title", text: opts.title || "Ask shardwise" });
    var box = el("div", { className: "sw-chat" }, [
      el("div", { className: "sw-head" }, [title, mode, newChat]),
      log, form, el("div", { className: "sw-hint", id: uid + "-hint", text: "Enter to send · Shift+Enter for a new line" })]);
    root.appendChild(box);

    function showEmpty() {
      var empty = el("div", { className: "sw-empty" }, [el("div", { text: "Describe your model and cluster, or try:" })]);
      EXAMPLES.forEach(function (q) {
        empty.appendChild(el("button", { type: "button", text: q, onclick: function () { input.value = q; input.focus(); } }));
      });
      log.appendChild(empty);
    }
    function reset() {
      if (controller) controller.abort();
      sessionId = null; log.textContent = ""; showEmpty(); input.focus();
    }
    showEmpty();

    input.addEventListener("keydown", function (ev) {
      if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); form.requestSubmit ? form.requestSubmit() : submit(ev); }
    });
    form.addEventListener("submit", submit);

    function submit(ev) {
      ev.preventDefault();
      var text = input.value.trim();
      if (!text || busy) return;
      input.value = "";
      ask(text);
    }

    function ask(text) {
      var empty = log.querySelector(".sw-empty");
      if (empty) empty.remove();
      log.appendChild(el("div", { className: "sw-msg sw-user", text: text }));
      var bodyEl = el("div", { className: "sw-body sw-streaming" });
      var toolsList = el("ul"), toolsCount = el("span", { text: "" });
      var tools = el("details", { className: "sw-tools" }, [el("summary", {}, [toolsCount]), toolsList]);
      tools.hidden = true;
      var msg = el("div", { className: "sw-msg sw-assistant", "aria-busy": "true" }, [tools, bodyEl]);
      log.appendChild(msg);
      log.scrollTop = log.scrollHeight;
      var n = 0, scenario = null, plan = null, answer = "";
      busy = true; send.disabled = true;
      controller = window.AbortController ? new AbortController() : null;
      var extra = pendingContext ? { scenario: pendingContext } : null;
      pendingContext = null;
      /* The host page's {scenario, plan} when they changed; a promise, as the page may refresh its results first
         (which may set the profile, so it is read after). */
      new Promise(function (ok) { ok(opts.context ? opts.context() : null); }).then(function (context) {
        if (context) extra = Object.assign(extra || {}, context);
        if (profile) { extra = extra || {}; extra.profile = profile; }
        return streamChat(text, sessionId, extra, onEvent, controller && controller.signal);
      }).catch(function (err) {
        if (err && err.name === "AbortError") return;
        msg.appendChild(el("div", { className: "sw-error", role: "alert", text: (err && err.message) || "connection failed" }));
      }).then(function () {
        busy = false; send.disabled = false; msg.setAttribute("aria-busy", "false");
        bodyEl.classList.remove("sw-streaming");
        if (!answer && !bodyEl.innerHTML && !msg.querySelector(".sw-error")) bodyEl.textContent = "(no answer)";
        if (scenario && opts.onScenario) {
          opts.onScenario(scenario, plan);
          msg.appendChild(el("button", { type: "button", className: "sw-apply", text: "Show this scenario in the form",
            onclick: function () { opts.onScenario(scenario, plan, true); } }));
        }
        log.scrollTop = log.scrollHeight;
      });

      function onEvent(name, data) {
        if (name === "session") {
          sessionId = data.session_id || sessionId;
          if (data.mode) { mode.textContent = modeLabel(data); mode.hidden = false; }
        } else if (name === "delta") {
          answer += data.text || "";
          bodyEl.textContent = answer;
        } else if (name === "tool") {
          n += 1; tools.hidden = false;
          toolsCount.textContent = n === 1 ? "1 tool ran" : n + " tools ran";
          var item = el("li", {}, [el("code", { text: String(data.name || "tool") })]);
          if (data.summary) item.appendChild(document.createTextNode(" — " + data.summary));
          if (data.ok === false && data.errors && data.errors.length) item.appendChild(document.createTextNode(" (" + data.errors.join("; ") + ")"));
          if (data.arguments) item.title = typeof data.arguments === "string" ? data.arguments : JSON.stringify(data.arguments);
          toolsList.appendChild(item);
        } else if (name === "configs") {
          var old = msg.querySelector(".sw-configs");
          if (old) old.remove();
          var tabs = configTabs(data.configs || {}, uid + "-" + log.children.length, data.plan, data.notes);
          if (tabs) msg.appendChild(tabs);
        } else if (name === "done") {
          if (data.scenario) scenario = data.scenario;
          if (data.plan) plan = data.plan;
          bodyEl.classList.remove("sw-streaming");
          if (typeof data.html === "string") bodyEl.innerHTML = data.html; /* sanitised by the server */
          else bodyEl.textContent = data.answer || answer;
        } else if (name === "error") {
          msg.appendChild(el("div", { className: "sw-error", role: "alert", text: data.message || "the advisor failed" }));
          var offline = data.offline;
          if (offline && typeof offline.html === "string") { /* the LLM failed: the offline planner's answer */
            bodyEl.classList.remove("sw-streaming");
            bodyEl.innerHTML = offline.html; /* sanitised by the server */
            answer = offline.answer || answer;
            if (offline.scenario) scenario = offline.scenario;
            if (offline.plan) plan = offline.plan;
            var offTabs = configTabs(offline.configs || {}, uid + "-" + log.children.length, null, null);
            if (offTabs) msg.appendChild(offTabs);
          }
        }
        log.scrollTop = log.scrollHeight;
      }
    }

    return {
      ask: ask,
      /* The page's form changed: the next question continues from that scenario. */
      setScenario: function (s) { pendingContext = s; },
      /* A calibration profile (shardwise calibrate --save) for every later question; null drops it. */
      setProfile: function (p) { profile = p || null; },
      get sessionId() { return sessionId; },
    };
  }

  function autoMount() {
    if (ds.target) {
      var target = document.querySelector(ds.target);
      if (!target) return;
      var inst = mount(target, { title: ds.title, mode: target.dataset.mode, maxChars: +target.dataset.maxChars || 0,
        onScenario: window.ShardwiseChat.onScenario, context: window.ShardwiseChat.context });
      window.ShardwiseChat.instance = inst;
      document.dispatchEvent(new CustomEvent("shardwise:chat-ready", { detail: inst }));
      return;
    }
    var holder = document.createElement("div");
    holder.setAttribute("data-shardwise-widget", "");
    document.body.appendChild(holder);
    var shadow = holder.attachShadow({ mode: "open" });
    shadow.appendChild(el("link", { rel: "stylesheet", href: BASE + "/static/chat.css" }));
    var popup = el("div", { className: "sw-popup", role: "dialog", "aria-label": ds.title || "Ask shardwise" });
    popup.hidden = true;
    var launcher = el("button", { type: "button", className: "sw-launcher", "aria-expanded": "false", text: ds.title || "Ask shardwise" });
    shadow.appendChild(popup); shadow.appendChild(launcher);
    var inner = el("div", { style: "flex:1;display:flex;min-height:0" });
    popup.appendChild(inner);
    var instance = null;
    function toggle(open) {
      popup.hidden = !open;
      launcher.setAttribute("aria-expanded", open ? "true" : "false");
      if (open) {
        if (!instance) { instance = mount(inner, { title: ds.title }); window.ShardwiseChat.instance = instance; }
        var q = inner.shadowRoot && inner.shadowRoot.querySelector("textarea");
        if (q) q.focus();
      }
    }
    launcher.addEventListener("click", function () { toggle(popup.hidden); });
    popup.addEventListener("keydown", function (ev) { if (ev.key === "Escape") { toggle(false); launcher.focus(); } });
  }

  window.ShardwiseChat = window.ShardwiseChat || {};
  window.ShardwiseChat.mount = mount;
  window.ShardwiseChat.baseUrl = BASE;
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", autoMount);
  else autoMount();
})();
