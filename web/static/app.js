/* shardwise page behaviour: the form swaps only the results panel, the chat fills the same form,
 * sortable alternatives, config tabs, copy buttons. Everything also works (less smoothly) without it. */
(function () {
  "use strict";
  var form = document.getElementById("scenario");
  var results = document.getElementById("results");
  var announce = document.getElementById("announce");

  function toggleModelFields() {
    var choice = form.elements.model.value;
    form.querySelectorAll("[data-show-for]").forEach(function (f) { f.hidden = f.getAttribute("data-show-for") !== choice; });
  }

  /* "8192", "8k", "1,024", "1e4" -> tokens, as the server reads a length (engine.inputs.parse_seq_len: k = 1024,
     a whole positive number); anything else -> null, left out (the form's own refresh then says what is wrong).
     parseInt read "1,024" and "1e4" as 1. */
  function tokenLength(text) {
    var t = text.trim().toLowerCase().replace(/[,_]/g, "");
    var k = /k$/.test(t), n = Number(k ? t.slice(0, -1) : t) * (k ? 1024 : 1);
    return t && Number.isInteger(n) && n > 0 ? n : null;
  }

  function formScenario() {
    var f = form.elements, s = { gpu: f.gpu.value, gpus: +f.gpus.value || null, mode: f.mode.value,
      precision: f.precision.value, framework: f.framework.value };
    if (f.model.value === "__params__") s.params = f.params.value; else if (f.model.value !== "__config__") s.model = f.model.value;
    if (f.gpus_per_node.value) s.gpus_per_node = +f.gpus_per_node.value;
    if (f.network.value) s.network = f.network.value;
    var seq = tokenLength(f.seq_len.value);
    if (seq) s.seq_len = seq;
    if (f.batch.value) s[f.batch_unit.value === "tokens" ? "global_batch_tokens" : "global_batch"] = f.batch.value;
    var response = f.response_len ? tokenLength(f.response_len.value) : null;
    var prompt = f.prompt_len ? tokenLength(f.prompt_len.value) : null;
    if ((response || prompt) && /^(grpo|ppo)/.test(s.mode)) {  /* rollout modes: the sequence is prompt + response */
      if (response) s.response_len = response;
      if (prompt) s.prompt_len = prompt;
      delete s.seq_len;
    }
    if (f.group_size && +f.group_size.value > 0 && /^(grpo|ppo)/.test(s.mode)) s.group_size = +f.group_size.value;
    /* The settings the chat's scenario also takes (tools/scenario.py), when not their defaults: without them the
       chat priced the page's plan under the default dispatcher, graphs and rank, and its numbers differed. */
    if (f.moe_dispatcher && f.moe_dispatcher.value !== "alltoall") s.moe_dispatcher = f.moe_dispatcher.value;
    if (f.moe_a2a_overlap && f.moe_a2a_overlap.value === "on") s.moe_a2a_overlap = true;
    if (f.cuda_graphs && f.cuda_graphs.value !== "none") s.cuda_graphs = f.cuda_graphs.value;
    if (f.mean_doc_len && +f.mean_doc_len.value > 0) s.mean_doc_len = +f.mean_doc_len.value;
    if (f.lora_rank && +f.lora_rank.value > 0 && /lora/.test(s.mode)) s.lora_rank = +f.lora_rank.value;
    if (f.grad_reduce_dtype && f.grad_reduce_dtype.value === "bf16") s.grad_reduce_dtype = "bf16";
    if (f.fp8_param_gather && f.fp8_param_gather.value === "on") s.fp8_param_gather = true;
    if (f.recompute_modules && f.recompute_modules.value.trim())
      s.recompute_modules = f.recompute_modules.value.replace(/,/g, " ").split(/\s+/).filter(Boolean);
    return s;
  }

  /* Refreshes can overlap (the chat's answer loads its scenario into the form and refreshes while the next
     question refreshes too): only the newest request's answer is shown, whatever order they return in. A quick
     refusal would otherwise be replaced by an older, slower search's results. */
  var newestRefresh = 0;
  async function submitForm(ev, quiet) {
    if (ev) ev.preventDefault();
    var button = form.querySelector("button[type=submit]");
    var mine = ++newestRefresh;
    button.setAttribute("aria-busy", "true");
    try {
      var key = formKey();
      var res = await fetch("/ui/results", { method: "POST", body: new URLSearchParams(new FormData(form)),
        headers: { accept: "text/html" } });
      /* The chat predicts with the profile the form holds, accepted or not: a refused one then gets the
         server's own error in the chat too, and a cleared one is dropped (not the last accepted one kept). */
      var chat = window.ShardwiseChat && window.ShardwiseChat.instance;
      if (chat && chat.setProfile) chat.setProfile(formProfile());
      var isJson = (res.headers.get("content-type") || "").indexOf("application/json") === 0;
      var body = isJson ? await res.json() : await res.text();
      if (mine !== newestRefresh) return;  /* a newer refresh started meanwhile: its answer is the one to show */
      if (isJson) {
        showError(body.message || ("the server answered " + res.status));  /* 413, 429, … */
        return;
      }
      results.innerHTML = body;
      enhance(results);
      var title = results.querySelector("#results-title");
      announce.textContent = title ? title.textContent : "Results updated";
      if (!quiet) results.focus({ preventScroll: false });
      /* A form edited while this request was in flight stays "touched": the results on show are not of it,
         so the chat's next question refreshes them first (else a profile replaced mid-refresh never shows). */
      if (res.ok) { shownKey = key; if (formKey() === key) touched = false; }
    } catch (e) {
      if (mine === newestRefresh) showError("Could not reach the server: " + e.message);
    } finally {
      if (mine === newestRefresh) button.removeAttribute("aria-busy");
    }
  }

  /* The calibration profile pasted in the form, for the chat too (text that is not JSON: none; the results
     panel shows why). */
  function formProfile() {
    var text = profileText();
    if (!text) return null;
    try { return JSON.parse(text); } catch (e) { return null; }
  }

  function profileText() {
    return form.elements.profile_json ? form.elements.profile_json.value.trim() : "";
  }

  /* What the results on show were computed from: the scenario and the profile (a changed profile alone
     makes them stale, so the chat's next question refreshes them first). */
  function formKey() {
    return JSON.stringify([formScenario(), profileText()]);
  }

  function showError(message) {
    results.innerHTML = "";
    var box = document.createElement("div");
    box.className = "error-box"; box.setAttribute("role", "alert");
    var title = document.createElement("h2"); title.id = "results-title"; title.textContent = "That setup cannot be evaluated";
    var text = document.createElement("p"); text.className = "error-message"; text.textContent = message;
    box.appendChild(title); box.appendChild(text); results.appendChild(box);
    announce.textContent = message;
  }

  function setSelect(select, value) {
    if (value === null || value === undefined || value === "") return;
    value = String(value);
    var match = Array.prototype.find.call(select.options, function (o) { return o.value.toLowerCase() === value.toLowerCase(); });
    if (!match) { match = new Option(value, value); select.add(match); }
    select.value = match.value;
  }

  /* The form -> the chat: each question carries the form's scenario and the plan the results show for it,
   * when either changed since the chat last heard of them; "why not TP=8?" then needs no retyping. A form the
   * user changed but did not submit is submitted first, so the plan on the table is the one on show. */
  var shownKey = null, sentKey = null, touched = false;
  function chatContext() {
    if (!form) return null;
    var s = formScenario(), key = formKey();
    var whole = (s.model || s.params) && s.gpu && s.gpus;
    var ready = touched && whole && key !== shownKey ? submitForm(null, true) : Promise.resolve();
    return ready.then(function () {
      var plan = key === shownKey ? chatPlanShown() : null;  /* only results of these very values */
      var both = JSON.stringify([s, plan]);
      if (both === sentKey) return null;
      sentKey = both;
      return plan ? { scenario: s, plan: plan } : { scenario: s };
    });
  }

  function chatPlanShown() {
    var panel = results.querySelector("[data-plan]");
    return panel && panel.getAttribute("data-plan") ? JSON.parse(panel.getAttribute("data-plan")) : null;
  }

  /* The chat's scenario (the tools' names: model, params, gpu, gpus, …) -> the form, then refresh results. */
  var lastApplied = null;
  function applyScenario(s, plan, force) {
    if (!s || !(s.model || s.params) || !s.gpu || !s.gpus) return;  // not a whole scenario yet
    var key = JSON.stringify(s);
    if (key === lastApplied && !force) return;  // e.g. a concept question: the plan on show is still the right one
    lastApplied = key;
    var f = form.elements;
    if (s.params && !s.model) { f.model.value = "__params__"; f.params.value = s.params; }
    else if (s.model) setSelect(f.model, s.model);
    if (s.gpu) setSelect(f.gpu, s.gpu);
    if (s.gpus) { f.gpus.value = s.gpus; f.nodes.value = ""; }
    f.gpus_per_node.value = s.gpus_per_node || "";
    if (s.network) setSelect(f.network, s.network); else f.network.value = "";
    if (s.seq_len) f.seq_len.value = s.seq_len;
    if (f.response_len) f.response_len.value = s.response_len || "";
    if (f.prompt_len) f.prompt_len.value = s.prompt_len || "";
    if (f.group_size) f.group_size.value = s.group_size || "";
    if (s.global_batch_tokens) { f.batch.value = s.global_batch_tokens; f.batch_unit.value = "tokens"; }
    else if (s.global_batch) { f.batch.value = s.global_batch; f.batch_unit.value = "sequences"; }
    ["mode", "precision", "framework"].forEach(function (k) { if (s[k]) f[k].value = s[k]; });
    /* the chat's scenario is whole: a setting it leaves out is at its default */
    if (f.moe_dispatcher) f.moe_dispatcher.value = s.moe_dispatcher || "alltoall";
    if (f.moe_a2a_overlap) f.moe_a2a_overlap.value = s.moe_a2a_overlap ? "on" : "off";
    if (f.cuda_graphs) f.cuda_graphs.value = s.cuda_graphs || "none";
    if (f.mean_doc_len) f.mean_doc_len.value = s.mean_doc_len || "";
    if (f.lora_rank) f.lora_rank.value = s.lora_rank || "";
    if (f.grad_reduce_dtype) f.grad_reduce_dtype.value = s.grad_reduce_dtype || "fp32";
    if (f.fp8_param_gather) f.fp8_param_gather.value = s.fp8_param_gather ? "on" : "off";
    if (f.recompute_modules) f.recompute_modules.value = (s.recompute_modules || []).join(" ");
    toggleModelFields();
    if (!force && formKey() === shownKey) {  /* the results on show are of this very scenario: no second search */
      sentKey = JSON.stringify([formScenario(), chatPlanShown()]);
      return;
    }
    sentKey = JSON.stringify([formScenario(), null]);  /* the chat already knows this scenario and its plan */
    submitForm(null, true).then(function () { sentKey = JSON.stringify([formScenario(), chatPlanShown()]); });
  }

  function sortTable(table, col, th) {
    var asc = th.getAttribute("aria-sort") !== "ascending";
    var numeric = th.getAttribute("data-type") === "num";
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[col].getAttribute("data-value"), y = b.cells[col].getAttribute("data-value");
      if (numeric) { x = x === "" ? Infinity : +x; y = y === "" ? Infinity : +y; return asc ? x - y : y - x; }
      return asc ? x.localeCompare(y) : y.localeCompare(x);
    });
    rows.forEach(function (r) { body.appendChild(r); });
    table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
  }

  function copy(button) {
    var target = document.querySelector(button.getAttribute("data-copy"));
    var text = target ? target.textContent : "";
    var reset = function (label) { var old = button.textContent; button.textContent = label; setTimeout(function () { button.textContent = old; }, 1500); };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { reset("Copied"); }, function () { reset("Press Ctrl+C"); });
    } else {
      var range = document.createRange(); range.selectNodeContents(target);
      var sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
      reset(document.execCommand("copy") ? "Copied" : "Press Ctrl+C");
    }
  }

  function enhance(scope) {
    scope.querySelectorAll("table.sortable").forEach(function (table) {
      table.querySelectorAll("th").forEach(function (th, col) {
        var b = th.querySelector("button");
        if (b) b.addEventListener("click", function () { sortTable(table, col, th); });
      });
    });
    scope.querySelectorAll("[data-tabs]").forEach(function (box) {
      var tabs = Array.prototype.slice.call(box.querySelectorAll("[role=tab]"));
      function select(k, focus) {
        tabs.forEach(function (t, i) {
          t.setAttribute("aria-selected", i === k ? "true" : "false"); t.tabIndex = i === k ? 0 : -1;
          document.getElementById(t.getAttribute("aria-controls")).hidden = i !== k;
        });
        if (focus) tabs[k].focus();
      }
      tabs.forEach(function (t, i) {
        t.addEventListener("click", function () { select(i); });
        t.addEventListener("keydown", function (ev) {
          var j = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[ev.key];
          if (j === undefined) return;
          ev.preventDefault(); select((j + tabs.length) % tabs.length, true);
        });
      });
    });
    scope.querySelectorAll("button.copy").forEach(function (b) { b.addEventListener("click", function () { copy(b); }); });
  }

  /* Nodes × GPUs per node fills the GPU count; typing a GPU count clears the nodes. */
  function perNode() {
    var f = form.elements, opt = f.gpu.options[f.gpu.selectedIndex];
    return +f.gpus_per_node.value || +(opt && opt.getAttribute("data-per-node")) || 0;
  }
  function syncGpus() {
    var f = form.elements;
    if (+f.nodes.value > 0 && perNode()) f.gpus.value = +f.nodes.value * perNode();
  }

  if (form) {
    form.elements.nodes.addEventListener("input", syncGpus);
    form.elements.gpus_per_node.addEventListener("input", syncGpus);
    form.elements.gpu.addEventListener("change", syncGpus);
    form.elements.gpus.addEventListener("input", function () { form.elements.nodes.value = ""; });
    form.elements.model.addEventListener("change", toggleModelFields);
    toggleModelFields();
    form.addEventListener("submit", submitForm);
    form.addEventListener("input", function () { touched = true; });
    form.addEventListener("change", function () { touched = true; });
    var file = document.getElementById("f-config-file");
    if (file) file.addEventListener("change", function () {
      var f = file.files[0];
      if (!f) return;
      if (f.size > 256 * 1024) { alert("That file is " + Math.round(f.size / 1024) + " KB; a config.json is a few KB."); file.value = ""; return; }
      f.text().then(function (t) { form.elements.config_json.value = t; });
    });
    var profileFile = document.getElementById("f-profile-file");
    if (profileFile) profileFile.addEventListener("change", function () {
      var f = profileFile.files[0];
      if (!f) return;
      if (f.size > 256 * 1024) { alert("That file is " + Math.round(f.size / 1024) + " KB; a profile is a few KB."); profileFile.value = ""; return; }
      f.text().then(function (t) { form.elements.profile_json.value = t; });
    });
  }
  enhance(document);
  window.ShardwiseChat = window.ShardwiseChat || {};
  window.ShardwiseChat.onScenario = applyScenario;
  window.ShardwiseChat.context = chatContext;
})();
