// The steady debug page: fetches the JSON API and renders three tables.
// No framework, no external fetch.
"use strict";

const state = { keys: [], timer: null };

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

function num(v) { return el("td", { class: "num" }, v); }

async function getJSON(path) {
  const r = await fetch(path, { cache: "no-store" });
  if (!r.ok) throw new Error(path + ": " + r.status);
  return r.json();
}

function relative(iso) {
  const ms = new Date(iso).getTime() - Date.now();
  const s = Math.round(Math.abs(ms) / 1000);
  const txt = s < 60 ? s + "s" : s < 3600 ? Math.round(s / 60) + "m" : Math.round(s / 3600) + "h";
  return ms >= 0 ? "in " + txt : txt + " ago";
}

function renderLoops(loops) {
  const body = document.querySelector("#loops tbody");
  body.replaceChildren(...loops.map(l => {
    const sh = l.sharding;
    const role = sh
      ? (sh.member
        ? "sharded: " + (sh.owned || []).length + " of " + sh.shards + " shards" +
          ((sh.moving || []).length ? ", " + sh.moving.length + " moving" : "")
        : "sharded: joining") + (sh.problem ? " (" + sh.problem + ")" : "")
      : l.leading
        ? (l.fenced ? "leading (term " + l.fence.Revision + ")" : "leading")
        : "standby";
    const q = l.queue;
    return el("tr", { "data-loop": l.name },
      el("td", {}, l.name),
      el("td", { class: l.leading ? "good" : "muted" }, role),
      el("td", {}, l.busy + " / " + (l.leading ? l.workers - l.busy : 0) + " of " + l.workers),
      num(q.ready + q.low), num(q.processing), num(q.delayed), num(q.backingOff), num(q.held),
      num(l.failing), num(l.stalled), num(l.oscillating), num(l.throttled || 0));
  }));
}

// clip shows text on at most two lines; the whole of it is in the title
// (hover) and one click away.
function clip(text, cls) {
  return el("div", { class: "clip" + (cls ? " " + cls : ""), title: text }, text);
}

function conditions(k) {
  if (!k.conditions) return "";
  const short = k.conditions.map(c => c.type + "=" + c.status + (c.reason ? " (" + c.reason + ")" : "")).join(", ");
  const full = k.conditions.map(c =>
    c.type + "=" + c.status + (c.reason ? " (" + c.reason + ")" : "") + (c.message ? ": " + c.message : "")).join("\n");
  const e = clip(short, "conds");
  e.title = full;
  return e;
}

// The flipping paths, collapsed to a count: the list opens on click.
function oscillation(k) {
  const o = k.oscillation;
  if (!o) return "";
  const n = o.paths.length;
  return el("details", { class: "paths" },
    el("summary", {}, el("strong", {}, o.kind), " ", o.writes + " writes in " + o.window + ", " + n + (n === 1 ? " path" : " paths")),
    el("code", {}, o.paths.join("\n")));
}

function when(iso) {
  return [el("time", { datetime: iso }, new Date(iso).toLocaleTimeString()), " (" + relative(iso) + ")"];
}

function renderKeys() {
  const q = document.getElementById("search").value.trim();
  const keys = state.keys.filter(k => q === "" || k.key.includes(q));
  const body = document.querySelector("#keys tbody");
  body.replaceChildren(...keys.map(k => {
    let cls = "";
    if (k.oscillation && k.oscillation.kind === "Throttled") cls = "throttled";
    else if (k.oscillation) cls = "oscillating";
    else if (k.stalled) cls = "stalled";
    else if (k.failures > 0) cls = "failing";
    const why = k.stalled ? [clip(k.why, "one"), el("div", { class: "bad reason clip one" }, "Stalled: " + k.reason)] : [clip(k.why)];
    const next = k.until ? when(k.until) : ["on next change"];
    const failures = k.lastFailure ? el("td", { class: "num failures" }, k.failures, el("div", { class: "muted last-failure" }, "last ", ...when(k.lastFailure))) : num(k.failures);
    return el("tr", { class: cls, "data-key": k.key, "data-loop": k.loop },
      el("td", {}, k.loop),
      el("td", { class: "key" }, el("code", { title: k.key }, k.key)),
      el("td", { class: "phase" }, k.phase),
      el("td", { class: "why" }, ...why),
      el("td", { class: "next" }, ...next),
      failures,
      el("td", {}, (k.lastResult || "") + (k.lastDuration ? " in " + k.lastDuration : "")),
      el("td", {}, k.lastError ? clip(k.lastError, "err") : ""),
      el("td", {}, conditions(k)),
      el("td", {}, oscillation(k)));
  }));
  document.getElementById("nokeys").hidden = keys.length > 0;
}

// renderFailures lists every Loop's recent failures, newest first: they
// stay after their keys went idle.
function renderFailures(loops) {
  const rows = [];
  for (const l of loops) {
    for (const f of l.recentFailures || []) rows.push({ loop: l.name, ...f });
  }
  rows.sort((a, b) => new Date(b.time) - new Date(a.time));
  const body = document.querySelector("#failures tbody");
  body.replaceChildren(...rows.map(f => el("tr", { "data-loop": f.loop, "data-key": f.key },
    el("td", { class: "when" }, ...when(f.time)),
    el("td", {}, f.loop),
    el("td", { class: "key" }, el("code", { title: f.key }, f.key)),
    num(f.attempt),
    el("td", {}, clip(f.error, "err")),
    el("td", { class: "muted" }, el("code", {}, f.reconcileID)))));
  document.getElementById("nofailures").hidden = rows.length > 0;
}

function renderEvents(ev) {
  const body = document.querySelector("#events tbody");
  body.replaceChildren(...ev.events.map(e => el("tr", { class: e.type === "Warning" ? "failing" : "", "data-object": e.kind + "/" + e.name },
    el("td", { class: "when" }, ...when(e.last)),
    el("td", { class: e.type === "Warning" ? "bad" : "" }, e.type),
    el("td", {}, e.reason),
    el("td", { class: "key" }, el("code", { title: e.kind + "/" + e.name }, e.kind + "/" + e.name)),
    el("td", {}, clip(e.message || "")),
    num(e.count),
    el("td", {}, e.source || ""))));
  document.getElementById("noevents").hidden = ev.events.length > 0;
  const s = ev.stats;
  document.getElementById("eventstats").textContent = s && s.dropped ? s.dropped + " events dropped (buffer full)" : "";
}

function opt(v) { return v === undefined || v === null ? "–" : v; }

function renderCaches(caches) {
  const body = document.querySelector("#caches tbody");
  body.replaceChildren(...caches.map(c => el("tr", { "data-cache": c.name },
    el("td", {}, c.name),
    el("td", {}, c.kind ? c.kind + (c.version ? "@" + c.version : "") : "–"),
    el("td", { class: c.synced ? "good" : "bad" }, c.synced ? "synced" : "not synced"),
    num(c.revision), num(c.objects), num(opt(c.relists)), num(opt(c.driftRepairs)), num(opt(c.undecodable)), num(opt(c.panics)))));
}

async function refresh() {
  try {
    const [loops, keys, caches, ev] = await Promise.all([getJSON("api/loops"), getJSON("api/keys"), getJSON("api/caches"), getJSON("api/events")]);
    renderLoops(loops);
    renderFailures(loops);
    renderEvents(ev);
    state.keys = keys;
    renderKeys();
    renderCaches(caches);
    document.getElementById("updated").textContent = "updated " + new Date().toLocaleTimeString();
    document.getElementById("error").hidden = true;
  } catch (e) {
    const err = document.getElementById("error");
    err.textContent = String(e);
    err.hidden = false;
  }
}

function schedule() {
  clearInterval(state.timer);
  if (document.getElementById("auto").checked) state.timer = setInterval(refresh, 2000);
}

document.addEventListener("DOMContentLoaded", () => {
  const search = document.getElementById("search");
  search.value = new URLSearchParams(location.search).get("q") || "";
  search.addEventListener("input", renderKeys);
  document.getElementById("auto").addEventListener("change", schedule);
  refresh();
  schedule();
});
