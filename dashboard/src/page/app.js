// The dashboard page: one snapshot at load, then one per server-sent
// event; per executor a table of lanes and two small SVG charts (queued
// and completed per second, per lane) over the last two minutes.
"use strict";

const HISTORY = 120;
const COLORS = ["#4c6ef5", "#e8590c", "#2b8a3e", "#ae3ec9", "#1098ad", "#f08c00", "#c92a2a", "#5c940d"];
const base = location.pathname.endsWith("/") ? location.pathname : location.pathname + "/";
const history = new Map(); // "executor/priority" -> [{queued, rate}]
let seq = 0;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    // Through the CSSOM: the page's policy refuses inline style attributes.
    if (k === "style") node.style.cssText = v; else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  return node;
}

const fmt = (x, digits = 1) => (x === null || x === undefined ? "–" : Number(x).toFixed(digits));
const pct = (x) => (x === null || x === undefined ? "–" : (100 * x).toFixed(0) + "%");

function remember(exec) {
  for (const lane of exec.lanes) {
    const key = exec.name + "/" + lane.priority;
    const points = history.get(key) || [];
    points.push({ queued: lane.queued, rate: lane.completed_per_sec });
    if (points.length > HISTORY) points.shift();
    history.set(key, points);
  }
}

function chart(exec, field, title) {
  const box = el("div", { class: "chart" }, el("h2", {}, title));
  const w = 320, h = 90;
  const plot = svg("svg", { viewBox: `0 0 ${w} ${h}`, preserveAspectRatio: "none", "data-chart": field });
  let max = 1;
  for (const lane of exec.lanes) {
    for (const p of history.get(exec.name + "/" + lane.priority) || []) max = Math.max(max, p[field]);
  }
  const legend = el("div", { class: "legend" });
  exec.lanes.forEach((lane, i) => {
    const points = history.get(exec.name + "/" + lane.priority) || [];
    const color = COLORS[i % COLORS.length];
    const coords = points.map((p, j) => {
      const x = (w * (HISTORY - points.length + j)) / (HISTORY - 1);
      const y = h - 4 - ((h - 8) * p[field]) / max;
      return x.toFixed(1) + "," + y.toFixed(1);
    });
    plot.append(svg("polyline", { points: coords.join(" "), fill: "none", stroke: color, "stroke-width": 1.5 }));
    legend.append(el("span", { style: "color:" + color }, "lane " + lane.priority));
  });
  legend.append(el("span", { class: "muted" }, "max " + fmt(max, field === "queued" ? 0 : 1)));
  box.append(plot, legend);
  return box;
}

function share(lane) {
  const cell = el("td", { "data-field": "share" });
  const got = lane.share === null ? 0 : lane.share;
  cell.append(el("span", { class: "bar", style: `width:${(60 * got).toFixed(0)}px` }),
    el("span", { class: "bar weight", style: `width:${(60 * lane.weight_share).toFixed(0)}px` }),
    " " + pct(lane.share) + " / " + pct(lane.weight_share));
  return cell;
}

function actionButtons(exec, lane, enabled) {
  const cell = el("td", {});
  if (!enabled) return cell;
  const verb = lane.paused ? "resume" : "pause";
  const button = el("button", { type: "button", "data-action": verb, "data-executor": exec.name,
    "data-priority": lane.priority }, verb);
  button.addEventListener("click", () => act(verb, exec.name, lane.priority));
  cell.append(button);
  return cell;
}

function renderExecutor(exec, enabled) {
  const t = exec.threads;
  const card = el("div", { class: "executor", "data-executor": exec.name },
    el("h2", {}, exec.name + " ",
      el("span", { class: "muted" }, exec.picker + (exec.shut_down ? ", shut down" : "")),
      el("span", { class: "threads muted" },
        `threads ${t.live} live, ${t.busy} busy, ${t.idle} idle (${t.sleeping} asleep), peak ${t.peak}`)));
  const head = el("tr", {});
  for (const h of ["lane", "weight", "capacity", "state", "queued", "running", "dispatched", "completed/s",
    "share / weight", "wait p50 ms", "wait p99 ms", "rejected", "expired", "dead", "panicked", ""]) {
    head.append(el("th", {}, h));
  }
  const body = el("tbody", {});
  for (const lane of exec.lanes) {
    const row = el("tr", { "data-executor": exec.name, "data-priority": lane.priority,
      class: lane.paused ? "paused" : "" });
    const cell = (field, value) => el("td", { "data-field": field }, value);
    row.append(cell("priority", lane.priority), cell("weight", lane.weight),
      cell("capacity", lane.capacity === null ? "∞" : lane.capacity),
      cell("state", lane.paused ? "paused" : "running"),
      cell("queued", lane.queued), cell("running", lane.running === null ? "–" : lane.running),
      cell("dispatched", lane.dispatched), cell("completed_per_sec", fmt(lane.completed_per_sec)),
      share(lane), cell("wait_p50_ms", fmt(lane.wait_p50_ms, 2)), cell("wait_p99_ms", fmt(lane.wait_p99_ms, 2)),
      cell("rejected", lane.rejected), cell("expired", lane.expired), cell("dead_lettered", lane.dead_lettered),
      cell("panicked", lane.panicked), actionButtons(exec, lane, enabled));
    body.append(row);
  }
  card.append(el("table", { class: "lanes" }, el("thead", {}, head), body),
    el("div", { class: "charts" }, chart(exec, "queued", "queued"), chart(exec, "rate", "completed per second")));
  return card;
}

function render(snapshot) {
  seq += 1;
  document.getElementById("seq").textContent = seq;
  document.getElementById("window").textContent = "rates over " + fmt(snapshot.window_secs) + " s";
  document.getElementById("auth").hidden = !snapshot.actions_enabled;
  const main = document.getElementById("executors");
  const cards = snapshot.executors.map((exec) => {
    remember(exec);
    return renderExecutor(exec, snapshot.actions_enabled);
  });
  main.replaceChildren(...cards);
  const rows = snapshot.actions.slice().reverse().map((a) => el("tr", {},
    el("td", {}, new Date(a.at_ms).toLocaleTimeString()), el("td", {}, a.who), el("td", {}, a.from || "–"),
    el("td", {}, a.action), el("td", {}, a.executor), el("td", {}, a.priority), el("td", {}, a.outcome)));
  document.querySelector("#actions tbody").replaceChildren(...rows);
}

async function act(verb, executor, priority) {
  const status = document.getElementById("action-status");
  const token = document.getElementById("token").value.trim();
  const headers = token ? { Authorization: "Bearer " + token } : {};
  const url = `${base}api/executors/${encodeURIComponent(executor)}/lanes/${priority}/${verb}`;
  try {
    const response = await fetch(url, { method: "POST", headers });
    const body = await response.json().catch(() => ({}));
    status.textContent = `${verb} lane ${priority} of ${executor}: ${response.status} ${body.outcome || ""}`;
    status.dataset.status = String(response.status);
    refresh();
  } catch (e) {
    status.textContent = `${verb} failed: ${e}`;
    status.dataset.status = "error";
  }
}

async function refresh() {
  const response = await fetch(base + "api/snapshot");
  if (response.ok) render(await response.json());
}

function connect() {
  const badge = document.getElementById("connection");
  const events = new EventSource(base + "api/events");
  events.addEventListener("snapshot", (e) => render(JSON.parse(e.data)));
  events.onopen = () => { badge.textContent = "live"; badge.className = "badge live"; };
  events.onerror = () => { badge.textContent = "reconnecting"; badge.className = "badge down"; };
}

document.getElementById("auth").addEventListener("submit", (e) => e.preventDefault());
refresh().catch(() => {});
connect();
