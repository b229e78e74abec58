// rwpost view: one page, routed by the URL's hash; every table page and record comes from /api (the
// server pages through the files), every text is set as text (never as HTML), nothing loads from elsewhere.
"use strict";

const main = document.getElementById("main");
const crumbs = document.getElementById("crumbs");
const PAGE = 50;
let charts = [];

function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

async function api(path) {
  const response = await fetch(path, { headers: { Accept: "application/json" } });
  let body;
  try { body = await response.json(); } catch (e) { body = { error: `${response.status} ${response.statusText}` }; }
  if (!response.ok) throw new Error(body.error || `${response.status}`);
  return body;
}

function show(...nodes) {
  main.replaceChildren(...nodes.flat(Infinity).filter((n) => n !== null && n !== undefined && n !== false));
}

function route() {
  const hash = location.hash.replace(/^#\/?/, "");
  const [path, query] = hash.split("?");
  return { parts: path.split("/").filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(query || "") };
}

function go(parts, params) {
  const query = params && params.toString() ? `?${params}` : "";
  location.hash = "#/" + parts.map(encodeURIComponent).join("/") + query;
}

function fmt(value, digits = 3) {
  if (value === null || value === undefined) return "–";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(digits);
  return String(value);
}

function problems(lines) {
  if (!lines || !lines.length) return null;
  return h("div", { class: "problems" }, h("strong", {}, "Not readable:"),
    h("ul", {}, lines.map((line) => h("li", { class: "problem" }, line))));
}

function outside(url, text) {
  // a link out of the view: opened only when clicked, with no referrer
  if (!url) return "–";
  return h("a", { href: url, target: "_blank", rel: "noreferrer noopener" }, text || url);
}

function table(columns, rows, onRow) {
  return h("table", {},
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { class: c.num ? "num" : null }, c.title)))),
    h("tbody", {}, rows.map((row) => h("tr", { class: onRow ? "row" : null, "data-id": row.id, onclick: onRow ? () => onRow(row) : null },
      columns.map((c) => h("td", { class: c.num ? "num" : null }, c.cell ? c.cell(row) : fmt(row[c.key])))))));
}

function pager(total, offset, params, parts) {
  const next = new URLSearchParams(params);
  const at = (o) => { next.set("offset", String(o)); go(parts, next); };
  return h("div", { class: "pager" },
    h("button", { id: "prev", disabled: offset <= 0, onclick: () => at(Math.max(0, offset - PAGE)) }, "‹ previous"),
    h("span", { id: "count" }, total ? `${offset + 1}–${Math.min(total, offset + PAGE)} of ${total}` : "no rows"),
    h("button", { id: "next", disabled: offset + PAGE >= total, onclick: () => at(offset + PAGE) }, "next ›"));
}

function filterBar(facets, params, parts, names, placeholder = "search id or claim") {
  const bar = h("div", { class: "filters" });
  for (const name of names) {
    const values = facets[name];
    if (!values || !values.length) continue;
    const select = h("select", { name, onchange: (e) => { const p = new URLSearchParams(params); p.delete("offset");
      if (e.target.value) p.set(name, e.target.value); else p.delete(name); go(parts, p); } },
      h("option", { value: "" }, `all`),
      values.map(([value, count]) => h("option", { value, selected: params.get(name) === value }, `${value} (${count})`)));
    bar.append(h("label", {}, name, select));
  }
  if (placeholder) {
    const input = h("input", { type: "search", name: "q", placeholder, value: params.get("q") || "" });
    input.addEventListener("keydown", (e) => { if (e.key === "Enter") { const p = new URLSearchParams(params); p.delete("offset");
      if (input.value) p.set("q", input.value); else p.delete("q"); go(parts, p); } });
    bar.append(input);
  }
  return bar;
}

function chart(title, labels, datasets, type = "bar", extra = {}) {
  const canvas = h("canvas", {});
  const box = h("div", { class: "chart" }, canvas);
  requestAnimationFrame(() => {
    if (!window.Chart) { box.textContent = `${title}: the chart library did not load`; return; }
    charts.push(new window.Chart(canvas, { type, data: { labels, datasets },
      options: Object.assign({ responsive: true, maintainAspectRatio: false, animation: false,
        plugins: { title: { display: true, text: title } } }, extra) }));
  });
  return box;
}

function crumb(items) {
  crumbs.replaceChildren(...items.map(([text, href]) => h("a", { href }, text)));
}

// --- pages -------------------------------------------------------------------------------------------

async function home() {
  const data = await api("/api/sources");
  crumb([]);
  const groups = { version: "Published versions", work: "Work folders", run: "Evaluation runs",
    leaderboard: "Leaderboards", annotations: "Annotation exports" };
  const page = [h("h1", {}, "What the view was given"), problems(data.problems)];
  for (const [kind, title] of Object.entries(groups)) {
    const items = data.sources.filter((s) => s.kind === kind);
    if (!items.length) continue;
    const link = (s) => ({ version: `#/version/${s.key}`, work: `#/work/${s.key}`, run: `#/run/${s.key}`,
      leaderboard: `#/leaderboard/${s.key}`, annotations: null }[kind]);
    page.push(h("h2", {}, title), h("ul", { class: "sources" }, items.map((s) => h("li", {},
      link(s) ? h("a", { href: link(s), class: `source ${kind}` }, s.title ? `${s.title} — ${s.label}` : s.label) : s.label))));
  }
  show(...page);
}

async function versionPage(key, params) {
  const parts = ["version", key];
  const query = new URLSearchParams(params);
  query.set("limit", String(PAGE));
  const [data, rows] = await Promise.all([api(`/api/version/${key}`), api(`/api/version/${key}/samples?${query}`)]);
  crumb([[data.source.label, `#/version/${key}`], ["funnel", `#/version/${key}/funnel`]]);
  const offset = rows.offset;
  const columns = [
    { title: "id", key: "id" }, { title: "label", cell: (r) => h("span", { class: "label" }, fmt(r.label)) },
    { title: "subset", key: "subset" }, { title: "split", key: "split" }, { title: "category", key: "category" },
    { title: "date", key: "claim_time" }, { title: "claim", key: "claim" },
  ];
  show(
    h("h1", {}, `${data.name || "RW-Post"} ${data.version || ""}`, h("span", { class: "muted" }, ` · ${data.samples} samples · ${data.files.join(", ")}`)),
    problems(data.problems),
    filterBar(data.facets, params, parts, ["label", "subset", "split", "category", "site", "publisher", "language"]),
    pager(rows.total, offset, params, parts),
    table(columns, rows.rows, (r) => go(["sample", r.id], new URLSearchParams({ from: key }))),
    h("h2", {}, "The card's statistics"),
    versionCharts(data));
}

function versionCharts(data) {
  const boxes = [];
  const counts = data.counts || {};
  const labels = [...new Set(Object.values(counts).flatMap((s) => Object.values(s).flatMap((c) => Object.keys(c))))].sort();
  const groups = Object.entries(counts).flatMap(([subset, splits]) => Object.entries(splits).map(([split, c]) => [`${subset}/${split}`, c]));
  if (groups.length) boxes.push(chart("Labels by subset and split", groups.map((g) => g[0]),
    labels.map((label) => ({ label, data: groups.map((g) => g[1][label] || 0) })), "bar", { scales: { x: { stacked: true }, y: { stacked: true } } }));
  const categories = Object.entries(data.categories || {}).sort((a, b) => b[1] - a[1]);
  if (categories.length) boxes.push(chart("Categories", categories.map((c) => c[0]), [{ label: "samples", data: categories.map((c) => c[1]) }], "bar", { indexAxis: "y" }));
  const years = data.claim_years.filter((y) => y[0] !== "none");
  if (years.length) boxes.push(chart("Claim years", years.map((y) => y[0]), [{ label: "samples", data: years.map((y) => y[1]) }]));
  if (data.funnel.length) boxes.push(funnelChart(data.funnel));
  return h("div", { class: "charts" }, boxes);
}

function funnelChart(steps) {
  return chart("Funnel: in and out of each stage", steps.map((s) => s.step),
    [{ label: "in", data: steps.map((s) => s.in) }, { label: "out", data: steps.map((s) => s.out) }]);
}

function funnelTable(steps) {
  return table([{ title: "stage", key: "step" }, { title: "in", key: "in", num: true }, { title: "out", key: "out", num: true },
    { title: "removed", key: "removed", num: true },
    { title: "reasons", cell: (s) => Object.entries(s.reasons || {}).map(([r, n]) => `${r}: ${n}`).join(", ") || "–" }], steps);
}

async function versionFunnel(key) {
  const data = await api(`/api/version/${key}`);
  crumb([[data.source.label, `#/version/${key}`], ["funnel", `#/version/${key}/funnel`]]);
  const works = (await api("/api/sources")).sources.filter((s) => s.kind === "work");
  show(h("h1", {}, "Funnel (dataset card)"), problems(data.problems),
    h("div", { class: "charts" }, funnelChart(data.funnel)), funnelTable(data.funnel),
    works.length ? h("p", {}, "Every set-aside record with its reason: ", works.map((w) => h("a", { href: `#/work/${w.key}` }, w.label))) : null);
}

async function workPage(key, params) {
  const parts = ["work", key];
  const query = new URLSearchParams(params);
  query.set("limit", String(PAGE));
  const [data, rows] = await Promise.all([api(`/api/work/${key}`), api(`/api/work/${key}/rejects?${query}`)]);
  crumb([[data.source.label, `#/work/${key}`]]);
  show(h("h1", {}, `Work folder ${data.source.label}`), problems(data.problems),
    h("h2", {}, `Funnel (${data.funnel_file || "no funnel file"})`),
    data.steps.length ? h("div", { class: "charts" }, funnelChart(data.steps)) : null, funnelTable(data.steps),
    h("h2", {}, `Set-aside records (${data.rejects})`),
    filterBar({ stage: data.stages, reason: data.reasons }, params, parts, ["stage", "reason"], "search id"),
    pager(rows.total, rows.offset, params, parts),
    table([{ title: "id", key: "id" }, { title: "stage", key: "stage" }, { title: "reason", key: "reason" },
      { title: "file", key: "file" }, { title: "input", cell: (r) => r.source ? `${r.source}${r.line ? ":" + r.line : ""}` : "–" }],
    rows.rows, (r) => r.id && go(["sample", r.id])));
}

function evidenceList(evidence, keyPointIds) {
  const items = keyPointIds === undefined ? evidence : evidence.filter((e) => (e.key_point_ids || []).includes(keyPointIds));
  if (!items.length) return h("p", { class: "muted" }, "no evidence");
  return h("ul", { class: "evidence" }, items.map((e) => h("li", {},
    h("strong", {}, `[${e.id}] ${e.type}`), " ", e.content || e.description || "",
    e.source ? h("span", { class: "muted" }, ` — ${e.source} `) : " ", e.url ? outside(e.url, "source") : null)));
}

function taggedText(tagged) {
  const links = Object.fromEntries((tagged.links || []).map((l) => [l.id, l]));
  return h("div", { class: "tagged", id: "tagged" }, tagged.segments.map((s) => s.text !== undefined ? s.text
    : h("span", { class: `tag ${s.kind}`, title: (links[s.link] || {}).anchor || "" }, s.tag)));
}

async function samplePage(id, params) {
  const data = await api(`/api/sample/${encodeURIComponent(id)}`);
  const s = data.sample;
  const from = params.get("from") || data.version;
  crumb(from ? [["dataset", `#/version/${from}`], [id, location.hash]] : [[id, location.hash]]);
  const page = [h("h1", {}, s ? s.claim : id, " ", s ? h("span", { class: "label", id: "sample-label" }, fmt(s.label)) : null)];
  if (s) {
    page.push(problems(s.problems));
    const left = h("div", { class: "card" }, h("h2", {}, "Post"),
      h("p", { id: "post-text" }, s.post_text || h("span", { class: "muted" }, "no post text")),
      s.has_image ? h("img", { id: "post-image", class: "post-image", alt: `image of ${id}`, src: `/api/image/${data.version}/${encodeURIComponent(id)}` })
        : h("p", { class: "muted" }, "no image in the dataset"),
      s.video_link ? h("p", {}, "video: ", outside(s.video_link)) : null,
      s.post_url ? h("p", {}, "post: ", outside(s.post_url)) : null,
      h("dl", { class: "kv" }, [["label", s.label], ["rating", s.label_original], ["category", s.category], ["date", s.claim_time],
        ["subset / split", `${fmt(s.subset)} / ${fmt(s.split)}`], ["image required", s.image_required], ["watermarked", s.watermarked],
        ["OCR", s.ocr], ["cluster", s.cluster_id], ["fact-check", null]].map(([k, v]) => [h("dt", {}, k), h("dd", {}, k === "fact-check" ? outside(s.news_url) : fmt(v))])));
    const keyPoints = s.key_points || [];
    const right = h("div", { class: "card" }, h("h2", {}, "Rationale"), h("p", { id: "rationale" }, s.reasoning_logic || "–"),
      h("h2", {}, "Key points and their evidence"),
      keyPoints.length ? h("ul", { id: "key-points" }, keyPoints.map((kp, i) => h("li", {}, kp, evidenceList(s.evidence || [], i + 1)))) : h("p", { class: "muted" }, "no key points"),
      h("h2", {}, "All evidence"), evidenceList(s.evidence || []));
    page.push(h("div", { class: "grid2" }, left, right));
  }
  for (const work of data.work) {
    page.push(h("h2", {}, `From the work folder ${work.source.label}`), problems(work.problems));
    if (work.decisions && work.decisions.length) page.push(h("h3", {}, "Funnel history"), table([
      { title: "filter", key: "filter" }, { title: "verdict", cell: (d) => h("span", { class: d.keep ? "right" : "wrong" }, d.keep ? "kept" : "dropped") },
      { title: "reason", key: "reason" }, { title: "measurement", key: "score", num: true },
      { title: "details", cell: (d) => h("pre", {}, JSON.stringify(d.details || {}, null, 1)) }], work.decisions));
    if (work.rejects) page.push(h("p", { class: "wrong" }, work.rejects.map((r) => `set aside by ${r.stage}: ${r.reason}`).join("; ")));
    for (const [name, title] of [["human", "Human validation decisions"], ["disputed", "Disputed"]]) {
      if (work[name] && work[name].length) page.push(h("h3", {}, title), h("pre", {}, JSON.stringify(work[name], null, 1)));
    }
    const media = work.crawl ? [...work.crawl.images, ...work.crawl.videos].filter((m) => m.path) : [];
    if (media.length) page.push(h("h3", {}, "Crawled media"), h("div", { class: "media" }, media.map((m) =>
      /\.(mp4|webm)$/i.test(m.path)
        ? h("video", { controls: true, preload: "metadata", class: "post-image", src: `/files/${work.source.key}/crawl/${m.path}` })
        : h("img", { class: "post-image crawled", alt: m.url, title: m.url, src: `/files/${work.source.key}/crawl/${m.path}` }))));
    if (work.tagged) page.push(h("h3", {}, `Tagged article (${work.tagged.word_count} words, ${work.tagged.links.length} links)`), taggedText(work.tagged));
  }
  page.push(h("h2", {}, "Annotators' verdicts"), data.annotations.length ? table([
    { title: "annotator", key: "annotator" }, { title: "post extraction", key: "post_extraction" }, { title: "image role", key: "image_role" },
    { title: "adjudicated", key: "adjudicated" }, { title: "note", key: "note" }], data.annotations)
    : h("p", { class: "muted" }, "no annotation export given, or no verdict on this sample"));
  const runs = h("ul", { id: "runs" }, h("li", { class: "muted" }, "looking…"));
  page.push(h("h2", {}, "Runs that scored it"), runs);
  show(...page);
  api(`/api/sample/${encodeURIComponent(id)}/runs`).then((found) => runs.replaceChildren(...(found.runs.length
    ? found.runs.map((r) => h("li", {}, h("a", { href: `#/runsample/${r.key}/${encodeURIComponent(id)}` }, r.title)))
    : [h("li", { class: "muted" }, "none of the runs given")]))).catch((e) => runs.replaceChildren(h("li", { class: "problem" }, e.message)));
}

function metricsTable(run) {
  const titles = run.metric_titles;
  const views = Object.values(run.views || {});
  const cols = [{ title: "view", cell: (v) => v.title || v.view }, { title: "n", key: "n", num: true },
    { title: "coverage", cell: (v) => v.coverage ? `${v.coverage.answered}/${v.coverage.total}` : "–" }];
  for (const [key, title] of Object.entries(titles)) cols.push({ title, num: true,
    cell: (v) => v[key] === undefined || v[key] === null ? "–" : `${fmt(v[key])}` + (v.ci95 && v.ci95[key] ? ` [${fmt(v.ci95[key][0])}, ${fmt(v.ci95[key][1])}]` : "") });
  return table(cols, views);
}

async function runPage(key, params) {
  const parts = ["run", key];
  const query = new URLSearchParams(params);
  query.set("limit", String(PAGE));
  const [run, rows, all] = await Promise.all([api(`/api/run/${key}`), api(`/api/run/${key}/samples?${query}`), api("/api/sources")]);
  crumb([[run.title, `#/run/${key}`]]);
  const others = all.sources.filter((s) => s.kind === "run" && s.key !== key);
  const compareTo = h("select", { name: "compare", onchange: (e) => e.target.value && go(["compare", key, e.target.value]) },
    h("option", { value: "" }, "compare with…"), others.map((s) => h("option", { value: s.key }, s.title || s.label)));
  const ledger = run.ledger || {};
  show(
    h("h1", {}, run.title, h("span", { class: "muted" }, ` · ${run.source.label}`)), problems(run.problems),
    h("div", { class: "card" }, h("dl", { class: "kv" }, [
      ["detector", run.detector], ["setting", run.setting], ["failure policy", run.failures],
      ["coverage", run.coverage ? `${run.coverage.answered}/${run.coverage.total} answered` : "–"],
      ["data", run.data ? `${fmt(run.data.path)} (${fmt(run.data.samples)} samples)` : "–"],
      ["calls", `${fmt(ledger.calls)} (${fmt(ledger.model_calls)} model, ${fmt(ledger.tool_calls)} tool)`],
      ["tokens", `${fmt(ledger.tokens_in)} in, ${fmt(ledger.tokens_out)} out`], ["cost", `$${fmt(ledger.cost_usd, 4)}`],
      ["leakage guard", run.leakage ? `${fmt(run.leakage.dropped)} results dropped ${JSON.stringify(run.leakage.by_reason || {})}` : "–"],
      ["flagged by the audit", fmt((run.audit || {}).flagged)], ["finished", run.finished]].map(([k, v]) => [h("dt", {}, k), h("dd", {}, fmt(v))])),
      run.notes.length ? h("ul", {}, run.notes.map((n) => h("li", {}, n))) : null),
    h("h2", {}, "Metrics with 95% intervals"), metricsTable(run),
    h("h2", {}, `Samples (${run.samples})`),
    h("div", { class: "filters" }, h("label", {}, "outcome", h("select", { name: "outcome", onchange: (e) => { const p = new URLSearchParams(params); p.delete("offset");
      if (e.target.value) p.set("outcome", e.target.value); else p.delete("outcome"); go(parts, p); } },
      ["", "right", "wrong", "failed"].map((v) => h("option", { value: v, selected: (params.get("outcome") || "") === v }, v || "all")))), compareTo),
    filterBar(run.facets, params, parts, ["gold", "predicted", "category", "error"], "search id"),
    pager(rows.total, rows.offset, params, parts),
    table([{ title: "id", key: "id" }, { title: "gold", key: "gold" }, { title: "answer", key: "predicted" },
      { title: "correct", cell: (r) => h("span", { class: r.correct ? "right" : "wrong" }, r.correct ? "right" : "wrong") },
      { title: "confidence", key: "confidence", num: true }, { title: "cost $", cell: (r) => fmt(r.cost_usd, 5), num: true },
      { title: "tokens", key: "tokens", num: true }, { title: "category", key: "category" }, { title: "failure reason", key: "error" }],
    rows.rows, (r) => go(["runsample", key, r.id])));
}

function transcript(calls) {
  if (!calls.length) return h("p", { class: "muted", id: "no-calls" }, "no model or tool call recorded for this answer");
  return h("table", { id: "transcript" }, h("thead", {}, h("tr", {}, ["#", "kind", "name", "agent", "tokens in", "tokens out", "latency s", "cost $", "note"].map((t) => h("th", {}, t)))),
    h("tbody", {}, calls.map((c) => h("tr", { class: c.dropped ? "drop call" : "call" },
      h("td", {}, c.step), h("td", {}, c.dropped ? "guard" : c.kind), h("td", {}, c.dropped ? "leakage guard dropped a result" : c.name), h("td", {}, fmt(c.agent)),
      h("td", { class: "num" }, fmt(c.tokens_in)), h("td", { class: "num" }, fmt(c.tokens_out)), h("td", { class: "num" }, fmt(c.latency_s)),
      h("td", { class: "num" }, fmt(c.cost_usd, 5)),
      h("td", {}, [c.dropped ? `reason: ${c.dropped}` : null, c.cached ? "cached" : null, c.failed ? "failed (no answer)" : null].filter(Boolean).join(", "))))));
}

async function runSamplePage(key, id) {
  const data = await api(`/api/run/${key}/sample/${encodeURIComponent(id)}`);
  crumb([[data.title, `#/run/${key}`], [id, location.hash], ["dataset sample", `#/sample/${encodeURIComponent(id)}`]]);
  const scored = data.scored || {};
  const blinded = data.blinded || {};
  const shown = h("div", { class: "card", id: "blinded" }, h("h2", {}, `What the detector was shown (${data.setting})`),
    data.blinded_problem ? problems([data.blinded_problem]) : null,
    data.blinded_image ? h("img", { class: "post-image", id: "blinded-image", alt: "the image shown", src: `/api/image/${key}/${encodeURIComponent(id)}` }) : null,
    h("dl", { class: "kv" }, Object.entries(blinded).map(([k, v]) => [h("dt", {}, k), h("dd", {}, typeof v === "object" ? h("pre", {}, JSON.stringify(v, null, 1)) : String(v))])));
  const answers = data.answers.map((a) => h("div", { class: "card answer" },
    h("h2", {}, data.answers.length > 1 ? `Answer, repeat ${a.repeat}` : "Answer"),
    h("p", {}, "label: ", h("span", { class: "label", id: "answer-label" }, fmt(a.label)), " · gold: ", h("span", { class: "label" }, fmt(scored.gold)), " · ",
      h("span", { class: scored.correct ? "right" : "wrong" }, scored.correct ? "right" : "wrong"), a.error ? h("span", { class: "wrong" }, ` · failed: ${a.error}`) : null),
    a.probabilities ? h("p", { class: "muted" }, Object.entries(a.probabilities).map(([k, v]) => `${k} ${fmt(v)}`).join(" · ")) : null,
    scored.ledger ? h("p", { class: "muted", id: "ledger" }, `ledger: ${fmt(scored.ledger.calls)} calls (${fmt(scored.ledger.model_calls)} model, ${fmt(scored.ledger.tool_calls)} tool) · ` +
      `${fmt(scored.ledger.tokens_in)} tokens in, ${fmt(scored.ledger.tokens_out)} out · $${fmt(scored.ledger.cost_usd, 5)} · ${fmt(scored.ledger.latency_s)} s` +
      (scored.ledger.cache_hits ? ` · ${scored.ledger.cache_hits} from the cache` : "")) : null,
    h("h3", {}, "Explanation"), h("p", { class: "explanation", id: "explanation" }, a.explanation || "–"),
    a.evidence_urls.length ? h("ul", {}, a.evidence_urls.map((u) => h("li", {}, outside(u)))) : null,
    h("h3", {}, `Transcript: ${a.calls.length} calls${a.dropped ? `, ${a.dropped} results dropped by the leakage guard` : ""}`), transcript(a.calls)));
  show(h("h1", {}, `${data.title} · ${id}`), h("div", { class: "grid2" }, shown, h("div", {}, answers)));
}

async function comparePage(a, b, params) {
  const parts = ["compare", a, b];
  const query = new URLSearchParams(params);
  query.set("limit", String(PAGE));
  const data = await api(`/api/compare/${a}/${b}?${query}`);
  crumb([[data.a.title, `#/run/${a}`], [data.b.title, `#/run/${b}`]]);
  const only = params.get("only") || "disagree";
  const t = data.table;
  show(h("h1", {}, `A: ${data.a.title}  vs  B: ${data.b.title}`), problems([...data.a.problems, ...data.b.problems]),
    h("p", {}, `${data.paired} samples paired` + (data.only_in_a ? `, ${data.only_in_a} only in A` : "")),
    h("table", { id: "paired", style: "width:auto" }, h("tr", {}, h("th", {}, ""), h("th", {}, "B right"), h("th", {}, "B wrong")),
      h("tr", {}, h("th", {}, "A right"), h("td", { class: "num" }, t["both right"]), h("td", { class: "num" }, t["only A right"])),
      h("tr", {}, h("th", {}, "A wrong"), h("td", { class: "num" }, t["only B right"]), h("td", { class: "num" }, t["both wrong"]))),
    h("div", { class: "filters" }, h("label", {}, "show", h("select", { name: "only", onchange: (e) => go(parts, new URLSearchParams({ only: e.target.value })) },
      [["disagree", "answers differ"], ["one-right", "exactly one right"], ["all", "all"]].map(([v, label]) => h("option", { value: v, selected: only === v }, label))))),
    pager(data.total, data.offset, params, parts),
    table([{ title: "id", key: "id" }, { title: "gold", key: "gold" }, { title: "category", key: "category" },
      { title: "A", cell: (r) => h("span", { class: r.a_correct ? "right" : "wrong" }, fmt(r.a)) },
      { title: "B", cell: (r) => h("span", { class: r.b_correct ? "right" : "wrong" }, fmt(r.b)) },
      { title: "", cell: (r) => h("span", {}, h("a", { href: `#/runsample/${a}/${encodeURIComponent(r.id)}` }, "A's transcript"), " · ", h("a", { href: `#/runsample/${b}/${encodeURIComponent(r.id)}` }, "B's")) }],
    data.rows));
}

async function leaderboardPage(key) {
  const data = await api(`/api/leaderboard/${key}`);
  crumb([[data.source.label, `#/leaderboard/${key}`]]);
  const titles = data.metric_titles;
  const shown = (r) => r.distinct ? `${r.system} (${r.distinct})` : r.system; // runs of one name told apart
  const cols = [{ title: "system", cell: (r) => r.run_key ? h("a", { href: `#/run/${r.run_key}` }, shown(r)) : fmt(shown(r)) },
    { title: "data", key: "data" }, { title: "n", key: "n", num: true }, { title: "failures", key: "failures" },
    { title: "coverage", cell: (r) => r.coverage ? `${r.coverage.answered}/${r.coverage.total}` : "–" }];
  for (const [k, title] of Object.entries(titles)) cols.push({ title, num: true, cell: (r) => fmt(r[k]) + (r.ci95 && r.ci95[k] ? ` [${fmt(r.ci95[k][0])}, ${fmt(r.ci95[k][1])}]` : "") });
  cols.push({ title: "cost $", cell: (r) => fmt(r.cost_usd, 4), num: true });
  const paper = Array.isArray(data.paper) ? data.paper : [];
  const macro = data.rows.filter((r) => typeof r.macro_f1 === "number");
  show(h("h1", {}, `Leaderboard ${data.source.label}`), problems(data.problems), table(cols, data.rows),
    macro.length ? h("div", { class: "charts" }, chart("macro F1 by run", macro.map((r) => `${r.system} · ${r.view || ""}`), [{ label: "macro F1", data: macro.map((r) => r.macro_f1) }], "bar", { indexAxis: "y" })) : null,
    paper.length ? [h("h2", {}, "Beside the paper's figures"), table(Object.keys(paper[0]).map((k) => ({ title: k, cell: (r) => typeof r[k] === "object" ? JSON.stringify(r[k]) : fmt(r[k]) })), paper)] : null,
    data.figures.map((f) => h("figure", {}, h("img", { src: `/files/${key}/${encodeURIComponent(f)}`, alt: f, class: "post-image" }), h("figcaption", {}, f))));
}

async function render() {
  for (const c of charts) c.destroy();
  charts = [];
  const { parts, params } = route();
  try {
    if (!parts.length) await home();
    else if (parts[0] === "version" && parts[2] === "funnel") await versionFunnel(parts[1]);
    else if (parts[0] === "version") await versionPage(parts[1], params);
    else if (parts[0] === "sample") await samplePage(parts[1], params);
    else if (parts[0] === "work") await workPage(parts[1], params);
    else if (parts[0] === "run") await runPage(parts[1], params);
    else if (parts[0] === "runsample") await runSamplePage(parts[1], parts[2]);
    else if (parts[0] === "compare") await comparePage(parts[1], parts[2], params);
    else if (parts[0] === "leaderboard") await leaderboardPage(parts[1]);
    else show(h("p", { class: "problems" }, `no page ${location.hash}`));
  } catch (error) {
    show(h("div", { class: "problems", id: "error" }, String(error.message || error)));
  }
  document.body.dataset.ready = location.hash || "#/";
}

window.addEventListener("hashchange", render);
render();
