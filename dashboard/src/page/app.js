// The dashboard page: one snapshot at load, then one per server-sent
// event (or, while the event stream is down, one polled per period); per
// executor a table of lanes and two small SVG charts (queued and
// completed per second, per lane) over the last two minutes; per
// pipeline a table of its stages in order, with their latest faults and
// dead letters; per RabbitMQ bridge a table of its queues.
"use strict";

const HISTORY = 120;
const COLORS = ["#4c6ef5", "#e8590c", "#2b8a3e", "#ae3ec9", "#1098ad", "#f08c00", "#c92a2a", "#5c940d"];
// Where the page is mounted: its <base>, which the server sets.
const base = new URL(document.baseURI).pathname;
const history = new Map(); // "executor/priority" -> [{queued, rate}]
let seq = 0;
let period = 1000; // ms between the server's events, from each snapshot

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

// Each executor's card is built once and then updated in place, so a
// button under the pointer is never swapped for a new one mid-click.
const cards = new Map(); // executor name -> its card's parts

function drawChart(parts, exec, field) {
  const w = 320, h = 90;
  let max = 1;
  for (const lane of exec.lanes) {
    for (const p of history.get(exec.name + "/" + lane.priority) || []) max = Math.max(max, p[field]);
  }
  const lines = [];
  const legend = [];
  exec.lanes.forEach((lane, i) => {
    const points = history.get(exec.name + "/" + lane.priority) || [];
    const color = COLORS[i % COLORS.length];
    const coords = points.map((p, j) => {
      const x = (w * (HISTORY - points.length + j)) / (HISTORY - 1);
      const y = h - 4 - ((h - 8) * p[field]) / max;
      return x.toFixed(1) + "," + y.toFixed(1);
    });
    lines.push(svg("polyline", { points: coords.join(" "), fill: "none", stroke: color, "stroke-width": 1.5 }));
    legend.push(el("span", { style: "color:" + color }, "lane " + lane.priority));
  });
  legend.push(el("span", { class: "muted" }, "max " + fmt(max, field === "queued" ? 0 : 1)));
  parts.svg.replaceChildren(...lines);
  parts.legend.replaceChildren(...legend);
}

function newChart(field, title) {
  const plot = svg("svg", { viewBox: "0 0 320 90", preserveAspectRatio: "none", "data-chart": field });
  const legend = el("div", { class: "legend" });
  return { box: el("div", { class: "chart" }, el("h2", {}, title), plot, legend), svg: plot, legend };
}

const FIELDS = ["priority", "weight", "capacity", "state", "queued", "running", "dispatched", "completed_per_sec",
  "share", "wait_p50_ms_window", "wait_p99_ms_window", "rejected", "expired", "dead_lettered", "panicked"];
const HEADINGS = ["lane", "weight", "capacity", "state", "queued", "running", "dispatched", "completed/s",
  "share / weight", "wait p50 ms (window)", "wait p99 ms (window)", "rejected", "expired", "dead", "panicked", ""];

function newCard(exec) {
  const title = el("span", {});
  const threads = el("span", { class: "threads muted" });
  const head = el("tr", {}, ...HEADINGS.map((h) => el("th", {}, h)));
  const body = el("tbody", {});
  const charts = { queued: newChart("queued", "queued"), rate: newChart("rate", "completed per second") };
  const card = el("div", { class: "executor", "data-executor": exec.name },
    el("h2", {}, exec.name + " ", title, threads),
    el("table", { class: "lanes" }, el("thead", {}, head), body),
    el("div", { class: "charts" }, charts.queued.box, charts.rate.box));
  return { card, title, threads, body, charts, rows: new Map() };
}

function newRow(exec, lane) {
  const row = el("tr", { "data-executor": exec.name, "data-priority": lane.priority });
  const cells = {};
  for (const field of FIELDS) {
    cells[field] = el("td", { "data-field": field });
    row.append(cells[field]);
  }
  const button = el("button", { type: "button", "data-executor": exec.name, "data-priority": lane.priority });
  // The verb is read when clicked: the row may have changed since.
  button.addEventListener("click", () => act(button.dataset.action, exec.name, lane.priority));
  row.append(el("td", {}, button));
  return { row, cells, button };
}

function updateRow(parts, lane, enabled, picker) {
  const c = parts.cells;
  const values = {
    priority: lane.priority, weight: lane.weight, capacity: lane.capacity === null ? "∞" : lane.capacity,
    state: lane.paused ? "paused" : "running", queued: lane.queued,
    running: lane.running === null ? "–" : lane.running, dispatched: lane.dispatched,
    completed_per_sec: fmt(lane.completed_per_sec), wait_p50_ms_window: fmt(lane.wait_p50_ms_window, 2),
    wait_p99_ms_window: fmt(lane.wait_p99_ms_window, 2), rejected: lane.rejected, expired: lane.expired,
    dead_lettered: lane.dead_lettered, panicked: lane.panicked,
  };
  for (const [field, value] of Object.entries(values)) {
    if (c[field].textContent !== String(value)) c[field].textContent = value;
  }
  // The window's waits in the cell, those since start on hover.
  c.wait_p50_ms_window.title = "since start: " + fmt(lane.wait_p50_ms, 2) + " ms";
  c.wait_p99_ms_window.title = "since start: " + fmt(lane.wait_p99_ms, 2) + " ms";
  const got = lane.share === null ? 0 : lane.share;
  c.share.replaceChildren(el("span", { class: "bar", style: `width:${(60 * got).toFixed(0)}px` }),
    el("span", { class: "bar weight", style: `width:${(60 * lane.weight_share).toFixed(0)}px` }),
    " " + pct(lane.share) + " / " + pct(lane.weight_share));
  c.share.title = picker === "strict"
    ? "strict picker: the highest lane with jobs takes every dispatch, whatever the weights"
    : "dispatches over the window / the weight's part when every lane has jobs";
  parts.row.className = lane.paused ? "paused" : "";
  const verb = lane.paused ? "resume" : "pause";
  parts.button.hidden = !enabled;
  if (parts.button.dataset.action !== verb) {
    parts.button.dataset.action = verb;
    parts.button.textContent = verb;
  }
}

function renderExecutor(exec, enabled) {
  let parts = cards.get(exec.name);
  if (!parts) {
    parts = newCard(exec);
    cards.set(exec.name, parts);
    document.getElementById("executors").append(parts.card);
  }
  const t = exec.threads;
  parts.title.textContent = exec.picker + (exec.shut_down ? ", shut down" : "");
  parts.title.className = "muted";
  parts.threads.textContent =
    `threads ${t.live} live, ${t.busy} busy, ${t.idle} idle (${t.sleeping} asleep), peak ${t.peak}`;
  for (const lane of exec.lanes) {
    let row = parts.rows.get(lane.priority);
    if (!row) {
      row = newRow(exec, lane);
      parts.rows.set(lane.priority, row);
      parts.body.append(row.row);
    }
    updateRow(row, lane, enabled, exec.picker);
  }
  drawChart(parts.charts.queued, exec, "queued");
  drawChart(parts.charts.rate, exec, "rate");
}

// Each pipeline's card, built once and updated in place as the
// executors' are.
const pipelineCards = new Map(); // pipeline name -> its card's parts

const STAGE_FIELDS = ["name", "instances", "state", "queued", "depth", "running", "performed",
  "performed_per_sec", "faulted", "dead_lettered", "handed_back"];
const STAGE_HEADINGS = ["stage", "instances", "state", "queued", "depth per lane", "running", "performed",
  "performed/s", "faults", "dead letters", "handed back"];

function newPipelineCard(pipeline) {
  const state = el("span", { class: "muted" });
  const button = el("button", { type: "button", "data-action": "drain", "data-pipeline": pipeline.name }, "drain");
  button.addEventListener("click", () => post(`${base}api/pipelines/${encodeURIComponent(pipeline.name)}/drain`,
    `drain pipeline ${pipeline.name}`, "drain"));
  const body = el("tbody", {});
  const latest = el("ul", { class: "latest" });
  const card = el("div", { class: "executor pipeline", "data-pipeline": pipeline.name },
    el("h2", {}, pipeline.name + " ", state, " ", button),
    el("table", { class: "stages" }, el("thead", {}, el("tr", {}, ...STAGE_HEADINGS.map((h) => el("th", {}, h)))), body),
    latest);
  // Rows by position: two stages may share a name.
  return { card, state, button, body, latest, rows: [] };
}

function newStageRow(pipeline, stage, index) {
  const row = el("tr", { "data-pipeline": pipeline.name, "data-stage": stage.name, "data-index": index });
  const cells = {};
  for (const field of STAGE_FIELDS) {
    cells[field] = el("td", { "data-field": field });
    row.append(cells[field]);
  }
  return { row, cells };
}

function updateStageRow(parts, stage) {
  const values = {
    name: stage.name, instances: stage.instances, state: stage.finished || "running", queued: stage.queued,
    depth: stage.lanes.map((l) => `${l.priority}: ${l.queued}`).join(", ") || "–", running: stage.running,
    performed: stage.performed, performed_per_sec: fmt(stage.performed_per_sec), faulted: stage.faulted,
    dead_lettered: stage.dead_lettered, handed_back: stage.handed_back,
  };
  for (const [field, value] of Object.entries(values)) {
    if (parts.cells[field].textContent !== String(value)) parts.cells[field].textContent = value;
  }
  parts.row.className = stage.finished ? "ended" : "";
}

function latestItems(stage) {
  const items = stage.latest_faults.map((f) => el("li", { class: "fault" },
    `${stage.name}: ${f.phase} failed on instance ${f.instance}` +
    (f.priority === null ? "" : ` at priority ${f.priority}`) + ` after ${f.attempts} attempt(s): ${f.error}`));
  for (const d of stage.latest_dead_letters) {
    items.push(el("li", { class: "dead" }, `${stage.name}: dead letter at priority ${d.priority}: ${d.reason}` +
      (d.sent_back ? ` (sent back ${d.sent_back} times)` : "")));
  }
  return items;
}

function renderPipeline(pipeline, enabled) {
  let parts = pipelineCards.get(pipeline.name);
  if (!parts) {
    parts = newPipelineCard(pipeline);
    pipelineCards.set(pipeline.name, parts);
    document.getElementById("pipelines").append(parts.card);
  }
  parts.state.textContent = pipeline.ended ? "ended" : pipeline.stages.length + " stage(s)";
  parts.button.hidden = !enabled || pipeline.ended;
  pipeline.stages.forEach((stage, i) => {
    let row = parts.rows[i];
    if (!row) {
      row = newStageRow(pipeline, stage, i);
      parts.rows.push(row);
      parts.body.append(row.row);
    }
    updateStageRow(row, stage);
  });
  parts.latest.replaceChildren(...pipeline.stages.flatMap(latestItems));
}

// Each bridge: a small table of its queues, rebuilt on each snapshot
// (nothing in it to click).
const QUEUE_FIELDS = ["queue", "connected", "in_hand", "acked", "requeued", "dead_lettered", "retried", "reconnects"];
const QUEUE_HEADINGS = ["queue", "state", "in hand", "acked", "requeued", "dead letters", "retried", "reconnects"];

function renderBridges(bridges) {
  document.getElementById("bridges-panel").hidden = bridges.length === 0;
  const cards = bridges.map((bridge) => {
    const rows = bridge.queues.map((q) => el("tr", { "data-bridge": bridge.name, "data-queue": q.queue,
      class: q.connected ? "" : "ended" }, ...QUEUE_FIELDS.map((field) => el("td", { "data-field": field },
      field === "connected" ? (q.connected ? "connected" : "disconnected")
        : field === "in_hand" ? `${q.in_hand} (max ${q.max_in_hand})` : q[field]))));
    return el("div", { class: "executor bridge", "data-bridge": bridge.name }, el("h2", {}, bridge.name),
      el("table", { class: "queues" }, el("thead", {}, el("tr", {}, ...QUEUE_HEADINGS.map((h) => el("th", {}, h)))),
        el("tbody", {}, ...rows)));
  });
  document.getElementById("bridges").replaceChildren(...cards);
}

function render(snapshot) {
  // Never faster than the server's floor, whatever the snapshot says.
  // Clamped to what a timer takes (about 24.8 days; a longer delay would
  // fire at once).
  if (snapshot.period_ms) period = Math.min(Math.max(50, snapshot.period_ms), 2 ** 31 - 1);
  seq += 1;
  document.getElementById("seq").textContent = seq;
  document.getElementById("window").textContent = "rates and waits over " + fmt(snapshot.window_secs) + " s";
  document.getElementById("auth").hidden = !snapshot.actions_enabled;
  for (const exec of snapshot.executors) {
    remember(exec);
    renderExecutor(exec, snapshot.actions_enabled);
  }
  const pipelines = snapshot.pipelines || [];
  document.getElementById("pipelines-panel").hidden = pipelines.length === 0;
  for (const pipeline of pipelines) renderPipeline(pipeline, snapshot.actions_enabled);
  renderBridges(snapshot.bridges || []);
  const rows = snapshot.actions.slice().reverse().map((a) => el("tr", {},
    el("td", {}, new Date(a.at_ms).toLocaleTimeString()), el("td", {}, a.who), el("td", {}, a.from || "–"),
    el("td", {}, a.action), el("td", {}, a.pipeline ? "pipeline " + a.pipeline : a.executor),
    el("td", {}, a.pipeline ? "–" : a.priority), el("td", {}, a.outcome)));
  document.querySelector("#actions tbody").replaceChildren(...rows);
}

function act(verb, executor, priority) {
  const url = `${base}api/executors/${encodeURIComponent(executor)}/lanes/${priority}/${verb}`;
  return post(url, `${verb} lane ${priority} of ${executor}`, verb);
}

async function post(url, what, verb) {
  const status = document.getElementById("action-status");
  const token = document.getElementById("token").value.trim();
  const headers = token ? { Authorization: "Bearer " + token } : {};
  try {
    const response = await fetch(url, { method: "POST", headers });
    const body = await response.json().catch(() => ({}));
    status.textContent = `${what}: ${response.status} ${body.outcome || ""}`;
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

// While the event stream is down (ended by the server, or failing), the
// snapshot is polled once a period; the browser keeps reopening the
// stream meanwhile, and the first event that arrives stops the polling.
let source = null; // the event stream
let poller = null; // { timer } while polling

function startPolling() {
  if (poller) return;
  const me = { timer: 0 };
  poller = me;
  const tick = async () => {
    // A stream the browser gave up on (an answer that was not a stream)
    // is opened afresh.
    if (source.readyState === EventSource.CLOSED) connect();
    await refresh().catch(() => {});
    if (poller === me) me.timer = setTimeout(tick, period);
  };
  me.timer = setTimeout(tick, period);
}

function stopPolling() {
  if (!poller) return;
  clearTimeout(poller.timer);
  poller = null;
}

function connect() {
  const badge = document.getElementById("connection");
  source = new EventSource(base + "api/events");
  source.addEventListener("snapshot", (e) => {
    stopPolling();
    badge.textContent = "live";
    badge.className = "badge live";
    render(JSON.parse(e.data));
  });
  source.onerror = () => {
    badge.textContent = "polling";
    badge.className = "badge down";
    startPolling();
  };
}

document.getElementById("auth").addEventListener("submit", (e) => e.preventDefault());
refresh().catch(() => {});
connect();
