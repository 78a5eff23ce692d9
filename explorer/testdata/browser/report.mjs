// Opens a `jrpc bench --report` page in headless Chromium (Debian's
// /usr/bin/chromium) and checks that it renders this run's numbers: no
// console errors and no request but the file itself, every summary figure
// equal to the run's --json output, the charts drawn (lines with points in
// the plot, histogram bars), errors by code listed, and with --compare
// OLD.json the ratios of the two runs. Run by cmd/jrpc/bench_test.go:
//
//	node report.mjs --report FILE.html --json RUN.json [--compare OLD.json] [--screenshot out/x.png]
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const opt = (name) => { const i = args.indexOf('--' + name); return i >= 0 ? args[i + 1] : undefined; };
const file = resolve(opt('report'));
const run = JSON.parse(readFileSync(opt('json'), 'utf8'));
const old = opt('compare') ? JSON.parse(readFileSync(opt('compare'), 'utf8')) : null;
const screenshot = opt('screenshot');
const step = (s) => process.stderr.write('browser: ' + s + '\n');

const profile = mkdtempSync(join(tmpdir(), 'report-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1400, height: 1000 },
});
const failures = [];
const problems = [];
const near = (a, b) => Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a), Math.abs(b));
try {
  const page = context.pages()[0] || await context.newPage();
  page.setDefaultTimeout(15000);
  const url = pathToFileURL(file).href;
  page.on('console', (m) => { if (m.type() === 'error') problems.push('console: ' + m.text()); });
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  page.on('request', (r) => { if (r.url() !== url) problems.push('the page requested ' + r.url()); });
  step('open ' + url);
  await page.goto(url);

  // The summary: each figure as the JSON has it, shown as text.
  const want = { requests: run.requests, ok: run.ok, errors: run.requests - run.ok, throughput: run.throughput, duration: run.duration_s };
  for (const p of ['p50', 'p90', 'p99', 'max', 'mean']) want[p] = run.latency_ms[p];
  for (const [metric, value] of Object.entries(want)) {
    const fig = page.locator(`#summary [data-metric="${metric}"]`);
    if (await fig.count() !== 1) { failures.push('no ' + metric + ' in the summary'); continue; }
    const got = Number(await fig.getAttribute('data-value'));
    const text = (await fig.locator('.value').textContent()).trim();
    if (!near(got, value) || text === '' || !(await fig.isVisible())) failures.push(metric + ' shows ' + got + ' (' + JSON.stringify(text) + '), want ' + value);
  }
  const reqText = await page.textContent('#summary [data-metric="requests"] .value');
  if (reqText.trim() !== String(run.requests)) failures.push('requests reads ' + reqText);
  step('summary: ' + (await page.textContent('#summary')).replace(/\s+/g, ' ').trim());

  // The charts: lines with points inside the plot, bars for the histogram.
  for (const id of ['throughput', 'latency']) {
    const lines = await page.$$eval(`#${id} svg polyline:not(.dashed)`, (ps) => ps.map((p) => p.getAttribute('points').trim().split(/\s+/).map((xy) => xy.split(',').map(Number))));
    if (lines.length === 0) failures.push('the ' + id + ' chart has no line');
    for (const pts of lines) {
      if (pts.length < 2) failures.push('a line of the ' + id + ' chart has ' + pts.length + ' points');
      if (pts.some(([x, y]) => !(x >= 64 && x <= 708 && y >= 11 && y <= 211))) failures.push('a line of the ' + id + ' chart leaves the plot: ' + JSON.stringify(pts.slice(0, 5)));
    }
    const box = await page.locator(`#${id} svg`).boundingBox();
    if (!box || box.width < 300 || box.height < 100) failures.push('the ' + id + ' chart is not shown: ' + JSON.stringify(box));
  }
  // The x-axis labels of every chart, as drawn: none runs into another or
  // out of its chart; a time axis ends with the run (a 4 s run is not drawn
  // on a 5 s axis).
  for (const id of ['throughput', 'latency', 'histogram']) {
    const svg = await page.locator(`#${id} svg`).boundingBox();
    const labels = await page.$$eval(`#${id} svg text[y="226"]`, (ts) => ts.map((t) => { const b = t.getBoundingClientRect(); return [t.textContent, b.left, b.right]; }));
    for (let i = 0; i < labels.length; i++) {
      const [text, l, r] = labels[i];
      if (l < svg.x - 0.5 || r > svg.x + svg.width + 0.5) failures.push(`the ${id} label ${text} leaves its chart`);
      if (i > 0 && l < labels[i - 1][2]) failures.push(`the ${id} labels ${labels[i - 1][0]} and ${text} overlap`);
    }
    if (id !== 'histogram') {
      const last = parseFloat(labels[labels.length - 1][0]);
      const runs = old ? Math.max(run.duration_s, old.duration_s) : run.duration_s;
      if (last > runs + 0.1) failures.push(`the ${id} time axis runs to ${last}s for a ${runs}s run`);
    }
  }
  const bars = await page.$$eval('#histogram rect.bar', (rs) => rs.map((r) => Number(r.getAttribute('height'))));
  if (bars.length !== run.histogram.length || !bars.some((h) => h > 0)) failures.push('the histogram has bars ' + JSON.stringify(bars) + ' for ' + run.histogram.length + ' rows');
  const tallest = run.histogram.reduce((a, r, i) => (r.count > run.histogram[a].count ? i : a), 0);
  if (bars[tallest] !== Math.max(...bars)) failures.push('the tallest bar is not the most frequent latency range');
  step('charts: ' + bars.length + ' bars');

  // Errors by code.
  const codes = Object.keys(run.errors);
  for (const c of codes) {
    const n = await page.textContent(`#errors tr[data-code="${c}"] td.num`).catch(() => null);
    if (n === null || Number(n) !== run.errors[c]) failures.push('error ' + c + ' shows ' + n + ', want ' + run.errors[c]);
  }
  if (codes.length === 0 && !/none/.test(await page.textContent('#errors'))) failures.push('no errors, but the page does not say so');

  if (old) {
    const ratios = { throughput: run.throughput / old.throughput, p50: run.latency_ms.p50 / old.latency_ms.p50, p99: run.latency_ms.p99 / old.latency_ms.p99 };
    for (const [metric, r] of Object.entries(ratios)) {
      const row = page.locator(`#compare tr[data-metric="${metric}"]`);
      const got = Number(await row.getAttribute('data-ratio'));
      const text = await row.textContent();
      if (Math.abs(got - r) > 1e-4 * r || !text.includes(r.toFixed(2) + '×')) failures.push(metric + ' ratio shows ' + got + ' (' + JSON.stringify(text) + '), want ' + r);
    }
    // Both runs in one histogram, on the same ranges, each range's two bars
    // side by side (before on the left), not two charts with their own ranges.
    const edgesNow = run.histogram.map((r) => r.le_ms), edgesBefore = run.compare.histogram.map((r) => r.le_ms);
    if (JSON.stringify(edgesNow) !== JSON.stringify(edgesBefore)) failures.push('the two runs\' histograms have different ranges: ' + edgesNow + ' and ' + edgesBefore);
    const pairs = await page.$$eval('#histogram rect', (rs) => rs.map((r) => { const b = r.getBoundingClientRect(); return [r.getAttribute('class'), b.left, b.right]; }));
    for (let i = 0; i < pairs.length; i += 2) {
      const [bc, bl, br] = pairs[i], [nc, nl] = pairs[i + 1] || [];
      if (bc !== 'bar-before' || nc !== 'bar' || nl < br - 0.5 || nl - bl > 2.5 * (br - bl)) { failures.push('range ' + i / 2 + ' is not drawn as two bars side by side: ' + JSON.stringify(pairs.slice(i, i + 2))); break; }
    }
    if (pairs.length !== 2 * run.histogram.length || await page.locator('#histogram-before').count() !== 0) failures.push('the earlier run\'s histogram is not beside this one: ' + pairs.length + ' bars');
    if (await page.locator('#throughput polyline.dashed').count() !== 1) failures.push('the earlier run\'s throughput is not drawn');
    step('compare: ' + (await page.textContent('#compare')).replace(/\s+/g, ' ').trim());
  }
  if (screenshot) {
    mkdirSync(dirname(screenshot), { recursive: true });
    await page.screenshot({ path: screenshot, fullPage: true });
    step('screenshot ' + screenshot);
  }
} catch (e) {
  failures.push('browser: ' + e.message);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
failures.push(...problems);
if (failures.length) {
  for (const f of failures) console.error('FAIL ' + f);
  process.exit(1);
}
console.log('ok');
