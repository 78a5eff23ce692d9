// The JSON-RPC explorer: plain JavaScript, no dependencies, nothing loaded
// from the network but config.json and the service's answers.
'use strict';

const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
};
const pretty = (v) => JSON.stringify(v, null, 2);

const state = { doc: null, defs: {}, method: null, transport: null, nextId: 1, history: [], shown: null, jrpc: '', httpURL: '', where: '' };

// Transports ---------------------------------------------------------------

// httpTransport POSTs each message; a 204 means no reply.
function httpTransport(url) {
  return {
    name: 'HTTP',
    async send(msg) {
      const resp = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Accept': 'application/json' }, body: msg });
      const deprecation = resp.headers.get('Deprecation');
      if (resp.status === 204 || resp.status === 202) return { text: '', deprecation };
      const text = await resp.text();
      if (!resp.ok) throw new Error('HTTP ' + resp.status + ': ' + text.trim());
      return { text, deprecation };
    },
  };
}

// wsTransport keeps one WebSocket; replies are matched by id, everything
// else the server sends is a notification (or a request, answered -32601).
function wsTransport(url, onNotification, onStatus) {
  const pending = new Map();
  let ws = null;
  let opened = null;
  const open = () => {
    if (opened) return opened;
    opened = new Promise((resolve, reject) => {
      ws = new WebSocket(url);
      ws.onopen = () => { onStatus(true); resolve(); };
      ws.onerror = () => reject(new Error('WebSocket ' + url + ' failed'));
      ws.onclose = (ev) => {
        onStatus(false, ev.reason);
        opened = null;
        for (const p of pending.values()) p.reject(new Error('the WebSocket closed' + (ev.reason ? ': ' + ev.reason : '')));
        pending.clear();
      };
      ws.onmessage = (ev) => {
        let m;
        try { m = JSON.parse(ev.data); } catch { onNotification(ev.data, 'not JSON'); return; }
        const replies = Array.isArray(m) ? m : [m];
        const key = Array.isArray(m) ? 'batch:' + m.map((r) => JSON.stringify(r.id)).sort().join(',') : JSON.stringify(m.id);
        if (!Array.isArray(m) && m.method !== undefined) {
          onNotification(ev.data, m.id === undefined ? 'notification' : 'request');
          if (m.id !== undefined) ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'method not found: the explorer serves no methods' } }));
          return;
        }
        const p = pending.get(key) || (replies.length === 1 ? pending.get(JSON.stringify(replies[0].id)) : null);
        if (p) { pending.delete(p.key); p.resolve({ text: ev.data }); } else onNotification(ev.data, 'unmatched reply');
      };
    });
    return opened;
  };
  return {
    name: 'WebSocket',
    open,
    async send(msg, id, expectReply) {
      await open();
      if (!expectReply) { ws.send(msg); return { text: '' }; }
      const key = JSON.stringify(id);
      return new Promise((resolve, reject) => {
        pending.set(key, { key, resolve, reject });
        ws.send(msg);
      });
    },
  };
}

function setStatus(text, ok) {
  const s = $('status');
  s.textContent = text;
  s.className = 'status ' + (ok ? 'ok' : 'bad');
}

// showBanner says on the page what went wrong ('' hides it); kind names
// the trouble, so that its end can clear it.
function showBanner(text, kind = '') {
  const b = $('banner');
  b.textContent = text;
  b.hidden = !text;
  b.dataset.kind = kind;
}

function addNotification(text, kind) {
  let body = text;
  try { body = pretty(JSON.parse(text)); } catch { /* shown as it came */ }
  const li = el('li', { class: 'notification' }, el('span', { class: 'muted', text: new Date().toLocaleTimeString() + ' ' + kind }), el('pre', { text: body }));
  $('notifications').prepend(li);
}

// Schemas ------------------------------------------------------------------

function resolve(s) {
  const seen = new Set();
  while (s && s.$ref && !seen.has(s.$ref)) {
    seen.add(s.$ref);
    const name = decodeURIComponent(s.$ref.replace(/^#\/components\/schemas\//, '').replace(/^#\/\$defs\//, ''));
    s = state.defs[name];
  }
  return s === true || s === undefined || s === null ? {} : s;
}

// unwrap returns the schema without its null alternative and whether null
// is allowed (Go pointers give ["null", T] or anyOf [null, $ref]).
function unwrap(s) {
  s = resolve(s);
  if (Array.isArray(s.type) && s.type.includes('null')) {
    const rest = s.type.filter((t) => t !== 'null');
    return { schema: { ...s, type: rest.length === 1 ? rest[0] : rest }, nullable: true };
  }
  for (const key of ['anyOf', 'oneOf']) {
    if (Array.isArray(s[key]) && s[key].length === 2) {
      const i = s[key].findIndex((b) => resolve(b).type === 'null');
      if (i >= 0) return { schema: resolve(s[key][1 - i]), nullable: true };
    }
  }
  return { schema: s, nullable: false };
}

function typeName(s) {
  const { schema, nullable } = unwrap(s);
  let t = schema.type || (schema.enum ? 'enum' : schema.properties ? 'object' : 'any');
  if (Array.isArray(t)) t = t.join('|');
  if (t === 'array') t = typeName(schema.items || {}) + '[]';
  if (s && s.$ref) t = s.$ref.split('/').pop();
  return nullable ? t + '?' : t;
}

// field returns an input for schema s: {el, get} where get() gives the
// value, or undefined when left empty.
function field(s, depth) {
  const { schema, nullable } = unwrap(s);
  const onInput = () => syncJSON();
  const dflt = schema.default;
  if (Array.isArray(schema.enum)) {
    const sel = el('select');
    sel.append(el('option', { value: '', text: '(none)' }));
    schema.enum.forEach((v, i) => sel.append(el('option', { value: String(i), text: JSON.stringify(v) })));
    if (nullable && !schema.enum.includes(null)) sel.append(el('option', { value: 'null', text: 'null' }));
    if (dflt !== undefined) { const i = schema.enum.findIndex((v) => JSON.stringify(v) === JSON.stringify(dflt)); if (i >= 0) sel.value = String(i); }
    sel.addEventListener('change', onInput);
    const set = (v) => {
      const i = schema.enum.findIndex((x) => JSON.stringify(x) === JSON.stringify(v));
      sel.value = i >= 0 ? String(i) : v === null && nullable ? 'null' : '';
    };
    return { el: sel, get: () => sel.value === '' ? undefined : sel.value === 'null' ? null : schema.enum[Number(sel.value)], set };
  }
  const type = Array.isArray(schema.type) ? undefined : schema.type;
  if (type === 'boolean') {
    const sel = el('select');
    for (const [v, t] of [['', '(none)'], ['true', 'true'], ['false', 'false']].concat(nullable ? [['null', 'null']] : [])) sel.append(el('option', { value: v, text: t }));
    if (typeof dflt === 'boolean') sel.value = String(dflt);
    sel.addEventListener('change', onInput);
    const set = (v) => { sel.value = typeof v === 'boolean' || (v === null && nullable) ? String(v) : ''; };
    return { el: sel, get: () => sel.value === '' ? undefined : JSON.parse(sel.value), set };
  }
  if (type === 'integer' || type === 'number') {
    const inp = el('input', { type: 'text', inputmode: 'decimal', placeholder: type + boundsText(schema) });
    if (dflt !== undefined) inp.value = String(dflt);
    inp.addEventListener('input', onInput);
    return {
      el: inp,
      get: () => {
        const v = inp.value.trim();
        if (v === '') return undefined;
        if (v === 'null' && nullable) return null;
        const n = Number(v);
        return Number.isFinite(n) && /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(v) ? n : v; // a wrong value is sent as written, for the server to judge
      },
      set: (v) => { inp.value = asText(v); },
    };
  }
  if (type === 'string') {
    const inp = el('input', { type: 'text', placeholder: schema.format || schema.pattern || 'string' });
    if (typeof dflt === 'string') inp.value = dflt;
    inp.addEventListener('input', onInput);
    return { el: inp, get: () => inp.value === '' ? undefined : inp.value, set: (v) => { inp.value = asText(v); } };
  }
  if ((type === 'object' || (!type && schema.properties)) && schema.properties && depth < 6) {
    const box = el('fieldset', { class: 'object' });
    const subs = [];
    const required = new Set(schema.required || []);
    for (const [name, ps] of Object.entries(schema.properties)) {
      const f = field(ps, depth + 1);
      subs.push([name, f]);
      box.append(row(name, ps, required.has(name), f));
    }
    return {
      el: box,
      get: () => {
        const out = {};
        let any = false;
        for (const [name, f] of subs) { const v = f.get(); if (v !== undefined) { out[name] = v; any = true; } }
        return any ? out : undefined;
      },
      set: (v) => { for (const [name, f] of subs) f.set(v !== null && typeof v === 'object' ? v[name] : undefined); },
    };
  }
  if (type === 'array' && schema.items && depth < 6) return arrayField(schema.items, depth, onInput);
  // Anything else: JSON.
  const ta = el('textarea', { rows: '2', spellcheck: 'false', placeholder: 'JSON' });
  if (dflt !== undefined) ta.value = JSON.stringify(dflt);
  ta.addEventListener('input', onInput);
  return {
    el: ta,
    get: () => {
      const v = ta.value.trim();
      if (v === '') return undefined;
      try { return JSON.parse(v); } catch { return v; }
    },
    set: (v) => { ta.value = v === undefined ? '' : JSON.stringify(v); },
  };
}

// asText is a value as a text input shows it: a string as it is, anything
// else as JSON, nothing for undefined.
function asText(v) {
  if (v === undefined) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function boundsText(s) {
  const parts = [];
  if (s.minimum !== undefined) parts.push('≥ ' + s.minimum);
  if (s.maximum !== undefined) parts.push('≤ ' + s.maximum);
  return parts.length ? ' (' + parts.join(', ') + ')' : '';
}

function arrayField(itemSchema, depth, onInput) {
  const box = el('div', { class: 'items' });
  const list = el('div', { class: 'items' });
  const entries = [];
  const add = el('button', { type: 'button', class: 'add', text: '+ item' });
  const addItem = () => {
    const f = field(itemSchema, depth + 1);
    const rm = el('button', { type: 'button', text: '−', title: 'remove' });
    const item = el('div', { class: 'item' }, f.el, rm);
    const entry = { f, item };
    rm.addEventListener('click', () => { entries.splice(entries.indexOf(entry), 1); item.remove(); onInput(); });
    entries.push(entry);
    list.append(item);
    return entry;
  };
  add.addEventListener('click', () => { addItem(); onInput(); });
  box.append(list, add);
  const set = (v) => {
    for (const e of entries.splice(0)) e.item.remove();
    if (Array.isArray(v)) for (const x of v) addItem().f.set(x);
  };
  return { el: box, get: () => entries.length ? entries.map((e) => e.f.get() ?? null) : undefined, set };
}

function row(name, schema, required, f) {
  const s = resolve(schema);
  const label = el('span', { class: 'label' }, name, required ? el('span', { class: 'req', text: ' *', title: 'required' }) : null, el('span', { class: 'type', text: typeName(schema) }));
  const r = el('div', { class: 'field', 'data-name': name }, label, f.el);
  if (s.description) r.append(el('span', { class: 'hint', text: s.description }));
  if (s.deprecated) r.append(el('span', { class: 'hint badge deprecated', text: 'deprecated' }));
  return r;
}

// The method view ------------------------------------------------------------

// The form and the JSON box follow each other: an edit of the form rewrites
// the box, an edit of the box (once it is JSON) fills the form in. The box
// is what is sent. A method known by name only has no form (formGet null).
let formGet = null;
let formSet = () => {};

function syncJSON() {
  if (!formGet) return;
  const v = formGet();
  $('params-json').value = v === undefined ? '' : JSON.stringify(v);
}

function syncForm() {
  const raw = $('params-json').value.trim();
  const perr = $('params-error');
  let v;
  if (raw !== '') {
    try { v = JSON.parse(raw); } catch (e) { perr.textContent = 'params are not JSON (yet): ' + e.message; perr.hidden = false; return; }
  }
  perr.hidden = true;
  formSet(v);
}

// setParams puts params (undefined: none) in the JSON box and the form.
function setParams(params) {
  $('params-json').value = params === undefined ? '' : JSON.stringify(params);
  syncForm();
}

function signature(m) {
  const ps = (m.params || []).map((p) => (m['x-variadic'] ? '...' : '') + p.name + (p.required || m['x-variadic'] ? '' : '?') + ' ' + typeName(p.schema));
  let s = m.name + '(' + ps.join(', ') + ')';
  if (m.result) s += ' ' + typeName(m.result.schema);
  return s;
}

function showMethod(m) {
  state.method = m;
  for (const li of $('methods').children) li.classList.toggle('selected', li.dataset.name === m.name);
  $('placeholder').hidden = true;
  $('method').hidden = false;
  $('outcome').hidden = true;
  $('m-name').textContent = m.name;
  $('m-signature').textContent = m.free ? 'not described by the service: write the params as JSON' : signature(m);
  $('m-deprecated').hidden = !m.deprecated;
  const dep = $('m-deprecation');
  dep.hidden = !m.deprecated;
  if (m.deprecated) {
    let t = 'Deprecated: it still works';
    if (m['x-replacement']) t += '; call ' + m['x-replacement'] + ' instead';
    if (m['x-sunset']) t += '; to be removed at ' + m['x-sunset'];
    dep.textContent = t + '.';
  }
  $('m-summary').textContent = m.summary || '';
  $('m-description').textContent = m.description || '';
  $('m-result').textContent = m.result ? 'result: ' + typeName(m.result.schema) + (resolve(m.result.schema).description ? ' — ' + resolve(m.result.schema).description : '') : '';
  const errs = $('m-errors');
  errs.replaceChildren();
  if (m.errors && m.errors.length) {
    const t = el('table', { class: 'errors' });
    for (const e of m.errors) t.append(el('tr', {}, el('td', { text: String(e.code) }), el('td', { text: e.message })));
    errs.append(el('h4', { text: 'errors' }), t);
  }
  const ex = $('m-examples');
  ex.replaceChildren();
  if (m.examples && m.examples.length) {
    const box = el('div', { class: 'examples' }, el('h4', { text: 'examples' }));
    for (const e of m.examples) {
      const params = exampleParams(m, e);
      const b = el('button', { type: 'button', class: 'example', text: e.name + (e.result ? ' → ' + JSON.stringify(e.result.value) : '') });
      b.addEventListener('click', () => setParams(params));
      box.append(b);
    }
    ex.append(box);
  }
  buildForm(m);
  $('params-error').hidden = true;
}

function exampleParams(m, e) {
  const ps = e.params || [];
  if (!ps.length) return undefined;
  if (m.paramStructure === 'by-position' || m['x-variadic'] || /position/.test(e.name)) return ps.map((p) => p.value);
  const o = {};
  for (const p of ps) o[p.name] = p.value;
  return o;
}

function buildForm(m) {
  const box = $('params');
  box.replaceChildren(el('legend', { text: 'params' }));
  formSet = () => {};
  if (m.free) {
    box.append(el('p', { class: 'muted', text: 'no schema: the params are sent as written in the box below (none if it is empty)' }));
    formGet = null;
    return;
  }
  if (m['x-params-schema']) {
    const f = field(m['x-params-schema'], 0);
    box.append(row('params', m['x-params-schema'], false, f));
    formGet = f.get;
    formSet = f.set;
  } else if (m['x-variadic'] && m.params.length === 1) {
    const f = arrayField(m.params[0].schema, 0, syncJSON);
    box.append(row(m.params[0].name, { type: 'array', items: m.params[0].schema }, false, f));
    formGet = f.get;
    formSet = f.set;
  } else if (!m.params || m.params.length === 0) {
    box.append(el('p', { class: 'muted', text: 'no params' }));
    formGet = () => undefined;
  } else {
    const fields = m.params.map((p) => {
      const f = field(p.schema, 1);
      box.append(row(p.name, p.schema, p.required, f));
      return [p, f];
    });
    formGet = () => {
      if (m.paramStructure === 'by-position') {
        const arr = fields.map(([, f]) => f.get());
        while (arr.length && arr[arr.length - 1] === undefined) arr.pop();
        return arr.map((v) => v === undefined ? null : v);
      }
      const o = {};
      for (const [p, f] of fields) { const v = f.get(); if (v !== undefined) o[p.name] = v; }
      return o;
    };
    // By name or by position, whichever the JSON is written as.
    formSet = (v) => fields.forEach(([p, f], i) => f.set(Array.isArray(v) ? v[i] : v !== null && typeof v === 'object' ? v[p.name] : undefined));
  }
  syncJSON();
}

// methodNamed is the described method of that name, or one known by name
// only (sent with params as written).
function methodNamed(name) {
  return (state.doc && state.doc.methods.find((m) => m.name === name)) || { name, free: true };
}

// Calls --------------------------------------------------------------------

async function send(ev) {
  ev.preventDefault();
  const m = state.method;
  if (!m) return;
  const raw = $('params-json').value.trim();
  const perr = $('params-error');
  let params;
  if (raw !== '') {
    try { params = JSON.parse(raw); } catch (e) { perr.textContent = 'params are not JSON: ' + e.message; perr.hidden = false; return; }
  }
  perr.hidden = true;
  const notify = $('as-notification').checked;
  const req = { jsonrpc: '2.0' };
  if (!notify) req.id = state.nextId++;
  req.method = m.name;
  if (params !== undefined) req.params = params;
  const text = JSON.stringify(req);
  const started = performance.now();
  let entry;
  try {
    const r = await state.transport.send(text, req.id, !notify);
    entry = { method: m.name, request: req, responseText: r.text, ms: performance.now() - started, deprecation: r.deprecation };
  } catch (e) {
    entry = { method: m.name, request: req, failure: e.message, ms: performance.now() - started };
  }
  showOutcome(entry);
  addHistory(entry);
}

function showOutcome(entry) {
  state.shown = entry;
  $('outcome').hidden = false;
  $('copy-box').hidden = true;
  $('copy-curl').disabled = !state.httpURL;
  if (!state.httpURL) $('copy-curl').title = 'the page reaches the service over WebSocket: no HTTP URL to give curl';
  $('elapsed').textContent = entry.ms.toFixed(1) + ' ms';
  $('request').textContent = pretty(entry.request);
  const answer = $('answer');
  answer.replaceChildren();
  if (entry.failure) {
    $('response').textContent = '';
    answer.append(el('div', { class: 'rpc-error' }, el('span', { class: 'code', text: 'transport failure' }), ' ' + entry.failure));
    return;
  }
  if (entry.responseText === '') {
    $('response').textContent = '(no response: a notification)';
    answer.append(el('p', { class: 'muted', text: 'Sent as a notification: the server does not reply.' }));
    return;
  }
  let resp;
  try { resp = JSON.parse(entry.responseText); } catch { resp = undefined; }
  $('response').textContent = resp === undefined ? entry.responseText : pretty(resp);
  if (entry.deprecation) answer.append(el('p', { class: 'warning', text: 'The server says this method is deprecated (Deprecation: ' + entry.deprecation + ').' }));
  if (resp && resp.error) {
    const e = resp.error;
    const box = el('div', { class: 'rpc-error', id: 'rpc-error' }, el('span', { class: 'code', text: 'Error ' + e.code }), ' ', el('span', { class: 'message', text: e.message }));
    if (Array.isArray(e.data) && e.data.every((d) => d && typeof d === 'object' && 'problem' in d)) {
      const t = el('table', { class: 'problems' }, el('tr', {}, el('th', { text: 'path' }), el('th', { text: 'problem' })));
      for (const d of e.data) t.append(el('tr', {}, el('td', { text: d.path === '' ? '(params)' : d.path }), el('td', { text: d.problem })));
      box.append(t);
    } else if (e.data !== undefined) {
      box.append(el('pre', { text: pretty(e.data) }));
    }
    answer.append(box);
  } else if (resp && 'result' in resp) {
    answer.append(el('div', { class: 'result' }, el('h4', { text: 'result' }), el('pre', { id: 'result', text: pretty(resp.result) })));
  }
}

// Copying a request as a command line ------------------------------------

// shq quotes a word for a POSIX shell.
const shq = (s) => /^[A-Za-z0-9_\-.,:\/@%+=]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'";

// curlCommand is a curl command line that POSTs the request as sent.
function curlCommand(entry) {
  return "curl -sS -H 'Content-Type: application/json' --data-binary " + shq(JSON.stringify(entry.request)) + ' ' + shq(state.httpURL);
}

// jrpcCommand is the jrpc call (or notify) that sends the same method and
// params, and prints the result.
function jrpcCommand(entry) {
  const req = entry.request;
  let line = state.jrpc.replace('{command}', 'id' in req ? 'call' : 'notify') + ' ' + shq(req.method);
  if (req.params !== undefined) line += ' ' + shq(JSON.stringify(req.params));
  return line;
}

async function copyCommand(make) {
  if (!state.shown) return;
  const text = make(state.shown);
  $('copy-text').textContent = text;
  $('copy-box').hidden = false;
  const note = $('copy-note');
  try {
    await navigator.clipboard.writeText(text);
    note.textContent = 'copied';
  } catch (e) {
    note.textContent = 'select the line to copy it (the clipboard refused: ' + e.message + ')';
  }
}

// Saved requests ------------------------------------------------------------

// The saved requests ({method, params}) of this service, kept in the
// browser's localStorage under the service's name.
const savedKey = () => 'jrpc-explorer.saved:' + state.where;

function loadSaved() {
  try { return JSON.parse(localStorage.getItem(savedKey()) || '[]'); } catch { return []; }
}

function storeSaved(list) {
  try { localStorage.setItem(savedKey(), JSON.stringify(list)); } catch (e) { showBanner('Cannot save: ' + e.message); }
  renderSaved();
}

function saveRequest() {
  const m = state.method;
  if (!m) return;
  const raw = $('params-json').value.trim();
  const perr = $('params-error');
  let params;
  if (raw !== '') {
    try { params = JSON.parse(raw); } catch (e) { perr.textContent = 'params are not JSON: ' + e.message; perr.hidden = false; return; }
  }
  perr.hidden = true;
  const list = loadSaved().filter((r) => !(r.method === m.name && JSON.stringify(r.params) === JSON.stringify(params)));
  list.unshift({ method: m.name, params });
  storeSaved(list);
}

function renderSaved() {
  const ol = $('saved');
  ol.replaceChildren();
  loadSaved().forEach((r, i) => {
    const label = r.method + (r.params === undefined ? '' : ' ' + JSON.stringify(r.params));
    const open = el('button', { type: 'button', class: 'open', title: 'open ' + r.method + ' with these params', text: label.length > 60 ? label.slice(0, 59) + '…' : label });
    open.addEventListener('click', () => { showMethod(methodNamed(r.method)); setParams(r.params); });
    const forget = el('button', { type: 'button', class: 'forget', title: 'forget it', text: '×' });
    forget.addEventListener('click', () => { const list = loadSaved(); list.splice(i, 1); storeSaved(list); });
    ol.append(el('li', { 'data-method': r.method }, open, ' ', forget));
  });
}

function addHistory(entry) {
  let mark = 'ok';
  if (entry.failure) mark = 'bad';
  else if (entry.responseText) { try { if (JSON.parse(entry.responseText).error) mark = 'bad'; } catch { mark = 'bad'; } }
  state.history.push(entry);
  const li = el('li', { title: JSON.stringify(entry.request) }, el('span', { class: mark, text: mark === 'ok' ? '✓ ' : '✗ ' }), entry.method + ' · ' + entry.ms.toFixed(1) + ' ms');
  li.addEventListener('click', () => {
    if (!state.method || state.method.name !== entry.method) showMethod(methodNamed(entry.method));
    setParams(entry.request.params);
    showOutcome(entry);
  });
  $('history').prepend(li);
}

// Start ----------------------------------------------------------------------

function listMethods() {
  const ul = $('methods');
  ul.replaceChildren();
  const q = $('filter').value.trim().toLowerCase();
  const methods = [...state.doc.methods].sort((a, b) => a.name.localeCompare(b.name));
  for (const m of methods) {
    if (q && !m.name.toLowerCase().includes(q)) continue;
    const b = el('button', { type: 'button', title: m.summary || m.name }, el('span', { class: 'name', text: m.name }));
    if (m.deprecated) b.append(' ', el('span', { class: 'badge deprecated', text: 'deprecated', title: m['x-replacement'] ? 'use ' + m['x-replacement'] : 'deprecated' }));
    b.addEventListener('click', () => showMethod(m));
    const li = el('li', { 'data-name': m.name, class: m.deprecated ? 'deprecated' : undefined }, b);
    if (state.method && state.method.name === m.name) li.classList.add('selected');
    ul.append(li);
  }
}

// readConfig fetches config.json; on failure the page says why and calls
// its own directory over HTTP.
async function readConfig() {
  try {
    const r = await fetch('config.json');
    if (!r.ok) throw new Error('HTTP ' + r.status + ': ' + (await r.text()).trim());
    return await r.json();
  } catch (e) {
    showBanner('config.json: ' + e.message);
    return { endpoint: '' };
  }
}

// describe reads the service's methods: from the document in the
// configuration, else from rpc.discover. It says on the page why it could
// not, and the page is then used by method name.
async function describe(cfg) {
  if (cfg.document) {
    state.doc = cfg.document;
    return 'OpenRPC document given';
  }
  try {
    const r = await state.transport.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'rpc.discover' }), 0, true);
    let resp;
    try { resp = JSON.parse(r.text); } catch { throw new Error('the answer is not JSON: ' + r.text.slice(0, 200)); }
    if (resp.error) throw new Error('rpc.discover: ' + resp.error.code + ' ' + resp.error.message);
    if (!resp.result || !Array.isArray(resp.result.methods)) throw new Error('rpc.discover answered no OpenRPC document');
    state.doc = resp.result;
    return '';
  } catch (e) {
    state.doc = { methods: [] };
    showBanner('The methods cannot be listed: ' + e.message + '. Type a method\'s name above the list to call it (jrpc explore --schema FILE loads an OpenRPC document instead).');
    $('placeholder').textContent = 'The service did not describe its methods: type a method\'s name on the left, then its params as JSON.';
    return null;
  }
}

async function start() {
  $('form').addEventListener('submit', send);
  $('filter').addEventListener('input', listMethods);
  $('params-json').addEventListener('input', syncForm);
  $('free').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const name = $('free-method').value.trim();
    if (name) showMethod(methodNamed(name));
  });
  $('save').addEventListener('click', saveRequest);
  $('copy-curl').addEventListener('click', () => copyCommand(curlCommand));
  $('copy-jrpc').addEventListener('click', () => copyCommand(jrpcCommand));
  const cfg = await readConfig();
  const page = new URL(location.href);
  let where;
  if (cfg.websocket) {
    const u = new URL(cfg.websocket, page);
    if (u.protocol === 'http:') u.protocol = 'ws:';
    if (u.protocol === 'https:') u.protocol = 'wss:';
    where = cfg.target || u.href;
    state.jrpc = cfg.jrpc || 'jrpc {command} ' + shq(u.href);
    state.httpURL = cfg.httpURL || '';
    state.transport = wsTransport(u.href, addNotification, (up, reason) => {
      setStatus(where + (up ? ' · WebSocket' : ' · disconnected'), up);
      if (!up && reason) showBanner('The explorer lost the service: ' + reason, 'lost');
      else if (up && $('banner').dataset.kind === 'lost') showBanner('');
    });
    $('notify-mode').textContent = '(live)';
  } else {
    where = cfg.target || new URL(cfg.endpoint || '.', page).href;
    state.httpURL = cfg.httpURL || new URL(cfg.endpoint || '.', page).href;
    state.jrpc = cfg.jrpc || 'jrpc {command} ' + shq(state.httpURL);
    state.transport = httpTransport(new URL(cfg.endpoint || '.', page).href);
    $('notify-mode').textContent = '(HTTP cannot push)';
  }
  if (state.transport.open) {
    try { await state.transport.open(); } catch (e) { showBanner(e.message + ': is jrpc explore (or the service) still running?', 'lost'); }
  }
  state.where = where;
  renderSaved();
  const source = await describe(cfg);
  if (source === null) setStatus(where + ' · methods unknown', false);
  else if (state.transport.name === 'HTTP') setStatus(where + ' · HTTP' + (source ? ' · ' + source : ''), true);
  state.defs = (state.doc.components && state.doc.components.schemas) || {};
  const info = state.doc.info || {};
  if (info.title) { $('title').textContent = info.title; document.title = info.title + ' · JSON-RPC explorer'; }
  $('version').textContent = info.version ? 'v' + info.version : '';
  listMethods();
  document.body.dataset.ready = 'true';
}

start();
