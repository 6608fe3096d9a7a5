//! The script of the page at `/`: reads the index's description (/v1/info), queries pasted text
//! (/v1/query) and dropped or chosen files (/v1/query/batch), draws one card of ranked hits per
//! document and, on demand, what a document and a hit share (/v1/compare). Plain ES2020, no
//! libraries; every string from the server or a file is set as text, never parsed as HTML.
'use strict';

const $ = (id) => document.getElementById(id);
const form = $('query-form');
const textarea = $('text');
const results = $('results');
const cards = $('cards');
const statusLine = $('status');
const errorBox = $('error');
const fileInput = $('files');
const dropZone = $('drop');

/** The answer of /v1/info, once it came. */
let info = null;
/** Submissions so far: an answer to an older one is dropped. */
let run = 0;

// ---- helpers -------------------------------------------------------------------------------

/** A new element with a class and text (text is never parsed as HTML). */
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

/** One JSON request; throws an Error with the API's `error` message when it fails. */
async function api(path, body) {
  const init = body === undefined ? {} : {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  };
  const response = await fetch(path, init).catch(() => {
    throw new Error('The server did not answer (is pocketdex serve still running?)');
  });
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const said = data && typeof data.error === 'string' ? data.error : response.statusText;
    throw new Error(`${said} (HTTP ${response.status})`);
  }
  if (data === null) throw new Error('The server answered with something that is not JSON');
  return data;
}

const number = (n) => (typeof n === 'number' ? n.toLocaleString('en') : '?');
const plural = (n, one, many = one + 's') => `${number(n)} ${n === 1 ? one : many}`;

/** Bytes for people: 31.7 kB, 121 MB. */
function size(n) {
  if (typeof n !== 'number') return '?';
  const units = ['bytes', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i += 1; }
  return i === 0 ? `${n} bytes` : `${n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0)} ${units[i]}`;
}

/** Milliseconds for people. */
const ms = (x) => (x < 10 ? `${x.toFixed(1)} ms` : `${Math.round(x)} ms`);

const LANGUAGES = { en: 'English', de: 'German' };
const METHODS = {
  exact: 'Exact (canonical hash)', fuzzy: 'Fuzzy-fingerprint', minhash: 'MinHash',
  trials: 'Multi-trial signatures', spex: 'spex (S3)', spotsigs: 'SpotSigs', simhash: 'simhash',
};

// ---- the index panel -----------------------------------------------------------------------

function fact(dl, key, term, value, note) {
  const row = el('div');
  row.dataset.fact = key;
  const dd = el('dd', null, value);
  if (note) dd.append(' ', el('span', 'note', note));
  row.append(el('dt', null, term), dd);
  dl.append(row);
}

/** A summary of an object's fields: [[key, (value) => words or null], ...]; missing keys left out. */
function describe(o, fields) {
  if (!o) return '?';
  return fields.filter(([k]) => o[k] !== undefined && o[k] !== null)
    .map(([k, f]) => f(o[k])).filter(Boolean).join(', ');
}
const RESOLUTION = [['bands', (n) => plural(n, 'band')], ['samples', (n) => n && `${plural(n, 'sample')} per band`],
  ['short_rows', (n) => plural(n, 'short row')], ['similar_rows', (n) => plural(n, 'similar row')]];
const PARAMS = [['classes', (n) => `${n} prefix classes`], ['schemes', (a) => plural(a.length, 'scheme')],
  ['probes', (n) => `${n} probes`], ['sketch_words', (n) => `${n * 64}-bit sketches`],
  ['similar_bands', (n) => n && plural(n, 'similar band')], ['min_terms', (n) => `fuzzy codes from ${n} terms`],
  ['short_below', (n) => `short path below ${n} terms`]];

function showInfo(answer) {
  const x = answer.index || {};
  const isSet = 'set' in x;
  const dl = el('dl', 'facts');
  dl.id = 'info';
  const docs = isSet ? x.live_documents : x.documents;
  fact(dl, 'documents', 'Documents', number(docs),
    isSet && x.deleted_documents ? `(${number(x.deleted_documents)} deleted)` : null);
  fact(dl, 'size', 'Size', size(x.bytes),
    !isSet && x.bytes_per_document ? `(${x.bytes_per_document.toFixed(1)} bytes per document)` : null);
  fact(dl, 'language', 'Language',
    LANGUAGES[x.language] ? `${LANGUAGES[x.language]} (${x.language})` : String(x.language));
  if (isSet) {
    fact(dl, 'set', 'Index set', `generation ${number(x.generation)}`,
      `(${plural((x.segments || []).length, 'segment')})`);
  } else {
    fact(dl, 'format', 'Format version', number(x.format_version), x.signed_by ? '(signed)' : null);
  }
  fact(dl, 'resolution', 'Resolution', describe(x.resolution, RESOLUTION));
  fact(dl, 'params', 'Parameters', describe(x.params, PARAMS));
  fact(dl, 'writable', 'Writable', answer.writable ? 'yes' : 'no');
  fact(dl, 'texts', 'Texts to compare', answer.texts ? 'yes' : 'no',
    answer.texts ? null : '(serve --texts DIR)');
  $('info').replaceWith(dl);
  $('summary').replaceChildren(el('strong', null, plural(docs, 'document')), ` · ${size(x.bytes)}`);
  const name = String(x.set || x.file || '');
  $('info-name').textContent = name.split(/[\\/]/).filter(Boolean).pop() || name;
  $('info-name').title = name;
}

async function loadInfo() {
  try {
    info = await api('/v1/info');
    showInfo(info);
  } catch (e) {
    const dl = el('dl', 'facts');
    dl.id = 'info';
    fact(dl, 'error', 'Error', e.message);
    $('info').replaceWith(dl);
  }
}

// ---- querying ------------------------------------------------------------------------------

function showError(message) {
  errorBox.textContent = message;
  errorBox.hidden = !message;
}

/** The options of the form, or an Error saying which one is wrong. */
function options() {
  const o = {};
  const top = $('top').value.trim();
  if (top !== '') {
    const n = Number(top);
    if (!Number.isInteger(n) || n < 1 || n > 10000) throw new Error('Top must be a whole number from 1 to 10,000.');
    o.top = n;
  }
  const threshold = $('threshold').value.trim();
  if (threshold !== '') {
    const t = Number(threshold);
    if (!(t >= 0 && t <= 1)) throw new Error('The threshold must be a number from 0 to 1.');
    o.threshold = t;
  }
  if ($('similar').checked) o.similar = true;
  return o;
}

let busyTimer = 0;
function setBusy(busy) {
  results.setAttribute('aria-busy', String(busy));
  $('search').disabled = busy;
  clearTimeout(busyTimer);
  // Shown only when an answer is slow, so that fast answers do not flicker.
  if (busy) busyTimer = setTimeout(() => { $('busy').hidden = false; }, 150);
  else $('busy').hidden = true;
}

/** Queries documents ([{name, detail, text, file?}]) and draws their cards; files go as a batch. */
async function search(docs) {
  const id = ++run;
  const start = performance.now();
  results.dataset.state = 'loading';
  showError('');
  let opts;
  try {
    opts = options();
  } catch (e) {
    results.dataset.state = 'error';
    results.dataset.run = String(id);
    showError(e.message);
    return;
  }
  setBusy(true);
  try {
    const answers = docs.length === 1 && !docs[0].file
      ? [await api('/v1/query', { text: docs[0].text, ...opts })]
      : (await api('/v1/query/batch', { texts: docs.map((d) => d.text), ...opts })).results;
    if (id !== run) return;
    const threshold = opts.threshold ?? (opts.similar ? 0.4 : 0.5);
    cards.replaceChildren(...docs.map((d, i) => card(d, answers[i], threshold)));
    const elapsed = performance.now() - start;
    const hits = answers.reduce((n, a) => n + a.hits.length, 0);
    const what = docs.length === 1 ? docs[0].name : plural(docs.length, 'document');
    statusLine.textContent = `${what}: ${plural(hits, 'hit')}, shown in ${ms(elapsed)}.`;
    results.dataset.ms = elapsed.toFixed(2);
    results.dataset.state = 'done';
  } catch (e) {
    if (id !== run) return;
    results.dataset.state = 'error';
    statusLine.textContent = '';
    showError(e.message);
  } finally {
    if (id === run) {
      results.dataset.run = String(id);
      setBusy(false);
    }
  }
}

/** One document's card: its name, what its query cost, its hits or why there are none. */
function card(doc, answer, threshold) {
  const c = $('card-template').content.firstElementChild.cloneNode(true);
  c.querySelector('.doc-name').textContent = doc.name;
  const s = answer.stats;
  const stats = c.querySelector('.doc-stats');
  if (doc.detail) stats.append(el('span', 'detail', doc.detail));
  stats.append(el('span', null, plural(s.terms, 'index term')),
    el('span', null, plural(s.candidates, 'candidate')),
    el('span', null, plural(answer.hits.length, 'hit')),
    el('span', null, ms(s.micros / 1000)));
  const list = c.querySelector('.hits');
  if (answer.message) {
    // Nothing was looked up: the text is no document (empty, markup only, binary).
    list.replaceWith(el('p', 'empty', `Not looked up: ${answer.message}.`));
  } else if (answer.hits.length === 0) {
    list.replaceWith(el('p', 'empty', `No near copy at similarity ≥ ${threshold}.`));
  } else {
    list.append(...answer.hits.map((h) => hit(doc, h)));
  }
  return c;
}

let panels = 0;
const PATHS = {
  fuzzy: 'found by its fuzzy-fingerprint codes',
  short: 'found by the short-document (MinHash) path',
  exact: 'found by its exact hash',
  similar: 'found by the similar path (other wording)',
};

/** One hit: rank, score as a number and a bar, id, title, path and the compare button. */
function hit(doc, h) {
  const li = $('hit-template').content.firstElementChild.cloneNode(true);
  li.querySelector('.rank').textContent = `${h.rank}.`;
  const score = li.querySelector('.score');
  score.textContent = h.score.toFixed(3);
  score.title = 'estimated cosine similarity';
  const bar = li.querySelector('.bar > span');
  bar.style.width = `${Math.max(0, Math.min(1, h.score)) * 100}%`;
  li.querySelector('.bar').classList.add(h.score >= 0.9 ? 'high' : h.score >= 0.7 ? 'mid' : 'low');
  li.querySelector('.hit-id').textContent = h.id;
  if (h.title) li.querySelector('.hit-title').textContent = h.title;
  const path = li.querySelector('.path');
  path.textContent = h.path;
  path.title = `${PATHS[h.path] || h.path}; ${plural(h.codes, 'code group')} collided`;
  path.classList.add(`path-${String(h.path).replace(/[^a-z]/g, '')}`);
  const button = li.querySelector('.share');
  const panel = li.querySelector('.compare');
  panel.id = `compare-${++panels}`;
  button.setAttribute('aria-controls', panel.id);
  button.setAttribute('aria-label', `What do they share? ${doc.name} and ${h.id}`);
  button.addEventListener('click', () => toggleCompare(button, panel, doc, h));
  panel.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') { toggleCompare(button, panel, doc, h); button.focus(); }
  });
  return li;
}

// ---- what two documents share --------------------------------------------------------------

async function toggleCompare(button, panel, doc, h) {
  if (button.getAttribute('aria-expanded') === 'true') {
    button.setAttribute('aria-expanded', 'false');
    panel.hidden = true;
    return;
  }
  button.setAttribute('aria-expanded', 'true');
  panel.hidden = false;
  if (panel.dataset.state === 'done' || panel.dataset.state === 'loading') return;
  if (info && !info.texts) {
    panel.dataset.state = 'done';
    const p = el('p', 'note-box', 'This server has no document texts to compare with. Start it with ');
    p.append(el('code', null, 'pocketdex serve INDEX --texts DIR'),
      ', where DIR is what the index was built from (a directory or a .jsonl file).');
    panel.replaceChildren(p);
    return;
  }
  panel.dataset.state = 'loading';
  panel.replaceChildren(el('p', 'busy', 'Comparing…'));
  try {
    const answer = await api('/v1/compare', { text: doc.text, id: h.id });
    panel.replaceChildren(...comparison(answer, doc, h));
    panel.dataset.state = 'done';
  } catch (e) {
    panel.replaceChildren(el('p', 'error', e.message));
    panel.dataset.state = 'error';
  }
}

/** Runs of a text as text nodes and <mark>s (the index terms the other document has too). */
function runs(spans, name) {
  const box = el('div', 'text');
  box.tabIndex = 0; // it scrolls: the keyboard can reach it
  box.setAttribute('role', 'region');
  box.setAttribute('aria-label', name);
  for (const s of spans) box.append(s.shared ? el('mark', null, s.text) : document.createTextNode(s.text));
  return box;
}

function comparison(a, doc, h) {
  const head = el('p', 'shared-count');
  head.append(el('strong', null, number(a.shared_terms)),
    ` shared index ${a.shared_terms === 1 ? 'term' : 'terms'}, highlighted in both texts`);
  const cosine = a.comparison && a.comparison.cosine;
  if (typeof cosine === 'number') head.append('; exact tf-idf cosine ', el('strong', null, cosine.toFixed(3)));
  head.append('.');

  const table = el('table', 'verdicts');
  table.append(el('caption', null, 'What each method says'));
  const header = el('tr');
  for (const t of ['Method', 'Score', 'Threshold', 'Near copy?']) {
    const th = el('th', null, t);
    th.scope = 'col';
    header.append(th);
  }
  const thead = el('thead');
  thead.append(header);
  table.append(thead);
  const body = el('tbody');
  for (const v of a.verdicts || []) {
    const tr = el('tr');
    const th = el('th', null, METHODS[v.method] || v.method);
    th.scope = 'row';
    const score = typeof v.score === 'number' ? v.score.toFixed(3) : String(v.score);
    const threshold = typeof v.threshold === 'number' ? `≥ ${v.threshold}` : String(v.threshold ?? '');
    const verdict = el('td', v.near_duplicate ? 'yes' : 'no', v.near_duplicate ? '✓ yes' : '✗ no');
    tr.append(th, el('td', 'num', score), el('td', 'num', threshold), verdict);
    body.append(tr);
  }
  table.append(body);
  const scroll = el('div', 'table-scroll');
  scroll.append(table);

  const side = (title, spans) => {
    const f = el('figure', 'side');
    f.append(el('figcaption', null, title), runs(spans, title));
    return f;
  };
  const texts = el('div', 'texts');
  texts.append(side(doc.name, a.a || []), side(h.title ? `${h.id}: ${h.title}` : h.id, a.b || []));
  return [head, texts, scroll];
}

// ---- wiring --------------------------------------------------------------------------------

form.addEventListener('submit', (e) => {
  e.preventDefault();
  const text = textarea.value;
  if (!text.trim()) {
    showError('Paste a document into the text box first (or drop files).');
    textarea.focus();
    return;
  }
  const first = text.trim().split('\n', 1)[0].slice(0, 60);
  search([{ name: 'Pasted text', detail: `“${first}”, ${plural(text.length, 'character')}`, text }]);
});

form.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    form.requestSubmit();
  }
});

$('similar').addEventListener('change', (e) => {
  $('threshold').placeholder = e.target.checked ? '0.4' : '0.5';
});

async function useFiles(list) {
  const files = Array.from(list || []);
  if (files.length === 0) return;
  try {
    const docs = await Promise.all(files.map(async (f) => ({
      name: f.name, detail: size(f.size), text: await f.text(), file: true,
    })));
    await search(docs);
  } catch (e) {
    showError(`A file could not be read: ${e.message}`);
  }
}

fileInput.addEventListener('change', () => {
  useFiles(fileInput.files).finally(() => { fileInput.value = ''; });
});

// Files may be dropped anywhere on the page; the drop zone lights up while they are dragged.
const carriesFiles = (e) => e.dataTransfer && Array.from(e.dataTransfer.types).includes('Files');
let depth = 0; // dragenter and dragleave come for every element crossed
document.addEventListener('dragenter', (e) => {
  if (carriesFiles(e)) dropZone.classList.toggle('over', ++depth > 0);
});
document.addEventListener('dragleave', (e) => {
  if (carriesFiles(e)) dropZone.classList.toggle('over', (depth = Math.max(0, depth - 1)) > 0);
});
document.addEventListener('dragover', (e) => {
  if (carriesFiles(e)) { e.preventDefault(); e.dataTransfer.dropEffect = 'copy'; }
});
document.addEventListener('drop', (e) => {
  if (!carriesFiles(e)) return;
  e.preventDefault();
  depth = 0;
  dropZone.classList.remove('over');
  useFiles(e.dataTransfer.files);
});

loadInfo();
