// app.js: nmt serve's page. Translates the text box through POST /translate as the user types
// (debounced) or presses Enter, shows the n-best list, and draws the chosen hypothesis's
// attention as a grid (output words down, source words across); hovering a cell or a word
// highlights the words it links. A text in the address (#text=... or ?text=...) is translated
// on load, so a link can show a sentence.
"use strict";

const $ = (id) => document.getElementById(id);
const input = $("input"), statusEl = $("status");
let timer = 0, seq = 0, current = null;

function setStatus(msg, err) {
  statusEl.textContent = msg;
  statusEl.classList.toggle("err", !!err);
}

function schedule(delay) {
  clearTimeout(timer);
  timer = setTimeout(translate, delay);
}

// Only the answer to the latest request is shown: a slower, older one is dropped.
async function translate() {
  const text = input.value.trim();
  if (!text) { $("out-card").hidden = $("att-card").hidden = true; setStatus(""); return; }
  const my = ++seq, t0 = performance.now();
  const beam = +$("beam").value, nbest = Math.min(+$("nbest").value, beam);
  setStatus("translating…");
  try {
    const r = await fetch("/translate", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ text, beam, n_best: nbest, normalize: $("norm").checked, attention: true, alignment: true }),
    });
    const j = await r.json();
    if (my !== seq) return;
    if (!r.ok) { setStatus(j.error ? j.error.message : "error " + r.status, true); return; }
    current = j.translations[0];
    render(0);
    setStatus(`${Math.round(performance.now() - t0)} ms · beam ${beam}`);
    document.body.dataset.state = "done";
  } catch (e) {
    if (my === seq) setStatus("the server did not answer: " + e.message, true);
  }
}

function render(k) {
  const h = current.hyps[k];
  $("best").textContent = current.text;
  const ol = $("nbest-list");
  ol.replaceChildren(...current.hyps.map((y, i) => {
    const li = document.createElement("li"), row = el("", undefined), s = document.createElement("span");
    row.append(document.createElement("span"), s);
    row.firstChild.textContent = y.text;
    s.className = "score";
    s.textContent = y.score.toFixed(3);
    s.title = "score: log-probability" + ($("norm").checked ? " per word" : "");
    li.append(row);
    li.classList.toggle("sel", i === k);
    li.onclick = () => render(i);
    return li;
  }));
  ol.hidden = current.hyps.length < 2;
  $("out-card").hidden = false;
  drawAttention(h);
}

function el(cls, text) {
  const d = document.createElement("div");
  d.className = cls;
  if (text !== undefined) d.textContent = text;
  return d;
}

// The grid: a corner, the source words across, then per output word its label and a cell per
// source word. Each cell knows its row and column, each label its index, for hovering. A weak
// model spreads its attention thin, so a cell's shade is its weight over its row's largest.
function drawAttention(h) {
  const box = $("heatmap"), a = h.attention;
  if (!a) { $("att-card").hidden = true; return; }
  const S = a.source.length;
  box.style.gridTemplateColumns = `auto repeat(${S}, 30px)`;
  const parts = [el("corner")];
  a.source.forEach((w, j) => {
    const d = el("src" + (w === "</s>" ? " eos" : ""), w);
    d.dataset.j = j;
    parts.push(d);
  });
  a.weights.forEach((row, i) => {
    const top = Math.max(...row) || 1;
    const t = el("tgt" + (a.target[i] === "</s>" ? " eos" : ""), a.target[i]);
    t.dataset.i = i;
    parts.push(t);
    row.forEach((w, j) => {
      const c = el("cell");
      c.style.setProperty("--w", w / top);
      c.dataset.i = i;
      c.dataset.j = j;
      c.dataset.w = w;
      c.title = `${a.target[i]} ← ${a.source[j]}: ${w.toFixed(3)}`;
      parts.push(c);
    });
  });
  box.replaceChildren(...parts);
  const links = (h.alignment || "").split(" ").filter(Boolean).map((p) => p.split("-").map(Number));
  box.onmouseover = (e) => highlight(box, e.target.dataset, links);
  box.onmouseleave = () => highlight(box, {}, links);
  $("att-caption").textContent = `${a.target.length - (h.finished ? 1 : 0)} output words × ${S - 1} source words (+ end of sentence)`;
  $("att-card").hidden = false;
}

// Hover on a cell: its row and column; on an output word: it and its aligned source word; on a
// source word: it and the output words aligned to it.
function highlight(box, d, links) {
  const rows = new Set(), cols = new Set();
  if (d.i !== undefined) rows.add(+d.i);
  if (d.j !== undefined) cols.add(+d.j);
  if (d.i !== undefined && d.j === undefined) links.forEach(([s, t]) => { if (t === +d.i) cols.add(s); });
  if (d.j !== undefined && d.i === undefined) links.forEach(([s, t]) => { if (s === +d.j) rows.add(t); });
  for (const n of box.children) {
    const i = n.dataset.i === undefined ? -1 : +n.dataset.i, j = n.dataset.j === undefined ? -1 : +n.dataset.j;
    const on = n.classList.contains("cell") ? rows.has(i) && cols.has(j) : rows.has(i) || cols.has(j);
    n.classList.toggle("hi", on);
  }
}

input.addEventListener("input", () => schedule(400));
input.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); schedule(0); }
});
for (const id of ["beam", "nbest", "norm"]) $(id).addEventListener("change", () => schedule(0));

const given = new URLSearchParams(location.hash.slice(1)).get("text") || new URLSearchParams(location.search).get("text");
if (given) { input.value = given; schedule(0); }
