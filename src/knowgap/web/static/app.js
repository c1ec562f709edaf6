// knowgap web app. Every piece of run data (prompts, model output, ids) is put on the page as text
// (text nodes / textContent), never parsed as HTML.
"use strict";

const $ = (sel) => document.querySelector(sel);
const view = $("#view");

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "on") { for (const [ev, fn] of Object.entries(v)) node.addEventListener(ev, fn); }
    else if (k === "class") node.className = v;
    else if (k === "dataset") Object.assign(node.dataset, v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    node.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

// replaceChildren with arrays flattened, strings as text nodes, empty values skipped
function put(node, ...children) {
  node.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false)
    .map((c) => (c instanceof Node ? c : document.createTextNode(String(c)))));
}

function toast(text) {
  const t = $("#toast");
  t.textContent = text;
  t.classList.add("on");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => t.classList.remove("on"), 1800);
}

async function api(path, body) {
  const opts = body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const res = await fetch(path, opts);
  const data = await res.json();
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

const shown = (key) => { if (key === null || key === undefined) return "–"; try { const v = JSON.parse(key); return typeof v === "string" ? v : key; } catch (e) { return key; } };
const fmt = (x) => (x === null || x === undefined ? "–" : Number(x).toFixed(3));
const ci = (e) => (e && e.value !== null ? `${fmt(e.value)} [${fmt(e.ci_low)}, ${fmt(e.ci_high)}]` : "–");
const badge = (key, extra) => el("span", { class: `badge ${shown(key)} ${extra || ""}` }, shown(key));

const annotatorInput = $("#annotator");
annotatorInput.value = localStorage.getItem("knowgap.annotator") || "";
annotatorInput.addEventListener("input", () => {
  localStorage.setItem("knowgap.annotator", annotatorInput.value.trim());
  const failures = $("#failures-box");  // the judges' verdicts of every trial: closed once you start labelling
  if (failures && annotatorInput.value.trim()) failures.open = false;
});
const annotator = () => annotatorInput.value.trim();

// ---------------------------------------------------------------- runs list
async function showRuns() {
  $("#crumb").textContent = "runs";
  const runs = await api("/api/runs");
  const picked = new Set();
  const compareBtn = el("button", { disabled: true, id: "compare-btn", on: { click: () => { const [a, b] = [...picked]; location.hash = `#/compare/${encodeURIComponent(a)}/${encodeURIComponent(b)}`; } } }, "compare the two selected runs");
  const rows = runs.map((r) => el("tr", { dataset: { run: r.run_id } },
    el("td", {}, el("input", { type: "checkbox", "aria-label": `select ${r.run_id}`, on: { change: (ev) => {
      if (ev.target.checked) picked.add(r.run_id); else picked.delete(r.run_id);
      compareBtn.disabled = picked.size !== 2;
    } } })),
    el("td", {}, el("a", { href: `#/run/${encodeURIComponent(r.run_id)}`, class: "runlink" }, r.run_id)),
    el("td", {}, r.suite), el("td", { class: `status ${r.status}` }, r.status_text || r.status), el("td", {}, r.target),
    el("td", { class: "num" }, `${r.trials_ok}/${r.trials_total}`), el("td", { class: "num" }, r.labels),
    el("td", {}, (r.started_at || "").slice(0, 19).replace("T", " "))));
  put(view, el("div", { class: "panel" }, el("h2", {}, `Runs (${runs.length})`),
    runs.length ? el("table", { id: "runs" }, el("tr", {}, ["", "run", "suite", "status", "target", "trials ok", "labels", "started (UTC)"].map((h) => el("th", {}, h))), rows)
      : el("p", { class: "muted" }, "No runs in this folder yet: knowgap run starter --model local:qwen2.5-0.5b"),
    el("p", {}, compareBtn)));
}

// ---------------------------------------------------------------- one run
const S = { run: null, info: null, field: null, rows: [], filtered: [], sel: -1, detail: null };

function categories() { return (S.info.categories[S.field] || []); }
// the rubric whose dimension the field is (people score each dimension 1-5), or undefined
function rubricOf(field) { return (S.info.rubrics || []).find((r) => field in r.weights); }
// the fields one label of a trial covers: every dimension of a rubric, else the field itself
function labelFields() { const r = rubricOf(S.field); return r ? Object.keys(r.weights) : [S.field]; }
// my current label per field on the shown trial, from its history (withdrawn labels left out)
function myLabels() {
  const me = annotator(), out = {};
  for (const e of (S.detail ? S.detail.history : [])) if (e.annotator === me) out[e.field] = e.value;
  for (const k of Object.keys(out)) if (out[k] === null) delete out[k];
  return out;
}
// the judges' verdicts stay hidden on a trial until I have labelled every field of it
function labelledByMe() { const mine = myLabels(); return !!annotator() && labelFields().every((f) => f in mine); }
function labelKeys() {
  if (rubricOf(S.field)) return ["1", "2", "3", "4", "5"].map((k) => [k, k]);
  const cats = categories();
  const isBool = cats.length && cats.every((c) => c === "true" || c === "false");
  if (isBool) return [["y", "true"], ["n", "false"]];
  return cats.slice(0, 9).map((c, i) => [String(i + 1), c]);
}

async function showRun(runId, trialId) {
  S.run = runId;
  S.info = await api(`/api/runs/${encodeURIComponent(runId)}`);
  $("#crumb").textContent = `run ${runId}`;
  const fields = S.info.fields;
  const sampled = S.info.samples.length ? S.info.samples[S.info.samples.length - 1].field : null;
  // no field when no trial holds a verdict (e.g. every trial errored): the page says so instead of "undefined"
  S.field = fields.includes(S.field) ? S.field : (fields.includes(sampled) ? sampled : (fields.includes("abstained") ? "abstained" : (fields[0] ?? null)));
  const f = (id, label, control) => el("label", {}, label, control);
  const fieldSel = el("select", { id: "f-field", on: { change: async (e) => { S.field = e.target.value; await loadRows(); renderVerdictOptions(); await loadAgreement(); } } },
    fields.length ? fields.map((x) => el("option", { value: x, selected: x === S.field }, x)) : el("option", { value: "", disabled: true, selected: true }, "none"));
  const configSel = el("select", { id: "f-config", on: { change: applyFilters } }, el("option", { value: "" }, "all"), S.info.configs.map((c) => el("option", { value: c }, c)));
  const verdictSel = el("select", { id: "f-verdict", on: { change: applyFilters } });
  const sampleSel = el("select", { id: "f-sample", on: { change: applyFilters } }, el("option", { value: "" }, "all trials"),
    S.info.samples.map((s) => el("option", { value: s.name }, `sample ${s.name} (${s.trial_ids.length})`)));
  const filters = el("div", { class: "filters" },
    f("f-field", "judge field", fieldSel), f("f-config", "configuration", configSel), f("f-verdict", "verdict", verdictSel),
    f("f-sample", "show", sampleSel),
    el("label", {}, el("input", { type: "checkbox", id: "f-disagree", on: { change: applyFilters } }), "human ≠ judge"),
    el("label", {}, el("input", { type: "checkbox", id: "f-todo", on: { change: applyFilters } }), "not labelled by me"),
    el("label", { title: "hide the judges' verdicts and scores while you label, so they do not anchor you" },
      el("input", { type: "checkbox", id: "f-blind", checked: localStorage.getItem("knowgap.blind") === "1", on: { change: (e) => {
        localStorage.setItem("knowgap.blind", e.target.checked ? "1" : "0"); document.body.classList.toggle("blind", e.target.checked); } } }), "blind"));
  document.body.classList.toggle("blind", localStorage.getItem("knowgap.blind") === "1");
  const m = S.info.manifest;
  put(view, 
    el("div", { class: "panel" }, el("h2", {}, `${m.run_id} · ${m.config.suite} · ${m.config.models.target || ""}`),
      el("div", { class: "muted" }, "status ", el("span", { id: "run-status", class: `status ${m.status}` }, S.info.status_text || m.status), `; ${m.trials_ok} ok / ${m.trials_error} errors / ${m.trials_total} trials; started ${m.started_at}`),
      (S.info.error_lines || []).length ? el("div", { class: "banner", role: "alert" }, S.info.error_lines[0], el("ul", {}, S.info.error_lines.slice(1).map((l) => el("li", {}, l.trim())))) : null,
      el("div", { id: "scorecard" }, el("p", { class: "muted" }, "loading the scorecard…")),
      el("div", { id: "fails", class: "judged" }),
      el("details", { id: "metrics-box" }, el("summary", {}, `metrics (${S.info.metrics.length}${screens(S.info.metrics)})`), metricsBlock(S.info.metrics, S.info.folded || [], S.info.breakdowns_by)),
      // the judges' verdicts of every trial: closed while you label (a name is entered), hidden when blind
      el("details", { id: "failures-box", class: "judged", open: !annotator() }, el("summary", { title: "every wrong per-metric verdict: the judges' verdicts, so it starts closed while you label" }, "What went wrong"), el("div", { id: "failures" }, el("p", { class: "muted" }, "loading…")))),
    el("div", { class: "layout" },
      el("div", {}, el("div", { class: "panel" }, filters, el("div", { id: "count", class: "hint" }), el("div", { id: "trials" }),
        el("p", { class: "hint" }, "keys: ", el("kbd", {}, "j"), "/", el("kbd", {}, "k"), " next/previous, then label with the keys shown on the trial"))),
      el("div", {}, el("details", { class: "panel judged", open: true }, el("summary", {}, "agreement and judge calibration"),
        el("div", { id: "agreement" }, el("h2", {}, "Agreement"))),
        el("div", { class: "panel", id: "detail" }, el("p", { class: "muted" }, "pick a trial")))));
  if (S.info.samples.length && !trialId) sampleSel.value = S.info.samples[S.info.samples.length - 1].name;
  const scored = loadScorecard(runId);  // the page opens on it; the trials load meanwhile
  await loadRows();
  renderVerdictOptions();
  applyFilters();
  await loadFailures();
  if (trialId) {  // #/run/RUN/TRIAL (e.g. a report's --link-template link) opens that trial
    const i = S.filtered.findIndex((r) => r.trial_id === trialId);
    if (i >= 0) await selectRow(i); else toast(`run ${runId} has no trial ${trialId}`);
  }
  await loadAgreement();
  await scored;
}

// what went wrong: each wrong per-metric verdict (and errored trial), filtered by metric; a click opens the trial
async function loadFailures() {
  const box = $("#failures");
  let d;
  try { d = await api(`/api/runs/${encodeURIComponent(S.run)}/failures`); }
  catch (e) { put(box, el("p", { class: "error" }, e.message)); return; }
  const metrics = Object.keys(d.by_metric);
  const sel = el("select", { id: "f-failmetric", on: { change: () => render() } }, el("option", { value: "" }, `all metrics (${d.total})`),
    metrics.map((m) => el("option", { value: m }, `${m} (${d.by_metric[m]})`)));
  const list = el("div", { id: "failure-list" });
  const partKey = (x) => `${x.trial_id}\u0000${x.part ?? ""}\u0000${x.call ?? ""}`;  // a part's verdicts on one call
  const exhibits = new Map((d.exhibits || []).map((x) => [partKey(x), x]));
  function render() {
    const rows = d.failures.filter((f) => !sel.value || f.metric === sel.value);
    const shown = new Set();  // a part's (and call's) input is shown once, at its first listed failure
    put(list, rows.length ? rows.map((f) => {
      const first = !shown.has(partKey(f));
      shown.add(partKey(f));
      return el("div", { class: "failure", dataset: { trial: f.trial_id, metric: f.metric }, on: { click: () => openTrial(f.trial_id) } },
        el("span", { class: "id" }, f.trial_id), " ", el("span", { class: "badge dis" }, f.metric), f.part ? el("span", { class: "muted" }, ` (${f.part})`) : null,
        el("div", { class: "why" }, f.why), first ? exhibitInput(exhibits.get(partKey(f))) : null,
        f.excerpt ? el("div", { class: "excerpt", title: "the answer the verdict is about" }, f.excerpt) : null);
    })
      : el("p", { class: "muted", id: "no-failures" }, d.source === "none" && !d.total ? "no per-trial verdicts in this run" : "nothing went wrong"));
  }
  put(box, d.note ? el("p", { class: "hint", id: "failures-note" }, d.note) : null,
    metrics.length ? el("label", {}, "metric ", sel) : null,
    d.failures.length < d.total ? el("p", { class: "hint" }, `the first ${d.failures.length} of ${d.total}`) : null, list);
  render();
}

// what a failure is about (the API's exhibit): the input of the call it judges, clipped around the planted text,
// which is marked <mark class="planted">; every piece a text node, as everything on this page
function exhibitInput(x) {
  if (!x || !x.shown || !x.input) return null;
  return el("div", { class: "exhibit" }, el("div", { class: "label" }, x.planted.length ? "input (the planted text marked)" : "input"),
    el("pre", { class: "text prompt" }, x.shown_input.map(([text, planted]) => (planted ? el("mark", { class: "planted", title: "planted text" }, text) : text))));
}

async function openTrial(trialId) {  // show every trial, then select this one
  for (const id of ["f-config", "f-verdict", "f-sample"]) $(`#${id}`).value = "";
  for (const id of ["f-disagree", "f-todo"]) $(`#${id}`).checked = false;
  applyFilters();
  const i = S.filtered.findIndex((r) => r.trial_id === trialId);
  if (i >= 0) await selectRow(i);
}

function judgeCell(j) {  // the metric's judge: SCREEN (why), computed, or the judge with its balanced accuracy
  if (!j) return el("td", {}, "–");
  if (j.status === "computed") return el("td", { class: "judge muted", title: j.reason }, "computed");
  const head = [j.judge, j.accuracy].filter(Boolean).join(" · ");
  const mark = j.status === "reportable" ? null : el("span", { class: `badge judge-${j.status}`, title: j.reason }, j.badge);
  return el("td", { class: "judge" }, mark, " ", head, j.status === "reportable" ? null : el("div", { class: "why" }, j.reason));
}

function nText(m) {  // "n cases / n trials" when clusters hold several trials (MetricValue.n_text)
  return m.kind === "count" || m.n_cases === null || m.n_cases === undefined || m.n_cases === m.n ? `${m.n}` : `${m.n_cases} / ${m.n}`;
}

// the run's metrics as report.html shows them: its configurations' numbers, housekeeping rows that are 0 in every
// group folded into one line, the per-group breakdowns (knowledge base, family, language) collapsed
function metricsBlock(metrics, folded, breakdownsBy) {
  if (!metrics.length) return el("p", { class: "muted" }, "no metrics (unfinished run)");
  const kept = metrics.filter((x) => !folded.includes(x.name));
  const broken = kept.filter((x) => x.breakdown);
  return [metricsTable(kept.filter((x) => !x.breakdown)),
    folded.length ? el("p", { class: "hint", id: "folded" }, `0 in every group (housekeeping, lower is better): ${[...folded].sort().join(", ")}`) : null,
    broken.length ? el("details", { id: "breakdowns" }, el("summary", {}, `per-group breakdowns (${(breakdownsBy || []).join(", ")}): ${broken.length} ${broken.length === 1 ? "row" : "rows"}`), metricsTable(broken)) : null];
}

function metricsTable(metrics) {
  if (!metrics.length) return el("p", { class: "muted" }, "no metrics (unfinished run)");
  return el("table", { class: "metrics" }, el("tr", {}, ["group", "metric", "value", "95% CI", "n cases / trials", "corrected (95% CI)", "judge"].map((h) => el("th", {}, h))),
    metrics.map((x) => el("tr", { dataset: { judge: x.judgement ? x.judgement.status : "" } }, el("td", {}, x.group), el("td", { title: x.description }, x.name), el("td", { class: "num" }, fmt(x.value)),
      el("td", {}, x.ci_low === null ? "–" : `[${fmt(x.ci_low)}, ${fmt(x.ci_high)}]`), el("td", { class: "num" }, nText(x)),
      el("td", { class: "corrected" }, (x.judgement && x.judgement.corrected) || ""), judgeCell(x.judgement))));
}

function screens(metrics) {  // ", 3 SCREEN" in the metrics box's summary, so a closed box still shows them
  const n = metrics.filter((x) => x.judgement && x.judgement.status === "screen").length;
  return n ? `, ${n} SCREEN` : "";
}

function renderVerdictOptions() {
  const sel = $("#f-verdict");
  put(sel, el("option", { value: "" }, "all"), categories().map((c) => el("option", { value: c }, shown(c))));
}

async function loadRows() {
  S.rows = await api(`/api/runs/${encodeURIComponent(S.run)}/trials?field=${encodeURIComponent(S.field || "")}`);
}

function applyFilters() {
  const config = $("#f-config").value, verdict = $("#f-verdict").value, sampleName = $("#f-sample").value;
  const dis = $("#f-disagree").checked, todo = $("#f-todo").checked, me = annotator();
  let rows = S.rows;
  if (sampleName) {
    const sample = S.info.samples.find((s) => s.name === sampleName);
    const byId = new Map(rows.map((r) => [r.trial_id, r]));
    rows = sample.trial_ids.map((t) => byId.get(t)).filter(Boolean);
  }
  rows = rows.filter((r) => (!config || r.config_id === config) && (!verdict || r.verdict === verdict) && (!dis || r.disagree) && (!todo || !(me in r.labels)));
  const keep = S.filtered[S.sel] && S.filtered[S.sel].trial_id;
  S.filtered = rows;
  S.sel = Math.max(0, rows.findIndex((r) => r.trial_id === keep));
  renderList();
  if (rows.length) selectRow(S.sel); else put($("#detail"), el("p", { class: "muted" }, "no trial matches the filters"));
}

function renderList() {
  const me = annotator();
  $("#count").textContent = `${S.filtered.length} trials`;
  put($("#trials"), ...S.filtered.map((r, i) => el("div", { class: `row ${i === S.sel ? "sel" : ""}`, dataset: { trial: r.trial_id }, on: { click: () => selectRow(i) } },
    el("span", { class: "id", title: r.trial_id }, r.trial_id),
    r.status !== "ok" ? el("span", { class: "badge dis" }, "error") : (me && me in r.labels ? badge(r.verdict, "verdict") : null),
    me in r.labels ? el("span", { class: "badge mine", title: "your label" }, `me: ${shown(r.labels[me])}`) : null,
    me && me in r.labels && r.disagree ? el("span", { class: "badge dis verdict", title: "a person disagrees with the judge" }, "≠") : null)));
}

async function selectRow(i) {
  if (!S.filtered.length) return;
  S.sel = Math.min(Math.max(i, 0), S.filtered.length - 1);
  document.querySelectorAll("#trials .row").forEach((n, j) => n.classList.toggle("sel", j === S.sel));
  const row = S.filtered[S.sel];
  const node = document.querySelectorAll("#trials .row")[S.sel];
  if (node) node.scrollIntoView({ block: "nearest" });
  const data = await api(`/api/runs/${encodeURIComponent(S.run)}/trial?id=${encodeURIComponent(row.trial_id)}`);
  if (S.filtered[S.sel] !== row) return;
  S.detail = data;
  renderDetail();
}

function labelBar(rec, row) {
  const me = annotator(), mine = myLabels(), fields = labelFields();
  const head = el("strong", {}, S.field ? (rubricOf(S.field) ? `score "${rubricOf(S.field).name}" 1-5:` : `label "${S.field}":`) : "label:");
  const who = el("span", { class: "hint" }, me ? `as ${me}` : "enter your name above to label");
  if (rec.status !== "ok") return el("div", { class: "labelbar", id: "labelbar" }, head, el("span", { class: "muted" }, "nothing to label (the trial errored)"), who);
  if (!S.field || row.verdict === null) return el("div", { class: "labelbar", id: "labelbar" }, head, el("span", { class: "muted" }, "nothing to label (no verdict on this field)"), who);
  const active = fields.find((f) => !(f in mine)) || fields[fields.length - 1];
  const buttons = (field) => labelKeys().map(([k, v]) => el("button", { class: String(mine[field]) === shown(v) ? "current" : "", dataset: { value: v, field: field },
    on: { click: () => saveLabel(v, field) } }, el("kbd", {}, k), " ", shown(v)));
  if (fields.length === 1) return el("div", { class: "labelbar", id: "labelbar" }, head, buttons(fields[0]), who);
  return el("div", { class: "labelbar", id: "labelbar" }, head, who,
    fields.map((f) => el("div", { class: `dim ${f === active ? "active" : ""}`, dataset: { field: f } }, el("span", { class: "role" }, f), buttons(f))));
}

function referenceBox() {
  const ref = S.detail.reference || {};
  const entries = Object.entries(ref);
  if (!entries.length) return null;
  return el("div", { id: "reference", class: "reference" }, el("div", { class: "role" }, "reference the judges used"),
    entries.map(([k, v]) => [el("div", { class: "role" }, k), el("pre", { class: "text" }, v)]));
}

function renderDetail() {
  const rec = S.detail.record, row = S.filtered[S.sel], me = annotator();
  const open = labelledByMe();  // the judges' verdicts and other people's labels only once I have labelled
  // before I label, only the target's calls: a judge's call holds its verdict
  const visible = rec.calls.map((c, i) => [c, i]).filter(([c]) => open || c.role === "target");
  const calls = visible.map(([c, i]) => el("div", { class: "call" },
    el("div", { class: "role" }, `call ${i + 1}: ${c.role} · ${c.model}${c.cached ? " (cached)" : ""}${c.response && ["length", "max_tokens"].includes(c.response.finish_reason) ? " · cut at max_tokens" : ""}`),
    c.request.messages.map((msg) => [el("div", { class: "role" }, msg.role), el("pre", { class: "text" }, msg.content)]),
    el("div", { class: "role" }, "response"),
    el("pre", { class: "text response", id: c === visible[visible.length - 1][0] ? "response" : null }, c.response ? c.response.text : `error: ${c.error || ""}`)));
  const scores = el("table", { id: "scores" }, el("tr", {}, el("th", {}, "score"), el("th", {}, "value")),
    Object.entries(rec.scores).map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", {}, JSON.stringify(v)))),
    Object.entries(S.detail.judges || {}).map(([k, v]) => el("tr", {}, el("td", {}, `judge spec ${k}`), el("td", {}, JSON.stringify(v)))));
  const labels = Object.entries(row.labels).filter(([a]) => a === me || (open && !document.body.classList.contains("blind"))).map(([a, v]) => el("span", { class: "badge" }, `${a}: ${shown(v)}`));
  const fields = labelFields();
  const history = S.detail.history.filter((e) => fields.includes(e.field) && (open || e.annotator === me)).map((e) => el("li", {},
    `${e.created_at.slice(0, 19).replace("T", " ")} ${e.annotator} ${e.field} → ${JSON.stringify(e.value)} (rev ${e.revision}, ${e.source})`));
  put($("#detail"), el("h2", {}, rec.trial_id),
    el("div", { class: "muted" }, `case ${rec.case_id} · ${rec.config_id} · repeat ${rec.repeat} · ${rec.status}${rec.error ? ": " + rec.error : ""}`),
    labelBar(rec, row), el("div", {}, "labels: ", labels.length ? labels : el("span", { class: "muted" }, open ? "none yet" : "yours only, until you have labelled")),
    calls, referenceBox(),
    open ? el("div", { class: "judged" }, el("div", { class: "role" }, "scores"), scores,
      el("div", { class: "role" }, "output"), el("pre", { class: "text" }, JSON.stringify(rec.output, null, 2)))
      : el("p", { class: "muted", id: "verdicts-hidden" }, "The judges' verdicts and scores show once you have labelled this trial."),
    history.length ? el("div", {}, el("div", { class: "role" }, "label history"), el("ul", { id: "history" }, history)) : null);
}

async function saveLabel(value, field) {
  const me = annotator();
  if (!me) { toast("enter your name first"); annotatorInput.focus(); return; }
  const row = S.filtered[S.sel];
  if (!row || !S.field || row.status !== "ok" || row.verdict === null) return;
  const fields = labelFields();
  field = field || fields.find((f) => !(f in myLabels())) || fields[fields.length - 1];
  const sampleName = $("#f-sample").value || null;
  try {
    await api(`/api/runs/${encodeURIComponent(S.run)}/labels`, { trial_id: row.trial_id, field: field, annotator: me, value: value, sample: sampleName });
  } catch (e) { toast(`not saved: ${e.message}`); return; }
  toast(`saved ${fields.length > 1 ? field + " " : ""}${shown(value)} for ${row.trial_id}`);
  await loadRows();
  const byId = new Map(S.rows.map((r) => [r.trial_id, r]));
  S.filtered = S.filtered.map((r) => byId.get(r.trial_id) || r);
  renderList();
  await loadAgreement();
  // a rubric trial stays until every dimension is scored
  const done = fields.every((f) => f === field || f in myLabels());
  await selectRow(done && S.sel + 1 < S.filtered.length ? S.sel + 1 : S.sel);
}

// why a run has no judge field to label or agree on
function noFieldText() {
  const m = S.info.manifest;
  if (m.trials_total && m.trials_error === m.trials_total) return `every trial of this run errored (${m.trials_error} of ${m.trials_total}): there is no verdict to label or agree on; pick a trial to see its error`;
  if (!m.trials_ok) return "no trial of this run has finished yet: nothing to label";
  return "no trial of this run holds a judge verdict: nothing to label";
}

async function loadAgreement() {
  const box = $("#agreement");
  if (!S.field) { put(box, el("h2", {}, "Agreement"), el("p", { class: "muted", id: "no-field" }, noFieldText())); return; }
  let rep;
  try { rep = await api(`/api/runs/${encodeURIComponent(S.run)}/agreement?field=${encodeURIComponent(S.field)}`); }
  catch (e) { put(box, el("h2", {}, "Agreement"), el("p", { class: "error" }, e.message)); return; }
  const pairs = el("table", { id: "pairs" }, el("tr", {}, ["kind", "a", "b", "n", "% agree [95% CI]", "Cohen's κ [95% CI]", "confusion (rows a × cols b)"].map((h) => el("th", {}, h))),
    rep.pairs.map((p) => el("tr", { dataset: { kind: p.kind, a: p.a, b: p.b, n: p.n } }, el("td", {}, p.kind), el("td", {}, p.a), el("td", {}, p.b), el("td", { class: "num" }, p.n),
      el("td", {}, ci(p.percent)), el("td", {}, ci(p.kappa)), el("td", {}, p.confusion.map((r) => r.join(" ")).join(" | ")))));
  const group = (name, g) => g ? el("div", {}, `${name} among people: ${ci(g.value)} on ${g.n_items} items`) : null;
  const calib = rep.calibration.map((c) => el("div", {}, el("strong", {}, c.judge),
    ` vs majority (positive ${shown(c.positive)}, n=${c.n}): sensitivity ${fmt(c.sensitivity)} [${fmt(c.sensitivity_ci[0])}, ${fmt(c.sensitivity_ci[1])}], specificity ${fmt(c.specificity)} [${fmt(c.specificity_ci[0])}, ${fmt(c.specificity_ci[1])}]`,
    c.corrected.length ? el("table", {}, el("tr", {}, ["group", "n", "observed", "corrected [95% CI]"].map((h) => el("th", {}, h))),
      c.corrected.map((r) => el("tr", {}, el("td", {}, r.group), el("td", { class: "num" }, r.n), el("td", { class: "num" }, fmt(r.observed)),
        el("td", {}, r.corrected === null ? "–" : `${fmt(r.corrected)} [${fmt(r.ci_low)}, ${fmt(r.ci_high)}]`))))
      : null));
  const rubric = rubricOf(S.field) ? await rubricPanel() : null;
  const cards = (rep.cards || []).length ? el("table", { id: "cards" }, el("tr", {}, ["judge", "version", "n", "balanced accuracy [95% CI]", "sensitivity", "specificity", "parse failures", "status"].map((h) => el("th", {}, h))),
    rep.cards.map((c) => el("tr", { dataset: { judge: c.judge, n: c.n } }, el("td", {}, c.judge), el("td", {}, c.version), el("td", { class: "num" }, c.n),
      el("td", {}, ci(c.balanced_accuracy)), el("td", {}, ci(c.sensitivity)), el("td", {}, ci(c.specificity)), el("td", { class: "num" }, c.parse_failures),
      el("td", { class: "status", title: rep.card_status[c.judge].reason }, rep.card_status[c.judge].status)))) : null;
  put(box, rubric, el("h2", {}, `Agreement on "${rep.field}"`),
    el("div", {}, "labelled items: ", el("strong", { id: "agree-n" }, rep.labelled_items), ` · annotators: ${rep.annotators.join(", ") || "none"} · categories: ${rep.categories.map(shown).join(", ")}`),
    pairs, group("Fleiss' κ", rep.fleiss), group("Krippendorff's α (nominal)", rep.krippendorff),
    el("h2", {}, "Judge calibration"), calib.length ? calib : el("p", { class: "muted" }, "needs majority labels on a yes/no field"),
    cards ? [el("h2", {}, "Validity cards on these labels (truth: the people's majority)"), cards,
      el("p", { class: "hint" }, "screen: not for reporting (hover a status for the reason)")] : null);
}

// people's 1-5 rubric scores against the judge: weighted kappa, ordinal alpha, totals (Spearman)
async function rubricPanel() {
  let rep;
  try { rep = await api(`/api/runs/${encodeURIComponent(S.run)}/rubric?name=${encodeURIComponent(rubricOf(S.field).name)}`); }
  catch (e) { return el("div", { id: "rubric" }, el("h2", {}, "Rubric"), el("p", { class: "muted" }, e.message)); }
  const dims = el("table", { id: "rubric-dims" }, el("tr", {}, ["dimension", "pair", "n", "weighted κ [95% CI]"].map((h) => el("th", {}, h))),
    rep.dimensions.map((d) => [d.pairs.map((p) => el("tr", { dataset: { field: d.field, a: p.a, b: p.b, n: p.n } }, el("td", {}, d.field), el("td", {}, `${p.a} vs ${p.b}`), el("td", { class: "num" }, p.n), el("td", {}, ci(p.kappa)))),
      el("tr", {}, el("td", {}, d.field), el("td", {}, "Krippendorff's α (ordinal): people · with judge"), el("td", { class: "num" }, d.labelled_items),
        el("td", {}, `${d.alpha_people ? ci(d.alpha_people) : "–"} · ${d.alpha_with_judge ? ci(d.alpha_with_judge) : "–"}`))]));
  const totals = el("table", { id: "rubric-totals" }, el("tr", {}, ["a", "b", "n", "Spearman ρ [95% CI]"].map((h) => el("th", {}, h))),
    rep.totals.map((c) => el("tr", { dataset: { b: c.b, n: c.n } }, el("td", {}, c.a), el("td", {}, c.b), el("td", { class: "num" }, c.n), el("td", {}, ci(c.rho)))));
  return el("div", { id: "rubric" }, el("h2", {}, `Rubric "${rep.rubric.name}" (people 1-5 vs the judge)`), dims, totals);
}

document.addEventListener("keydown", (ev) => {
  const tag = (ev.target.tagName || "").toLowerCase();
  if (tag === "input" || tag === "select" || tag === "textarea") { if (ev.key === "Escape") ev.target.blur(); return; }
  if (ev.ctrlKey || ev.metaKey || ev.altKey || !location.hash.startsWith("#/run/") || !S.filtered.length) return;
  if (ev.key === "j" || ev.key === "ArrowDown") { ev.preventDefault(); selectRow(S.sel + 1); return; }
  if (ev.key === "k" || ev.key === "ArrowUp") { ev.preventDefault(); selectRow(S.sel - 1); return; }
  const hit = labelKeys().find(([k]) => k === ev.key.toLowerCase());
  if (hit) { ev.preventDefault(); saveLabel(hit[1]); }
});

// ---------------------------------------------------------------- the scorecard (as report.html opens)
const compactThreshold = (t) => t.split(" ").slice(-2).join(" ").replace(">=", "≥").replace("<=", "≤");
function gateState(cell) {
  const g = cell.gate || [];
  if (!g.length) return "none";
  if (g.some((x) => x.passed === false)) return "fail";
  return g.some((x) => x.passed === null) ? "undecided" : "pass";
}

function scoreCell(cell, row) {
  if (!cell) return el("td", { class: "cell empty" }, "–");
  const c = cell.change;
  const marks = (cell.gate || []).map((g) => el("span", { class: `gate ${g.passed === true ? "pass" : g.passed === false ? "fail" : "undecided"}`, title: `${g.threshold}: ${g.message}` },
    `${g.passed === true ? "✓" : g.passed === false ? "✗" : "?"} ${compactThreshold(g.threshold)}`));
  const change = c ? el("div", { class: `chg${c.significant ? (c.better === true ? " better" : c.better === false ? " worse" : "") + " sig" : ""}`, title: `B − A against baseline ${c.baseline}; p=${c.p_value === null ? "-" : Number(c.p_value).toPrecision(3)}` },
    `${c.text} · ${c.significant === true ? "significant" : c.significant === false ? "not significant" : "no test"}`) : null;
  return el("td", { class: "cell", dataset: { metric: row.metric, group: cell.group, gate: gateState(cell) } },
    el("span", { class: "v" }, cell.value_text), " ", el("span", { class: "ci" }, cell.ci_text), " ", el("span", { class: "n" }, `n=${cell.n}`), marks, change);
}

function judgeBadge(row) {
  const title = row.judge ? `${row.judge} — ${row.judge_reason}` : row.judge_reason;
  if (row.judge_status === "computed") return el("span", { class: "label muted", title: title }, "computed");
  const text = { screen: "SCREEN", unknown: "judge unknown", reportable: "✓ judge" }[row.judge_status] || row.judge_status;
  return el("span", { class: `badge judge-${row.judge_status}`, title: title }, text);
}

function metricHead(row) {
  return el("th", { class: "metric", title: row.description, dataset: { metric: row.metric, judge: row.judge_status } },
    row.metric, " ", el("span", { class: "dir", title: row.lower_is_better ? "lower is better" : "higher is better" }, row.lower_is_better ? "↓" : "↑"), " ", judgeBadge(row));
}

function scoreTable(card) {
  if (!card.rows.length) return el("p", { class: "muted" }, card.note);
  if (card.groups.length > Math.max(3, card.rows.length))  // many configurations, few metrics: a row per configuration
    return el("table", { class: "score" }, el("tr", {}, el("th", {}, "configuration"), card.rows.map(metricHead)),
      card.groups.map((g, i) => el("tr", {}, el("th", {}, g), card.rows.map((r) => scoreCell(r.cells[i], r)))));
  return el("table", { class: "score" }, el("tr", {}, el("th", {}, "metric"), card.groups.map((g) => el("th", {}, g))),
    card.rows.map((r) => el("tr", {}, metricHead(r), r.cells.map((c) => scoreCell(c, r)))));
}

function scorecardBox(sc, plots) {
  const g = sc.gate;
  const verdict = g ? el("span", { class: `decision ${g.passed ? "pass" : "fail"}`, id: "gate-verdict" }, g.passed ? `Gate passed: ${g.checks} checks` : `Gate FAILED: ${g.failed.length} of ${g.checks} checks`) : null;
  return [el("div", { class: "head" }, el("h2", {}, "Scorecard"), verdict),
    g && !g.passed ? el("p", { class: "failed-checks", title: g.failed.join("; ") }, `failed: ${g.failed.join("; ")}`) : null,
    el("p", { class: "hint" }, "Headline metrics: value [95% CI] n (cases / trials) · ↑↓ better · ✓✗ the gate · SCREEN: the judge's accuracy is not established: not for reporting (hover for why)."),
    el("div", { class: "cards" }, sc.cards.map((card) => el("div", { class: "card", dataset: { run: card.run_id, suite: card.suite } },
      el("h3", {}, card.suite, " ", el("span", { class: "muted" }, card.run_id), card.baseline ? el("span", { class: "muted" }, ` against baseline ${card.baseline}`) : null),
      scoreTable(card)))),
    plots.length ? el("div", { class: "plots" }, plots.map(([src, kind]) => el("img", { src: src, alt: `headline ${kind}s with their 95% CIs`, class: "headline-plot" }))) : null];
}

function causesBox(rc) {
  if (!rc.causes.length) return el("p", { class: "muted" }, rc.judged ? "no failed verdict" : "no per-trial verdicts");
  return [el("h2", {}, "Where it fails most"),
    el("p", { class: "hint" }, `${rc.failed} of ${rc.trials} trials failed at least one verdict; by cause (a trial counts once per cause):`),
    el("table", { id: "causes" }, el("tr", {}, ["trials", rc.baseline ? "baseline" : null, "cause", "metrics", "most in", "example"].filter(Boolean).map((h) => el("th", { title: h === "baseline" ? `the trials of this cause in baseline ${rc.baseline}, of ${rc.baseline_of}` : null }, h))),
      rc.causes.map((c) => el("tr", { class: "cause" }, el("td", { class: "num" }, c.trials), rc.baseline ? el("td", { class: "num baseline" }, c.baseline_trials) : null, el("td", {}, c.cause), el("td", {}, c.metrics.join(", ")),
        el("td", {}, c.groups.slice(0, 3).map(([g, n]) => `${g} (${n})`).join(", ")),
        el("td", { title: c.example_why }, el("a", { href: `#/run/${encodeURIComponent(rc.run_id)}/${encodeURIComponent(c.example)}`, on: { click: (ev) => { if (S.run === rc.run_id) { ev.preventDefault(); openTrial(c.example); } } } }, c.example))))),
    rc.more ? el("p", { class: "hint" }, `… and ${rc.more} smaller causes (What went wrong, below, lists every failure)`) : null];
}

async function loadScorecard(runId) {
  let d;
  try { d = await api(`/api/runs/${encodeURIComponent(runId)}/scorecard`); }
  catch (e) { put($("#scorecard"), el("p", { class: "error" }, e.message)); return; }
  if (S.run !== runId) return;
  const plots = d.plots.map((k) => [`/api/runs/${encodeURIComponent(runId)}/headline.svg?kind=${encodeURIComponent(k)}`, k]);
  put($("#scorecard"), scorecardBox(d.scorecard, plots));
  put($("#fails"), causesBox(d.causes));
}

// ---------------------------------------------------------------- compare two runs
async function showCompare(a, b) {
  $("#crumb").textContent = `compare ${a} · ${b}`;
  const d = await api(`/api/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`);
  const mrow = (x) => el("tr", { class: x.a && x.b && x.a.value !== x.b.value ? "diff" : "" }, el("td", {}, x.group), el("td", {}, x.name),
    ["a", "b"].map((s) => el("td", {}, x[s] ? `${fmt(x[s].value)}${x[s].ci_low !== null ? ` [${fmt(x[s].ci_low)}, ${fmt(x[s].ci_high)}]` : ""} n=${nText(x[s])}` : "–")));
  const only = el("input", { type: "checkbox", id: "c-diff", on: { change: () => renderPairs() } });
  const pairsBox = el("div", { id: "pairs-box" });
  const differs = (p) => !p.a || !p.b || JSON.stringify(p.a.scores) !== JSON.stringify(p.b.scores) || p.a.response !== p.b.response;
  const side = (s) => s ? el("div", {}, el("div", { class: "muted" }, `${s.trial_id} · ${s.status} · ${JSON.stringify(s.scores)}`), el("pre", { class: "text response" }, s.response))
    : el("div", { class: "muted" }, "not in this run");
  function renderPairs() {
    const list = d.trials.filter((p) => !only.checked || differs(p));
    put(pairsBox, el("div", { class: "hint" }, `${list.length} trials`), ...list.map((p) => el("div", { class: "panel" }, el("strong", {}, p.key), el("div", { class: "cmp" }, side(p.a), side(p.b)))));
  }
  put(view, el("div", { class: "panel", id: "scorecard" }, el("p", { class: "muted" }, "comparing the runs (a bootstrap over their cases)…")),
    el("div", { class: "panel" }, el("h2", {}, "Metrics side by side"),
    el("table", { id: "cmp-metrics" }, el("tr", {}, el("th", {}, "group"), el("th", {}, "metric"), el("th", {}, `A: ${d.a.run_id} (${d.a.config.models.target || ""})`), el("th", {}, `B: ${d.b.run_id} (${d.b.config.models.target || ""})`)), d.metrics.map(mrow))),
    el("div", { class: "panel" }, el("h2", {}, "Trials side by side"), el("label", {}, only, " only trials that differ"), pairsBox));
  renderPairs();
  let s;
  try { s = await api(`/api/compare/scorecard?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`); }
  catch (e) { put($("#scorecard"), el("p", { class: "error" }, e.message)); return; }
  const plots = s.plots.map((k) => [`/api/compare/headline.svg?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}&kind=${encodeURIComponent(k)}`, k]);
  put($("#scorecard"), scorecardBox(s.scorecard, plots), el("p", { class: "hint" }, s.method), el("div", { id: "fails" }, causesBox(s.causes)));
}

async function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  try {
    if (parts[0] === "run" && parts[1]) await showRun(parts[1], parts.slice(2).join("/") || null);  // trial ids may hold "/"
    else if (parts[0] === "compare" && parts[1] && parts[2]) await showCompare(parts[1], parts[2]);
    else await showRuns();
  } catch (e) {
    put(view, el("p", { class: "error" }, `error: ${e.message}`));
  }
}
window.addEventListener("hashchange", route);
route();
