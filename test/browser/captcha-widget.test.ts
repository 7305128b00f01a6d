/**
 * The captcha widget in a real browser (Debian's headless Chromium, driven by playwright-core),
 * against the real API over HTTP. Two loopback servers and two names for them
 * (--host-resolver-rules maps *.example.test to 127.0.0.1):
 *
 * - the API at http://api.example.test:PORT (createApi + createListener, memory meter), which
 *   serves /widget/* and the captcha routes;
 * - a shop at http://shop.example.test:PORT2 (and http://evil.example.test:PORT2, a host the
 *   site keys do not allow) serving pages with the README's two-line snippet in a <form>; its
 *   POST /submit does what a site's backend does: siteverify the proof with the secret key,
 *   server to server, and answer with the result.
 *
 * Nothing here is skipped: without a Chromium (on PATH, or named by $SECLOOKUP_CHROMIUM or
 * $CHROMIUM_PATH: chromium.ts) every test fails, saying so (CI installs it, see .ci/run). Timings are printed, never asserted.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type Frame, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createListener, handleClientErrors } from '../../adapters/node.js';
import { createApi } from '../../src/api/create-api.js';
import { createLookup } from '../../src/lookup.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import { createSiteKey } from '../../src/products/captcha/site-keys.js';
import { requireChromium } from './chromium.js';

const SHOP = 'shop.example.test';
const FIELD = 'input[name="captcha-response"]';
const PROOF_TIMEOUT = 15_000;

interface ShopPage {
  html: string;
  headers?: Record<string, string>;
  secret: string;
}
interface Submitted {
  status: number;
  body: Record<string, unknown>;
  form: Record<string, string>;
}

let browser: Browser;
let apiServer: Server;
let shopServer: Server;
/** The API as the browser sees it, and as the shop's backend reaches it. */
let apiOrigin = '';
let apiLocal = '';
let shopPort = 0;
const meter = createMemoryMeter();
const pages = new Map<string, ShopPage>();
const contexts: BrowserContext[] = [];

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}
function close(server: Server | undefined): Promise<void> {
  if (!server) return Promise.resolve();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
async function readBody(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text;
}

async function siteverify(secret: string, response: string, extra: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${apiLocal}/v1/captcha/siteverify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ secret, response, ...extra }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The shop: pages by path (any of its host names), and POST /submit?page=PATH -> siteverify. */
function shop(): Server {
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://shop');
    const send = (status: number, body: string, headers: Record<string, string>) => {
      res.writeHead(status, { 'content-length': String(Buffer.byteLength(body)), ...headers });
      res.end(body);
    };
    if (req.method === 'POST' && url.pathname === '/submit') {
      void readBody(req).then(async (text) => {
        const form = Object.fromEntries(new URLSearchParams(text));
        const page = pages.get(url.searchParams.get('page') ?? '');
        const extra: Record<string, string> = { remoteip: '127.0.0.1' };
        if (form.action) extra.action = form.action;
        const result = await siteverify(page?.secret ?? '', form['captcha-response'] ?? '', extra);
        send(200, JSON.stringify({ ...result, form }), { 'content-type': 'application/json' });
      });
      return;
    }
    const page = pages.get(url.pathname);
    if (!page) return send(404, 'not found', { 'content-type': 'text/plain' });
    send(200, page.html, { 'content-type': 'text/html; charset=utf-8', ...page.headers });
  });
}

interface PageOptions {
  /** The site key's public and secret keys. */
  key: { siteKey: string; secretKey: string };
  /** Extra attributes on the widget element (after data-sitekey). */
  attrs?: string;
  /** An action the form sends to the backend, which passes it to siteverify. */
  action?: string;
  /** Query string on api.js. */
  query?: string;
  /** Markup instead of the widget element (explicit rendering). */
  body?: string;
  /** Inline script defining the callbacks (left out of the CSP page). */
  script?: string;
  headers?: Record<string, string>;
}

/** A shop page at `path`: a form with the README's two-line snippet in it. */
function addPage(path: string, options: PageOptions): string {
  const widget = options.body ?? `<div class="seclookup-captcha" data-sitekey="${options.key.siteKey}"${options.attrs ? ` ${options.attrs}` : ''}></div>`;
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Shop</title></head><body>
<form method="post" action="/submit?page=${encodeURIComponent(path)}">
<label>E-mail <input name="email" value="visitor@example.test"></label>
${options.action ? `<input type="hidden" name="action" value="${options.action}">` : ''}
${widget}
<button type="submit">Send</button>
</form>
${options.script ? `<script>${options.script}</script>` : ''}
<script src="${apiOrigin}/widget/api.js${options.query ?? ''}" async defer></script>
</body></html>`;
  pages.set(path, { html, headers: options.headers, secret: options.key.secretKey });
  return path;
}

/** Callbacks recording into window.events, for the pages that may run inline script. */
const RECORDING = `window.events = [];
window.onSolved = function (proof) { window.events.push(['callback', proof]); };
window.onFailed = function (code) { window.events.push(['error', code]); };
window.onExpired = function () { window.events.push(['expired']); };`;
const CALLBACKS = 'data-callback="onSolved" data-error-callback="onFailed" data-expired-callback="onExpired"';

async function newPage(): Promise<Page> {
  const context = await browser.newContext();
  contexts.push(context);
  return context.newPage();
}

async function open(path: string, host = SHOP, page?: Page): Promise<Page> {
  const p = page ?? (await newPage());
  await p.goto(`http://${host}:${shopPort}${path}`);
  return p;
}

/** The widget's iframe, once its checkbox is there. */
async function widgetFrame(page: Page): Promise<Frame> {
  await page.frameLocator('iframe[src*="/widget/frame.html"]').locator('#cb').waitFor();
  const frame = page.frames().find((f) => f.url().includes('/widget/frame.html'));
  if (!frame) throw new Error('widget frame not found');
  return frame;
}

/** The proof in the form's hidden field, once it is there. */
async function proofIn(page: Page): Promise<string> {
  const handle = await page.waitForFunction((selector) => (document.querySelector(selector) as HTMLInputElement | null)?.value || false, FIELD, {
    timeout: PROOF_TIMEOUT,
  });
  return (await handle.jsonValue()) as string;
}

async function submit(page: Page): Promise<Submitted> {
  const [response] = await Promise.all([page.waitForResponse((r) => r.url().includes('/submit?')), page.click('button[type="submit"]')]);
  return (await response.json()) as Submitted;
}

interface Answer {
  path: string;
  status: number;
  body: Record<string, unknown>;
}

/** The JSON answers of the API's captcha routes, as the widget saw them (recorded as their bodies arrive). */
function captchaAnswers(page: Page): Answer[] {
  const seen: Answer[] = [];
  page.on('response', (response) => {
    const url = new URL(response.url());
    if (!url.pathname.startsWith('/v1/captcha/') || response.request().method() === 'OPTIONS') return;
    void response.json().then(
      (body: Record<string, unknown>) => seen.push({ path: url.pathname, status: response.status(), body }),
      () => seen.push({ path: url.pathname, status: response.status(), body: {} }),
    );
  });
  return seen;
}

/** The first answer from `path`, waiting for it to be recorded. */
async function answerOf(answers: Answer[], path: string): Promise<Answer> {
  await expect.poll(() => answers.some((a) => a.path === path), { timeout: PROOF_TIMEOUT }).toBe(true);
  return answers.find((a) => a.path === path)!;
}

beforeAll(async () => {
  const executablePath = requireChromium();
  const api = createApi({ lookup: createLookup(), meter, secret: 'widget-test-operator-secret-0123456789abcdef' });
  apiServer = handleClientErrors(createServer(createListener(api)), api);
  const apiPort = await listen(apiServer);
  apiOrigin = `http://api.example.test:${apiPort}`;
  apiLocal = `http://127.0.0.1:${apiPort}`;
  shopServer = shop();
  shopPort = await listen(shopServer);
  browser = await chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--host-resolver-rules=MAP *.example.test 127.0.0.1, MAP example.test 127.0.0.1'],
  });
});

afterEach(async () => {
  await Promise.all(contexts.splice(0).map((context) => context.close()));
});

afterAll(async () => {
  await browser?.close();
  await Promise.all([close(apiServer), close(shopServer)]);
});

/**
 * A site key of its own per test (each has its own per-minute rate window). Its risk policy is
 * off: these tests are about the widget, and headless Chromium is high risk (captcha-risk.test.ts).
 */
const siteKey = (options: { managed?: boolean } = {}) => createSiteKey(meter, { domains: [SHOP], risk: { blockAt: null, scaleDifficulty: false }, ...options });

describe('captcha widget in headless Chromium', { timeout: 40_000 }, () => {
  it('pow: one click puts a proof in the form; the backend siteverifies it once, a second time is token_already_used', async () => {
    const key = await siteKey();
    addPage('/pow', { key, attrs: `data-action="login" ${CALLBACKS}`, action: 'login', script: RECORDING });
    const page = await newPage();
    const answers = captchaAnswers(page);
    await open('/pow', SHOP, page);
    const frame = await widgetFrame(page);
    expect(await page.locator(FIELD).inputValue()).toBe('');

    const started = Date.now();
    await frame.click('#cb');
    const proof = await proofIn(page);
    const clickToProof = Date.now() - started;
    expect(proof.length).toBeGreaterThan(20);
    expect(proof.length).toBeLessThanOrEqual(2048);
    expect(await page.evaluate(() => (window as unknown as { events: unknown[] }).events)).toEqual([['callback', proof]]);
    expect(await frame.getAttribute('#cb', 'aria-checked')).toBe('true');
    expect(await frame.textContent('#st')).toBe('Verified');
    expect(await frame.getAttribute('#pg', 'aria-valuenow')).toBe('100');

    // The pow solve time at the server's default difficulty, in this browser's worker.
    const challenge = await answerOf(answers, '/v1/captcha/challenge');
    expect(challenge.body).toMatchObject({ puzzle_type: 'pow', params: { algorithm: 'sha256' } });
    const params = challenge.body.params as { difficulty: number; count: number };
    const times = await frame.evaluate(async (p) => {
      const out: number[] = [];
      for (let k = 0; k < 9; k++) {
        const salt = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
        const t = performance.now();
        await new Promise((resolve, reject) => {
          const worker = new Worker('worker.js');
          worker.onmessage = (e) => {
            if (e.data.type === 'done') resolve(worker.terminate());
            else if (e.data.type === 'error') reject(new Error(e.data.message));
          };
          worker.postMessage({ algorithm: 'sha256', salt, difficulty: p.difficulty, count: p.count });
        });
        out.push(performance.now() - t);
      }
      return out.sort((a, b) => a - b);
    }, params);
    console.log(
      `captcha pow in headless Chromium, difficulty ${params.difficulty} x ${params.count}: solve median ${times[4].toFixed(0)} ms ` +
        `(min ${times[0].toFixed(0)}, max ${times[8].toFixed(0)}, 9 runs in a Worker); click to proof in the form ${clickToProof} ms`,
    );

    const result = await submit(page);
    expect(result.form['captcha-response']).toBe(proof);
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ success: true, hostname: SHOP, action: 'login', mode: 'puzzle', 'error-codes': [] });
    const again = await siteverify(key.secretKey, proof);
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ success: false, error_code: 'token_already_used' });
  });

  it('slider: a human-like drag (small steps, y jitter, slowing down) solves it; siteverify ok', async () => {
    const key = await siteKey();
    addPage('/slider', { key, attrs: 'data-puzzle-type="slider"' });
    const page = await newPage();
    const answers = captchaAnswers(page);
    await open('/slider', SHOP, page);
    const frame = await widgetFrame(page);
    await frame.click('#cb');
    await frame.waitForSelector('#pc', { state: 'visible' });
    const challenge = await answerOf(answers, '/v1/captcha/challenge');
    expect(challenge.body).toMatchObject({ puzzle_type: 'slider' });
    const target = (challenge.body.params as { target: number }).target;
    const { width, piece: pieceWidth } = challenge.body.params as { width: number; piece: number };
    expect(await frame.getAttribute('#pc', 'aria-valuemax')).toBe(String(width - pieceWidth));

    const piece = (await page.frameLocator('iframe').locator('#pc').boundingBox())!;
    const x0 = piece.x + piece.width / 2;
    const y0 = piece.y + piece.height / 2;
    await page.mouse.move(x0, y0);
    await page.mouse.down();
    const steps = 45;
    for (let k = 1; k <= steps; k++) {
      const eased = 1 - (1 - k / steps) ** 2.2; // fast at first, slowing towards the slot
      await page.mouse.move(x0 + target * eased, y0 + Math.sin(k * 1.7) * 1.5 + (Math.random() - 0.5));
      await page.waitForTimeout(k > steps * 0.8 ? 25 : 10);
    }
    await page.mouse.move(x0 + target, y0 + 0.5);
    await page.mouse.up();

    const proof = await proofIn(page);
    expect((await answerOf(answers, '/v1/captcha/verify')).status).toBe(200);
    const result = await submit(page);
    expect(result.body).toMatchObject({ success: true, hostname: SHOP });
    expect(result.form['captcha-response']).toBe(proof);
  });

  it('slider by keyboard only: Enter on the checkbox, arrow keys, Enter', async () => {
    const key = await siteKey();
    addPage('/slider-keys', { key, attrs: 'data-puzzle-type="slider"' });
    const page = await newPage();
    const answers = captchaAnswers(page);
    await open('/slider-keys', SHOP, page);
    const frame = await widgetFrame(page);
    await frame.focus('#cb');
    await page.keyboard.press('Enter');
    await frame.waitForSelector('#pc', { state: 'visible' });
    expect(await frame.evaluate(() => document.activeElement?.id)).toBe('pc');
    const target = ((await answerOf(answers, '/v1/captcha/challenge')).body.params as { target: number }).target;
    for (let k = 0; k < Math.round(target / 4); k++) await page.keyboard.press('ArrowRight', { delay: 15 });
    expect(Math.abs(Number(await frame.getAttribute('#pc', 'aria-valuenow')) - target)).toBeLessThanOrEqual(2);
    await page.keyboard.press('Enter');
    await proofIn(page);
    expect((await submit(page)).body).toMatchObject({ success: true });
  });

  it('a host not on the allowlist: the widget says so (in its language and theme) and the error-callback gets domain_not_allowed', async () => {
    const key = await siteKey();
    addPage('/evil', { key, attrs: `data-language="fr" data-theme="dark" ${CALLBACKS}`, script: RECORDING });
    const page = await open('/evil', 'evil.example.test');
    const frame = await widgetFrame(page);
    expect(await frame.textContent('#lbl')).toBe('Je suis humain');
    expect(await frame.evaluate(() => document.documentElement.lang)).toBe('fr');
    expect(await page.getAttribute('iframe', 'title')).toBe('Vérification humaine');
    expect(await frame.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(31, 31, 31)');
    await frame.click('#cb');
    await page.waitForFunction(() => (window as unknown as { events: unknown[] }).events.length > 0);
    expect(await page.evaluate(() => (window as unknown as { events: unknown[] }).events)).toEqual([['error', 'domain_not_allowed']]);
    expect(await frame.textContent('#st')).toBe('Ce site n’est pas autorisé à utiliser ce captcha (domain_not_allowed).');
    expect(await frame.getAttribute('#cb', 'aria-checked')).toBe('false');
    expect(await page.locator(FIELD).inputValue()).toBe('');
  });

  it('a page with a strict CSP (script-src and frame-src the API only) works, with no violation', async () => {
    const key = await siteKey();
    const csp = `default-src 'none'; script-src ${apiOrigin}; frame-src ${apiOrigin}; form-action 'self'`;
    addPage('/csp', { key, headers: { 'content-security-policy': csp } });
    const context = await browser.newContext();
    contexts.push(context);
    // Injected by the driver (CSP does not apply to it), in the page and in the widget's frame.
    await context.addInitScript(() => {
      const seen: string[] = [];
      (window as unknown as { violations: string[] }).violations = seen;
      document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.effectiveDirective} ${e.blockedURI}`));
    });
    const page = await context.newPage();
    const logs: string[] = [];
    page.on('console', (m) => logs.push(`${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => logs.push(`pageerror: ${e.message}`));
    const response = await page.goto(`http://${SHOP}:${shopPort}/csp`);
    expect(response?.headers()['content-security-policy']).toBe(csp);
    const frame = await widgetFrame(page);
    expect((await page.request.get(`${apiLocal}/widget/frame.html`)).headers()['content-security-policy']).toContain("default-src 'none'");
    await frame.click('#cb');
    const proof = await proofIn(page);
    const result = await submit(page);
    expect(result.body).toMatchObject({ success: true });
    expect(result.form['captcha-response']).toBe(proof);
    expect(logs.filter((line) => /Content.Security.Policy|Refused to|pageerror/i.test(line))).toEqual([]);
    // The page navigated to the JSON answer; read the frame's and the widget page's records
    // before that, on a fresh load.
    await page.goto(`http://${SHOP}:${shopPort}/csp`);
    const again = await widgetFrame(page);
    await again.click('#cb');
    await proofIn(page);
    expect(await page.evaluate(() => (window as unknown as { violations: string[] }).violations)).toEqual([]);
    expect(await again.evaluate(() => (window as unknown as { violations: string[] }).violations)).toEqual([]);
  });

  it('managed mode: headless Chromium is refused (422 interactive_required), the widget falls back to a puzzle and gets a proof', async () => {
    const key = await siteKey({ managed: true });
    addPage('/managed', { key, attrs: 'data-mode="managed"' });
    const page = await newPage();
    const answers = captchaAnswers(page);
    await open('/managed', SHOP, page);
    const frame = await widgetFrame(page);
    // The managed check runs by itself about 1 s after render; its 422 (webdriver, headless)
    // leaves the widget waiting for a click.
    await frame.waitForFunction(() => document.getElementById('st')?.textContent === 'Click to verify.');
    const managed = await answerOf(answers, '/v1/captcha/managed');
    expect(managed.status).toBe(422);
    expect(managed.body).toMatchObject({ error_code: 'interactive_required', interactive_required: true });
    expect(await page.locator(FIELD).inputValue()).toBe('');
    await frame.click('#cb');
    const proof = await proofIn(page);
    await answerOf(answers, '/v1/captcha/verify');
    expect(answers.map((a) => `${a.path} ${a.status}`)).toEqual(['/v1/captcha/managed 422', '/v1/captcha/challenge 200', '/v1/captcha/verify 200']);
    const result = await submit(page);
    expect(result.body).toMatchObject({ success: true, mode: 'puzzle' });
    expect(result.form['captcha-response']).toBe(proof);
  });

  it('managed mode: a browser that does not look automated passes by itself, no click, no puzzle', async () => {
    const key = await siteKey({ managed: true });
    addPage('/managed-clean', { key, attrs: `data-mode="managed" ${CALLBACKS}`, script: RECORDING });
    // What a visitor's Chrome reports: no webdriver flag, no "HeadlessChrome" in the User-Agent.
    const context = await browser.newContext({
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    });
    contexts.push(context);
    await context.addInitScript(() => Object.defineProperty(Navigator.prototype, 'webdriver', { get: () => false }));
    const page = await context.newPage();
    const answers = captchaAnswers(page);
    const started = Date.now();
    await open('/managed-clean', SHOP, page);
    const proof = await proofIn(page);
    // It waited about a second after render before asking (an instant answer reads as a bot's).
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    const managed = await answerOf(answers, '/v1/captcha/managed');
    expect(managed.status).toBe(200);
    expect(managed.body).toMatchObject({ success: true, mode: 'managed', risk_level: 'low' });
    expect(answers.map((a) => a.path)).toEqual(['/v1/captcha/managed']);
    expect(await page.evaluate(() => (window as unknown as { events: unknown[] }).events)).toEqual([['callback', proof]]);
    const result = await submit(page);
    expect(result.body).toMatchObject({ success: true, mode: 'managed', hostname: SHOP });
  });

  it('explicit rendering: ?render=explicit&onload=, render, getResponse, reset, execute, isExpired, remove', async () => {
    const key = await siteKey();
    addPage('/explicit', {
      key,
      query: '?render=explicit&onload=captchaReady',
      body: `<div id="slot"></div><div class="seclookup-captcha" id="implicit" data-sitekey="${key.siteKey}"></div>`,
      script: `window.solved = [];
window.captchaReady = function () {
  window.widgetId = seclookupCaptcha.render('#slot', { sitekey: '${key.siteKey}', theme: 'light', callback: function (p) { window.solved.push(p); } });
};`,
    });
    const page = await open('/explicit');
    const frame = await widgetFrame(page);
    type Api = { seclookupCaptcha: Record<string, (id?: string) => unknown>; widgetId: string; solved: string[] };
    const call = (method: string) => page.evaluate((m) => (window as unknown as Api).seclookupCaptcha[m]((window as unknown as Api).widgetId), method);
    expect(await page.locator('#implicit iframe').count()).toBe(0);
    expect(await page.locator('#slot iframe').count()).toBe(1);
    expect(await call('getResponse')).toBe('');

    await frame.click('#cb');
    const first = await proofIn(page);
    expect(await call('getResponse')).toBe(first);
    expect(await call('isExpired')).toBe(false);
    expect(await page.evaluate(() => (window as unknown as Api).solved)).toEqual([first]);

    await call('reset');
    expect(await call('getResponse')).toBe('');
    expect(await page.locator(FIELD).inputValue()).toBe('');
    await frame.waitForFunction(() => document.getElementById('cb')?.getAttribute('aria-checked') === 'false');

    await call('execute'); // no click this time
    const second = await proofIn(page);
    expect(second).not.toBe(first);
    expect(await call('getResponse')).toBe(second);
    expect((await submit(page)).body).toMatchObject({ success: true });

    await open('/explicit', SHOP, page);
    await widgetFrame(page);
    await call('remove');
    expect(await page.locator('iframe').count()).toBe(0);
    expect(await page.locator(FIELD).count()).toBe(0);
  });

  it('without Worker (old browser) the frame solves pow on its main thread', async () => {
    const key = await siteKey();
    addPage('/no-worker', { key });
    const context = await browser.newContext();
    contexts.push(context);
    await context.addInitScript(() => {
      if (location.pathname.endsWith('/widget/frame.html')) (window as unknown as { Worker: unknown }).Worker = undefined;
    });
    const page = await context.newPage();
    await open('/no-worker', SHOP, page);
    const frame = await widgetFrame(page);
    await frame.click('#cb');
    await proofIn(page);
    expect(await frame.evaluate(() => typeof (window as unknown as { seclookupPow?: unknown }).seclookupPow)).toBe('object');
    expect((await submit(page)).body).toMatchObject({ success: true });
  });

  it('a proof expires after 300 s: the field is cleared, expired-callback runs, the widget asks again', async () => {
    const key = await siteKey();
    addPage('/expiry', { key, attrs: CALLBACKS, script: RECORDING });
    const page = await newPage();
    await page.clock.install();
    await open('/expiry', SHOP, page);
    const frame = await widgetFrame(page);
    await frame.click('#cb');
    const proof = await proofIn(page);
    await page.clock.fastForward(299_000);
    expect(await page.locator(FIELD).inputValue()).toBe(proof);
    await page.clock.fastForward(2_000);
    await page.waitForFunction((selector) => (document.querySelector(selector) as HTMLInputElement).value === '', FIELD);
    expect(await page.evaluate(() => (window as unknown as { events: unknown[] }).events)).toEqual([['callback', proof], ['expired']]);
    await frame.waitForFunction(() => document.getElementById('st')?.textContent === 'Expired. Click to verify again.');
    expect(await frame.getAttribute('#cb', 'aria-checked')).toBe('false');
    await frame.click('#cb');
    expect(await proofIn(page)).not.toBe(proof);
  });
});
