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
 *   server to server, and answer with the result. http://old.example.test:PORT2 redirects
 *   everything to the API (an old name of it kept as a 301).
 *
 * Time: the API's clock can be moved forward (apiSkewMs, never back), the page's with Playwright's
 * page.clock; faults (an API that hangs, a 429) are injected with page.route.
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
/** Added to the API's clock: a test moves it forward to age the challenges it has issued. */
let apiSkewMs = 0;
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
    if (req.headers.host?.startsWith('old.example.test:')) return send(301, '', { location: `${apiOrigin}${req.url}` });
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
  /** Where api.js is loaded from (default: the API's origin). */
  scriptOrigin?: string;
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
<script src="${options.scriptOrigin ?? apiOrigin}/widget/api.js${options.query ?? ''}" async defer></script>
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

/** What the page's callbacks recorded (RECORDING). */
function events(page: Page): Promise<unknown[]> {
  return page.evaluate(() => (window as unknown as { events: unknown[] }).events);
}

/** Once the widget's status line reads `text`. */
function statusIs(frame: Frame, text: string): Promise<unknown> {
  return frame.waitForFunction((t) => document.getElementById('st')?.textContent === t, text, { timeout: PROOF_TIMEOUT });
}

/** Drag the slider piece `distance` px to the right as a hand does: small steps, y jitter, slowing down near the end. */
async function dragPiece(page: Page, distance: number): Promise<void> {
  const piece = (await page.frameLocator('iframe[src*="/widget/frame.html"]').locator('#pc').boundingBox())!;
  const x0 = piece.x + piece.width / 2;
  const y0 = piece.y + piece.height / 2;
  await page.mouse.move(x0, y0);
  await page.mouse.down();
  const steps = 45;
  for (let k = 1; k <= steps; k++) {
    const eased = 1 - (1 - k / steps) ** 2.2; // fast at first, slowing towards the slot
    await page.mouse.move(x0 + distance * eased, y0 + Math.sin(k * 1.7) * 1.5 + (Math.random() - 0.5));
    await page.waitForTimeout(k > steps * 0.8 ? 25 : 10);
  }
  await page.mouse.move(x0 + distance, y0 + 0.5);
  await page.mouse.up();
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
  const api = createApi({ lookup: createLookup(), meter, secret: 'widget-test-operator-secret-0123456789abcdef', now: () => Date.now() + apiSkewMs });
  apiServer = handleClientErrors(createServer(createListener(api)), api);
  const apiPort = await listen(apiServer);
  apiOrigin = `http://api.example.test:${apiPort}`;
  apiLocal = `http://127.0.0.1:${apiPort}`;
  shopServer = shop();
  shopPort = await listen(shopServer);
  browser = await chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--host-resolver-rules=MAP *.example.test 127.0.0.1, MAP example.test 127.0.0.1'],
    // Playwright turns the back/forward cache off; a visitor's browser has it.
    ignoreDefaultArgs: ['--disable-back-forward-cache'],
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

    await frame.click('#cb');
    const proof = await proofIn(page);
    expect(proof.length).toBeGreaterThan(20);
    expect(proof.length).toBeLessThanOrEqual(2048);
    expect(await page.evaluate(() => (window as unknown as { events: unknown[] }).events)).toEqual([['callback', proof]]);
    expect(await frame.getAttribute('#cb', 'aria-checked')).toBe('true');
    expect(await frame.textContent('#st')).toBe('Verified');
    expect(await frame.getAttribute('#pg', 'aria-valuenow')).toBe('100');

    // The puzzle the page was given (`bench/captcha-risk.ts` times its solving in this browser, per risk level).
    const challenge = await answerOf(answers, '/v1/captcha/challenge');
    expect(challenge.body).toMatchObject({ puzzle_type: 'pow', params: { algorithm: 'sha256', difficulty: 14, count: 8 } });

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
    await dragPiece(page, target);

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

  it("loader: a widget's data-api-base is ignored; an apiBase that is not http(s) renders nothing (invalid_api_base); callback names are the page's own globals, never evaluated; api.js loaded twice runs each onload", async () => {
    const key = await siteKey();
    const hostile = "javascript:parent.document.title='pwned';//";
    addPage('/loader', {
      key,
      query: '?onload=firstReady',
      // What a sanitizer keeps (class and data-*) is enough to set these: the frame would be the
      // attacker's, its messages believed, its "proof" handed to window.open.
      body: `<div class="seclookup-captcha" id="good" data-sitekey="${key.siteKey}" data-callback="setTimeout" data-error-callback="onFailed"></div>
<div class="seclookup-captcha" id="js" data-sitekey="${key.siteKey}" data-api-base="${hostile}" data-error-callback="onFailed"></div>
<div class="seclookup-captcha" id="evil" data-sitekey="${key.siteKey}" data-api-base="http://evil.example.test:1" data-callback="open"></div>
<div id="explicit-js"></div><div id="explicit-data"></div>
<script src="${apiOrigin}/widget/api.js?render=explicit&onload=secondReady" async></script>`,
      script: `${RECORDING}
window.firstReady = function () {
  window.events.push(['onload', 'first']);
  // The page's own code may set apiBase; still http(s) only. "constructor" is inherited: refused, not thrown.
  window.events.push(['render', String(seclookupCaptcha.render('#explicit-js', { sitekey: '${key.siteKey}', apiBase: "${hostile}", errorCallback: 'onFailed' }))]);
  seclookupCaptcha.render('#explicit-data', { sitekey: '${key.siteKey}', apiBase: 'data:text/html,pwned', errorCallback: 'constructor' });
};
window.secondReady = function () { window.events.push(['onload', 'second']); };`,
    });
    const page = await newPage();
    const problems: string[] = [];
    const consoleErrors: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
    await open('/loader', SHOP, page);
    await page.frameLocator('#good iframe').locator('#cb').waitFor();
    const frame = (await (await page.$('#good iframe'))!.contentFrame())!;
    await page.waitForFunction(() => (window as unknown as { events: unknown[] }).events.length >= 4);
    expect(await page.title()).toBe('Shop');
    // The three widgets' frames all come from the API: a widget's data-api-base counts for nothing.
    const frames = await page.locator('iframe').evaluateAll((list) => list.map((f) => (f as HTMLIFrameElement).src.split('/widget/')[0]));
    expect(frames).toEqual([apiOrigin, apiOrigin, apiOrigin]);
    expect(consoleErrors.filter((line) => line.includes("a widget's data-api-base is ignored"))).toHaveLength(2);
    // Both copies' onload ran (in either order: both scripts are async).
    expect([...(await events(page))].sort()).toEqual([
      ['error', 'invalid_api_base'],
      ['onload', 'first'],
      ['onload', 'second'],
      ['render', 'null'],
    ]);
    expect(consoleErrors.filter((line) => line.includes('is not http(s)'))).toHaveLength(2);
    expect(consoleErrors).toContain('seclookup captcha: refused callback "constructor"');

    // data-callback="setTimeout" would run the proof as code: refused, said on the console.
    await frame.click('#cb');
    await proofIn(page);
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 50)));
    expect(problems).toEqual([]);
    expect(consoleErrors).toContain('seclookup captcha: refused callback "setTimeout"');
    expect((await events(page)).filter((e) => (e as string[])[0] === 'callback')).toEqual([]);
    // Three widgets in one form: each wrote a field of its own, and the console said to name them apart.
    expect(await page.locator('input[name="captcha-response"]').count()).toBe(3);
    expect(consoleErrors.filter((line) => line.includes('two widgets in one form share the field "captcha-response"'))).toHaveLength(2);
  });

  it("a frame at the page's own apiBase is believed only for a proof's or an error code's characters: a javascript: URL or markup reaches no callback", async () => {
    const key = await siteKey();
    // A frame that answers as the widget's would, at the base the page's code named.
    pages.set('/fake/widget/frame.html', {
      html: `<!doctype html><script>
var q = new URLSearchParams(location.hash.slice(1)), say = function (m) { m.seclookup = 'captcha'; m.id = q.get('id'); parent.postMessage(m, q.get('origin')); };
say({ type: 'ready' });
say({ type: 'success', proof: "javascript:opener.document.title='pwned'" });
say({ type: 'error', code: '<img src=x onerror=document.title=1>' });
say({ type: 'error' });
</script>`,
      secret: '',
    });
    addPage('/own-base', {
      key,
      query: '?render=explicit&onload=mount',
      body: '<div id="w"></div>',
      script: `${RECORDING}
window.mount = function () { seclookupCaptcha.render('#w', { sitekey: '${key.siteKey}', apiBase: location.origin + '/fake', callback: 'onSolved', errorCallback: 'onFailed' }); };`,
    });
    const page = await open('/own-base');
    await page.waitForFunction(() => (window as unknown as { events: unknown[] }).events.length >= 2);
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 100)));
    expect(await events(page)).toEqual([
      ['error', 'invalid_message'],
      ['error', 'invalid_message'],
    ]);
    expect(await page.locator(FIELD).inputValue()).toBe('');
    expect(await page.title()).toBe('Shop');
  });

  it('a single-page app drops widgets without remove(): getResponse and execute skip them; their proofs still expire, with the expired-callback and no error', async () => {
    const key = await siteKey();
    addPage('/spa', {
      key,
      query: '?render=explicit&onload=mount',
      body: '<div id="app"></div>',
      // The app's router replaces its view, as React or Vue do, and never calls remove().
      script: `window.log = [];
window.mount = function (tag) {
  tag = typeof tag === 'string' ? tag : 'A';
  document.getElementById('app').innerHTML = '<div id="view' + tag + '"></div>';
  seclookupCaptcha.render('#view' + tag, {
    sitekey: '${key.siteKey}',
    callback: function () { window.log.push('callback ' + tag); },
    'expired-callback': function () { window.log.push('expired ' + tag); },
  });
};`,
    });
    type Spa = { seclookupCaptcha: { getResponse(): string; execute(): void }; mount(tag: string): void; log: string[] };
    const page = await newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await page.clock.install();
    await open('/spa', SHOP, page);
    await (await widgetFrame(page)).click('#cb');
    const first = await proofIn(page);

    await page.evaluate(() => (window as unknown as Spa).mount('B'));
    const b = (await (await page.waitForSelector('#viewB iframe')).contentFrame())!;
    await b.waitForSelector('#cb');
    expect(await page.evaluate(() => (window as unknown as Spa).seclookupCaptcha.getResponse())).toBe('');
    expect(
      await page.evaluate(() => {
        try {
          (window as unknown as Spa).seclookupCaptcha.execute();
          return 'ok';
        } catch (e) {
          return String(e);
        }
      }),
    ).toBe('ok');
    const second = await proofIn(page);
    expect(second).not.toBe(first);
    expect(await page.evaluate(() => (window as unknown as Spa).seclookupCaptcha.getResponse())).toBe(second);

    // B's view goes too, with nobody asking about it after; 300 s on, both proofs expire.
    await page.evaluate(() => (window as unknown as Spa).mount('C'));
    await page.clock.fastForward(301_000);
    await expect.poll(() => page.evaluate(() => (window as unknown as Spa).log)).toEqual(['callback A', 'callback B', 'expired A', 'expired B']);
    expect(problems).toEqual([]);
  });

  it('an API that never answers, an absurd proof of work, a 429 with Retry-After: each ends in a message, and a click (after the wait) tries again', async () => {
    const key = await siteKey();
    addPage('/faults', { key, attrs: CALLBACKS, script: RECORDING });
    const page = await newPage();
    await page.clock.install();
    let mode: 'hang' | 'absurd' | 'busy' | 'real' = 'hang';
    let challenges = 0;
    await page.route('**/v1/captcha/challenge?*', (route) => {
      challenges++;
      if (mode === 'real') return route.continue();
      if (mode === 'absurd') {
        const params = { algorithm: 'sha256', salt: '0'.repeat(32), difficulty: 40, count: 8 };
        return route.fulfill({ json: { success: true, challenge: 'x.y', puzzle_type: 'pow', params, expires_in: 120 } });
      }
      if (mode === 'busy') return route.fulfill({ status: 429, headers: { 'retry-after': '30' }, json: { success: false, error_code: 'rate_limit_exceeded' } });
      // 'hang': never answered
    });
    await open('/faults', SHOP, page);
    const frame = await widgetFrame(page);

    await frame.click('#cb');
    await expect.poll(() => challenges).toBe(1);
    await page.clock.fastForward(15_000);
    await statusIs(frame, 'Network error. Click to try again.');
    expect(await frame.getAttribute('#w', 'aria-busy')).toBe('false');

    mode = 'absurd'; // 2^40 hashes per puzzle: the service asks 2^18 at most
    await frame.click('#cb');
    await statusIs(frame, 'Verification failed (solver_error). Click to try again.');

    mode = 'busy';
    await frame.click('#cb');
    await statusIs(frame, 'Too many attempts. You can try again in 30 s.');
    expect(await frame.getAttribute('#cb', 'aria-disabled')).toBe('true');
    await frame.click('#cb', { force: true }); // too early: nothing starts
    expect(await frame.textContent('#st')).toBe('Too many attempts. You can try again in 30 s.');
    await page.clock.fastForward(30_000);
    await statusIs(frame, 'Click to verify.');
    expect(await frame.getAttribute('#cb', 'aria-disabled')).toBeNull();

    mode = 'real';
    await frame.click('#cb');
    const proof = await proofIn(page);
    // One request each: a timeout is not retried, the early click asked nothing.
    expect(challenges).toBe(4);
    expect(await events(page)).toEqual([
      ['error', 'network_error'],
      ['error', 'solver_error'],
      ['error', 'rate_limit_exceeded'],
      ['callback', proof],
    ]);
  });

  it('slider on a 320 px phone: execute() leaves the focus where the visitor types; the track fits; a screen reader hears where the slot is; a stale challenge is renewed, not "Not quite"; a drag on the narrow track solves it', async () => {
    const key = await siteKey();
    addPage('/slider-phone', { key, attrs: 'data-puzzle-type="slider"' });
    const context = await browser.newContext({ viewport: { width: 320, height: 640 } });
    contexts.push(context);
    const page = await context.newPage();
    const answers = captchaAnswers(page);
    await open('/slider-phone', SHOP, page);
    const frame = await widgetFrame(page);
    const challenge = async (n: number) => {
      await expect.poll(() => answers.filter((a) => a.path === '/v1/captcha/challenge').length, { timeout: PROOF_TIMEOUT }).toBeGreaterThanOrEqual(n);
      return answers.filter((a) => a.path === '/v1/captcha/challenge')[n - 1].body.params as { target: number };
    };

    // The page starts the puzzle while the visitor types in another field: the typing goes on there.
    const email = page.locator('input[name="email"]');
    await email.fill('');
    await email.pressSequentially('alice@exa');
    await page.evaluate(() => (window as unknown as { seclookupCaptcha: { execute(): void } }).seclookupCaptcha.execute());
    await frame.waitForSelector('#pc', { state: 'visible' });
    await page.keyboard.type('mple.com');
    expect(await email.inputValue()).toBe('alice@example.com');
    expect(await frame.evaluate(() => document.activeElement?.id)).not.toBe('pc');

    // The track is drawn narrower than its 300 puzzle px, whole in the frame.
    const layout = await frame.evaluate(() => ({
      frame: innerWidth,
      track: document.getElementById('tr')!.getBoundingClientRect().right,
      slot: document.getElementById('no')!.getBoundingClientRect().right,
    }));
    expect(layout.frame).toBeLessThan(322);
    expect(layout.track).toBeLessThanOrEqual(layout.frame);
    expect(layout.slot).toBeLessThanOrEqual(layout.track);

    const first = await challenge(1);
    expect(await frame.getAttribute('#pc', 'aria-valuetext')).toBe(`Piece at 0, slot at ${first.target}`);

    // The visitor comes to it (a click on the checkbox focuses the piece) and solves it by
    // keyboard, after its challenge expired (120 s: the API's clock moves on).
    await frame.click('#cb');
    expect(await frame.evaluate(() => document.activeElement?.id)).toBe('pc');
    apiSkewMs += 121_000;
    for (let k = 0; k < Math.round(first.target / 4); k++) await page.keyboard.press('ArrowRight', { delay: 15 });
    const at = Number(await frame.getAttribute('#pc', 'aria-valuenow'));
    expect(Math.abs(at - first.target)).toBeLessThanOrEqual(2);
    expect(await frame.getAttribute('#pc', 'aria-valuetext')).toBe(`Piece at ${at}, slot at ${first.target}`);
    await page.keyboard.press('Enter');
    const second = await challenge(2);
    expect((await answerOf(answers, '/v1/captcha/verify')).body).toMatchObject({ error_code: 'invalid_token' });
    await statusIs(frame, 'That puzzle expired; here is a new one. Drag the piece into the outlined slot, or use the arrow keys, then Enter.');
    expect(await frame.getAttribute('#pc', 'aria-valuetext')).toBe(`Piece at 0, slot at ${second.target}`);

    // Dragged onto the slot as drawn (about 0.9 px per puzzle px here).
    const fl = page.frameLocator('iframe[src*="/widget/frame.html"]');
    const piece = (await fl.locator('#pc').boundingBox())!;
    const slot = (await fl.locator('#no').boundingBox())!;
    await dragPiece(page, slot.x - piece.x);
    await proofIn(page);
    // The recorder keeps an answer once its body is read, which can come after the proof is in the form.
    await expect.poll(() => answers.filter((a) => a.path === '/v1/captcha/verify').map((a) => a.status), { timeout: PROOF_TIMEOUT }).toEqual([400, 200]);
    expect((await submit(page)).body).toMatchObject({ success: true });
  });

  it('back/forward cache: back on the page after its proof was used, the widget is reset: an empty field, and a press verifies again', async () => {
    const key = await siteKey();
    addPage('/bfcache', { key, script: 'window.shows = []; addEventListener("pageshow", function (e) { window.shows.push(e.persisted); });' });
    pages.set('/elsewhere', { html: '<!doctype html><title>Elsewhere</title><p>Elsewhere</p>', secret: '' });
    const page = await newPage();
    await open('/bfcache', SHOP, page);
    await (await widgetFrame(page)).click('#cb');
    const proof = await proofIn(page);
    expect((await siteverify(key.secretKey, proof)).status).toBe(200); // the form went to the server
    await open('/elsewhere', SHOP, page);
    await page.goBack({ waitUntil: 'commit' }); // a page from the cache fires no load event
    // Restored from the cache, not loaded again.
    expect(await page.evaluate(() => (window as unknown as { shows: boolean[] }).shows)).toEqual([false, true]);
    expect(await page.locator(FIELD).inputValue()).toBe('');
    expect(await page.evaluate(() => (window as unknown as { seclookupCaptcha: { getResponse(): string } }).seclookupCaptcha.getResponse())).toBe('');
    // Playwright does not see the frames of a page restored from the cache: the visitor's keyboard
    // reaches the checkbox (Tab from the e-mail field), and Space verifies again.
    await page.focus('input[name="email"]');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    expect(await proofIn(page)).not.toBe(proof);
  });

  it('api.js through a redirect to another origin: the widget says it is misconfigured, the error callback gets origin_mismatch; messages from other windows are still ignored', async () => {
    const key = await siteKey();
    // Another frame on the page forging the widget's messages, with its id.
    pages.set('/forger', {
      html: `<!doctype html><title>Forger</title><script>
var n = 0, timer = setInterval(function () {
  parent.postMessage({ seclookup: 'captcha', id: 'seclookup-captcha-1', type: 'success', proof: 'forged' }, '*');
  parent.postMessage({ seclookup: 'captcha', id: 'seclookup-captcha-1', type: 'error', code: 'forged' }, '*');
  if (++n === 10) { clearInterval(timer); window.done = true; }
}, 100);
</script>`,
      secret: '',
    });
    addPage('/redirected', {
      key,
      script: RECORDING,
      scriptOrigin: `http://old.example.test:${shopPort}`,
      body: `<div class="seclookup-captcha" data-sitekey="${key.siteKey}" ${CALLBACKS}></div><iframe src="http://evil.example.test:${shopPort}/forger"></iframe>`,
    });
    const page = await newPage();
    const consoleErrors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
    await open('/redirected', SHOP, page);
    const frame = await widgetFrame(page);
    expect(frame.url().startsWith(`${apiOrigin}/widget/frame.html`)).toBe(true);
    await statusIs(frame, 'This captcha is misconfigured (origin_mismatch).');
    await page.waitForFunction(() => (window as unknown as { events: unknown[] }).events.length > 0);
    const forger = page.frames().find((f) => f.url().endsWith('/forger'))!;
    await forger.waitForFunction(() => (window as unknown as { done?: boolean }).done === true);
    await frame.click('#cb');
    expect(await frame.textContent('#st')).toBe('This captcha is misconfigured (origin_mismatch).');
    expect(await events(page)).toEqual([['error', 'origin_mismatch']]);
    expect(await page.locator(FIELD).inputValue()).toBe('');
    expect(consoleErrors.some((line) => line.includes(`the frame is at ${apiOrigin}, not http://old.example.test:${shopPort}`))).toBe(true);
  });

  it('sanitized markup that clobbers document.currentScript (<img name>) or window.seclookupCaptcha (<a id>) neither moves the frame to its own base nor stops the widgets', async () => {
    const key = await siteKey();
    // The attacker's frame, at the base its markup names: it claims a proof at once.
    pages.set('/phish/widget/frame.html', {
      html: `<!doctype html><title>Phish</title><script>
var q = new URLSearchParams(location.hash.slice(1)), say = function (m) { m.seclookup = 'captcha'; m.id = q.get('id'); parent.postMessage(m, q.get('origin')); };
say({ type: 'ready' });
say({ type: 'success', proof: 'forged.proof' });
</script><p>Sign in again to continue: <input type="password"></p>`,
      secret: '',
    });
    // What a sanitizer that keeps name on img (DOMPurify's default drops it, many others do not) lets through.
    addPage('/clobber-script', {
      key,
      script: RECORDING,
      body: `<img name="currentScript" alt="" data-api-base="http://evil.example.test:${shopPort}/phish">
<div class="seclookup-captcha" data-sitekey="${key.siteKey}" ${CALLBACKS}></div>`,
    });
    const page = await open('/clobber-script');
    await page.waitForSelector('.seclookup-captcha iframe', { state: 'attached' });
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)));
    expect(await events(page)).toEqual([]);
    expect((await page.getAttribute('.seclookup-captcha iframe', 'src'))!.split('/widget/')[0]).toBe(apiOrigin);
    const frame = await widgetFrame(page);
    await frame.click('#cb');
    const proof = await proofIn(page);
    expect(proof).not.toBe('forged.proof');
    expect(await events(page)).toEqual([['callback', proof]]);

    // Two links with one id (and one named "version"): what DOMPurify's default keeps. Named
    // access makes window.seclookupCaptcha a collection whose .version is the second link.
    addPage('/clobber-global', {
      key,
      script: RECORDING,
      body: `<a id="seclookupCaptcha" href="#a">a</a><a id="seclookupCaptcha" name="version" href="#b">b</a>
<div class="seclookup-captcha" data-sitekey="${key.siteKey}" ${CALLBACKS}></div>`,
    });
    const other = await newPage();
    const problems: string[] = [];
    other.on('pageerror', (e) => problems.push(e.message));
    await open('/clobber-global', SHOP, other);
    await (await widgetFrame(other)).click('#cb');
    await proofIn(other);
    expect(await other.evaluate(() => typeof (window as unknown as { seclookupCaptcha: { render: unknown } }).seclookupCaptcha.render)).toBe('function');
    expect(problems).toEqual([]);
  });

  it('reset() while the visitor drags the slider: the release that follows throws nothing, and the next puzzle starts clean', async () => {
    const key = await siteKey();
    addPage('/slider-reset', { key, attrs: 'data-puzzle-type="slider"' });
    const context = await browser.newContext();
    contexts.push(context);
    // In every frame: the widget's own uncaught errors.
    await context.addInitScript(() => {
      const seen: string[] = [];
      (window as unknown as { errors: string[] }).errors = seen;
      addEventListener('error', (e) => seen.push(e.message));
    });
    const page = await context.newPage();
    await open('/slider-reset', SHOP, page);
    const frame = await widgetFrame(page);
    await frame.click('#cb');
    await frame.waitForSelector('#pc', { state: 'visible' });
    const piece = (await page.frameLocator('iframe[src*="/widget/frame.html"]').locator('#pc').boundingBox())!;
    await page.mouse.move(piece.x + piece.width / 2, piece.y + piece.height / 2);
    await page.mouse.down();
    for (let k = 1; k <= 10; k++) await page.mouse.move(piece.x + piece.width / 2 + k * 6, piece.y + piece.height / 2 + (k % 2));
    await page.evaluate(() => (window as unknown as { seclookupCaptcha: { reset(): void } }).seclookupCaptcha.reset());
    await frame.waitForSelector('#pc', { state: 'hidden' });
    await page.mouse.up();
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 100)));
    expect(await frame.evaluate(() => (window as unknown as { errors: string[] }).errors)).toEqual([]);
    expect(await frame.textContent('#st')).toBe('');
    await frame.click('#cb');
    await frame.waitForSelector('#pc', { state: 'visible' });
    expect(await frame.getAttribute('#pc', 'aria-valuenow')).toBe('0');
    expect(await frame.evaluate(() => (window as unknown as { errors: string[] }).errors)).toEqual([]);
  });

  it('a widget rendered in a shadow root (a web component) is in the page: getResponse, reset and execute reach it', async () => {
    const key = await siteKey();
    addPage('/shadow', {
      key,
      query: '?render=explicit&onload=mount',
      body: '<div id="host"></div>',
      script: `window.solved = [];
window.mount = function () {
  var root = document.getElementById('host').attachShadow({ mode: 'open' });
  var slot = document.createElement('div');
  root.appendChild(slot);
  window.widgetId = seclookupCaptcha.render(slot, { sitekey: '${key.siteKey}', callback: function (p) { window.solved.push(p); } });
};`,
    });
    type Api = { seclookupCaptcha: Record<string, (id?: string) => unknown>; widgetId: string; solved: string[] };
    const page = await open('/shadow');
    const call = (method: string) => page.evaluate((m) => (window as unknown as Api).seclookupCaptcha[m]((window as unknown as Api).widgetId), method);
    await page.waitForFunction(() => document.getElementById('host')!.shadowRoot!.querySelector('iframe'));
    const frame = (await (await page.locator('#host iframe').elementHandle())!.contentFrame())!;
    await frame.waitForSelector('#cb');
    await frame.click('#cb');
    await page.waitForFunction(() => (window as unknown as Api).solved.length === 1, undefined, { timeout: PROOF_TIMEOUT });
    const proof = await page.evaluate(() => (window as unknown as Api).solved[0]);
    expect(await call('getResponse')).toBe(proof);
    await call('reset');
    await frame.waitForFunction(() => document.getElementById('cb')?.getAttribute('aria-checked') === 'false');
    await call('execute');
    await page.waitForFunction(() => (window as unknown as Api).solved.length === 2, undefined, { timeout: PROOF_TIMEOUT });
    expect(await call('getResponse')).toBe(await page.evaluate(() => (window as unknown as Api).solved[1]));
  });
});
