// Drives headless Chromium (Debian's /usr/bin/chromium) through the
// explorer page. By default (--mode described) the service describes
// itself (rpc.discover, or the document of jrpc explore --schema): the page
// loads with no console errors, lists every expected method, submits
// subtract from the form and shows 19, fills the form in from JSON typed in
// the params box, shows a -32602 error readably, marks a deprecated method,
// and (with --notifications) shows notifications live. --mode free: the
// service has no rpc.discover; the page says so, and subtract is called by
// name with params as JSON, an unknown method shows -32601. --mode
// unreachable: the page says why the service cannot be reached. Run by
// explorer/explorer_test.go and cmd/jrpc/explore_test.go:
//
// In described mode the page also copies a request of its history as curl
// and as jrpc: the commands are run (curl when the page offers one, jrpc
// when --jrpc names the binary) and must give the answer the page showed.
//
//	node test.mjs --url URL --methods a,b,c [--mode described|free|unreachable] [--banner REGEXP]
//	        [--deprecated minus] [--notifications] [--screenshot out/x.png] [--jrpc PATH]
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { execFileSync } from 'node:child_process';

const args = process.argv.slice(2);
const opt = (name) => { const i = args.indexOf('--' + name); return i >= 0 ? args[i + 1] : undefined; };
const url = opt('url');
const expected = (opt('methods') || '').split(',').filter(Boolean);
const deprecated = opt('deprecated') || 'minus';
const screenshot = opt('screenshot');
const wantNotifications = args.includes('--notifications');
const mode = opt('mode') || 'described';
const banner = new RegExp(opt('banner') || 'rpc.discover');
const jrpcBin = opt('jrpc');
const step = (s) => process.stderr.write('browser: ' + s + '\n');

const profile = mkdtempSync(join(tmpdir(), 'explorer-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1360, height: 860 },
});
const failures = [];
const consoleErrors = [];
try {
  const page = context.pages()[0] || await context.newPage();
  page.setDefaultTimeout(15000);
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push('page error: ' + e.message));
  page.on('requestfailed', (r) => consoleErrors.push('request failed: ' + r.url() + ' ' + (r.failure() || {}).errorText));

  step('open ' + url + ' (' + mode + ')');
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]');
  if (mode === 'free') await free(page);
  else if (mode === 'unreachable') await unreachable(page);
  else await described(page);
} catch (e) {
  failures.push('browser: ' + e.message);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
for (const e of consoleErrors) if (!(mode === 'unreachable' && /WebSocket/.test(e))) failures.push('console: ' + e);
if (failures.length) {
  for (const f of failures) console.error('FAIL ' + f);
  process.exit(1);
}
console.log('ok');

async function shot(page) {
  if (!screenshot) return;
  mkdirSync(dirname(screenshot), { recursive: true });
  await page.screenshot({ path: screenshot, fullPage: false });
  step('screenshot ' + screenshot);
}

// bannerSays checks the page's alert line.
async function bannerSays(page) {
  await page.waitForSelector('#banner:not([hidden])');
  const text = await page.textContent('#banner');
  if (!banner.test(text)) failures.push('the banner says ' + JSON.stringify(text) + ', want ' + banner);
  step('banner: ' + text);
}

// free: no rpc.discover; methods are called by name.
async function free(page) {
  await bannerSays(page);
  const listed = await page.$$eval('#methods li', (lis) => lis.length);
  if (listed !== 0) failures.push(listed + ' methods listed for a service that did not describe any');
  await page.fill('#free-method', 'subtract');
  await page.click('#free-open');
  await page.waitForSelector('#method:not([hidden])');
  if ((await page.textContent('#m-name')) !== 'subtract') failures.push('the free-form box opened ' + await page.textContent('#m-name'));
  await page.fill('#params-json', '[42,23]');
  await page.click('#send');
  await page.waitForSelector('#result');
  const result = (await page.textContent('#result')).trim();
  if (result !== '19') failures.push('subtract by name showed ' + JSON.stringify(result) + ', want 19');
  step('subtract by name: ' + result);
  await shot(page);
  await page.fill('#free-method', 'no_such_method');
  await page.click('#free-open');
  await page.fill('#params-json', '{"a":');
  await page.click('#send');
  if (!(await page.isVisible('#params-error'))) failures.push('params that are not JSON were not refused on the page');
  await page.fill('#params-json', '');
  await page.click('#send');
  await page.waitForSelector('#rpc-error');
  const errText = await page.textContent('#rpc-error');
  if (!errText.includes('Error -32601')) failures.push('an unknown method shows ' + JSON.stringify(errText));
  step('unknown method: ' + errText.replace(/\s+/g, ' '));
}

// unreachable: the page says why, and a call shows a transport failure.
async function unreachable(page) {
  await bannerSays(page);
  await page.fill('#free-method', 'subtract');
  await page.click('#free-open');
  await page.fill('#params-json', '[42,23]');
  await page.click('#send');
  await page.waitForSelector('#answer .rpc-error');
  const text = await page.textContent('#answer');
  if (!/transport failure/.test(text) || !banner.test(text)) failures.push('a call to an unreachable service shows ' + JSON.stringify(text));
  step('call: ' + text);
  await shot(page);
}

async function described(page) {
  const names = await page.$$eval('#methods li', (lis) => lis.map((li) => li.dataset.name));
  for (const m of expected) if (!names.includes(m)) failures.push('method ' + m + ' is not listed (listed: ' + names.join(', ') + ')');
  step('listed ' + names.length + ' methods');

  // A deprecated method is marked in the list and in its view.
  const dep = page.locator(`#methods li[data-name="${deprecated}"]`);
  if (!(await dep.getAttribute('class') || '').includes('deprecated') || (await dep.locator('.badge.deprecated').count()) !== 1) failures.push(deprecated + ' is not marked deprecated in the list');
  await dep.locator('button').click();
  await page.waitForSelector('#m-deprecation:not([hidden])');
  const depText = await page.textContent('#m-deprecation');
  if (!/Deprecated/.test(depText) || !/subtract/.test(depText)) failures.push('the deprecation notice says ' + JSON.stringify(depText));

  // subtract from the form (and it is not marked deprecated).
  await page.click('#methods li[data-name="subtract"] button');
  if (await page.isVisible('#m-deprecated') || await page.isVisible('#m-deprecation')) failures.push('subtract is shown as deprecated');
  await page.fill('.field[data-name="minuend"] input', '42');
  await page.fill('.field[data-name="subtrahend"] input', '23');
  const params = await page.inputValue('#params-json');
  if (params !== '{"minuend":42,"subtrahend":23}') failures.push('the form built params ' + params);
  // The JSON box fills the form in, by name and by position.
  for (const [json, want] of [['{"minuend":5,"subtrahend":3}', '5,3'], ['[7, 2]', '7,2']]) {
    await page.fill('#params-json', json);
    const got = [await page.inputValue('.field[data-name="minuend"] input'), await page.inputValue('.field[data-name="subtrahend"] input')].join(',');
    if (got !== want) failures.push('params ' + json + ' filled the form with ' + got + ', want ' + want);
  }
  await page.fill('.field[data-name="minuend"] input', '42');
  await page.fill('.field[data-name="subtrahend"] input', '23');
  if (await page.inputValue('#params-json') !== '{"minuend":42,"subtrahend":23}') failures.push('the form did not rewrite the JSON box: ' + await page.inputValue('#params-json'));
  await page.click('#send');
  await page.waitForSelector('#result');
  const result = (await page.textContent('#result')).trim();
  if (result !== '19') failures.push('subtract showed ' + JSON.stringify(result) + ', want 19');
  const request = await page.textContent('#request');
  if (!request.includes('"method": "subtract"') || !(await page.textContent('#response')).includes('"result": 19')) failures.push('the envelopes are not shown: ' + request);
  if (!/ms$/.test((await page.textContent('#elapsed')).trim())) failures.push('no time taken shown');
  step('subtract from the form: ' + result);
  await shot(page);

  // -32602, readably.
  await page.fill('#params-json', '{"minuend":"x","subtrahend":1}');
  await page.click('#send');
  await page.waitForSelector('#rpc-error');
  const errText = await page.textContent('#rpc-error');
  for (const want of ['Error -32602', '/minuend', 'expected number, got string']) if (!errText.includes(want)) failures.push('the -32602 error shows ' + JSON.stringify(errText) + ', lacking ' + want);
  step('invalid params: ' + errText.replace(/\s+/g, ' '));

  // History.
  const history = await page.$$eval('#history li', (lis) => lis.length);
  if (history < 2) failures.push('history has ' + history + ' entries');

  // Copy as curl / as jrpc, from the history: the subtract that gave 19.
  await page.click('#history li:last-child');
  await page.waitForSelector('#result');
  await copied(page);
  await saved(page);
}

// saved saves a request, reloads the page, opens it from Saved and sends
// it; then forgets it.
async function saved(page) {
  await page.click('#methods li[data-name="subtract"] button');
  await page.fill('#params-json', '[10,4]');
  await page.click('#save');
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  const item = page.locator('#saved li[data-method="subtract"]');
  if ((await item.count()) !== 1) { failures.push('the saved request is not listed after a reload'); return; }
  await item.locator('button.open').click();
  if ((await page.inputValue('#params-json')) !== '[10,4]') failures.push('the saved request opened with params ' + await page.inputValue('#params-json'));
  await page.click('#send');
  await page.waitForSelector('#result');
  const result = (await page.textContent('#result')).trim();
  if (result !== '6') failures.push('the saved request answered ' + JSON.stringify(result) + ', want 6');
  step('saved request, reloaded, sent: ' + result);
  await item.locator('button.forget').click();
  if ((await page.locator('#saved li').count()) !== 0) failures.push('the saved request was not forgotten');
}

// copied copies the request shown (subtract, 19) as curl and as jrpc, and
// runs the commands: each must give the answer the page showed.
async function copied(page) {
  const shownResult = JSON.parse(await page.textContent('#result'));
  const run = (line, env) => execFileSync('/bin/sh', ['-c', line], { timeout: 30000, env, encoding: 'utf8' }).trim();
  if (!(await page.isDisabled('#copy-curl'))) {
    await page.click('#copy-curl');
    await page.waitForSelector('#copy-box:not([hidden])');
    const line = await page.textContent('#copy-text');
    if (!line.startsWith('curl ') || !line.includes('"method":"subtract"')) failures.push('copy as curl gave ' + JSON.stringify(line));
    try {
      const resp = JSON.parse(run(line, process.env));
      if (JSON.stringify(resp.result) !== JSON.stringify(shownResult)) failures.push('the copied curl answered ' + JSON.stringify(resp) + ', the page showed ' + shownResult);
      step('copy as curl, run: ' + JSON.stringify(resp));
    } catch (e) { failures.push('the copied curl failed: ' + line + ': ' + e.message); }
  } else step('copy as curl: not offered (WebSocket)');
  await page.click('#copy-jrpc');
  await page.waitForFunction(() => document.getElementById('copy-text').textContent.startsWith('jrpc '));
  const line = await page.textContent('#copy-text');
  if (!/ call( .*)? subtract '\{"minuend":42,"subtrahend":23\}'$/.test(line)) failures.push('copy as jrpc gave ' + JSON.stringify(line));
  step('copy as jrpc: ' + line);
  if (jrpcBin) {
    try {
      const out = run(line, { ...process.env, PATH: dirname(jrpcBin) + ':' + process.env.PATH, NO_COLOR: '1' });
      if (JSON.stringify(JSON.parse(out)) !== JSON.stringify(shownResult)) failures.push('the copied jrpc printed ' + out + ', the page showed ' + shownResult);
      step('copy as jrpc, run: ' + out);
    } catch (e) { failures.push('the copied jrpc failed: ' + line + ': ' + e.message); }
  }

  if (wantNotifications) {
    await page.click('#methods li[data-name="demo_subscribe"] button');
    await page.fill('#params-json', '["ticker",{"interval_ms":20,"count":3}]');
    await page.click('#send');
    await page.waitForFunction(() => document.querySelectorAll('#notifications li').length >= 3);
    const first = await page.textContent('#notifications li:last-child pre');
    if (!first.includes('demo_subscription')) failures.push('the notification shows ' + first);
    step('notifications shown live');
  }
}
