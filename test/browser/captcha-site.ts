/**
 * A captcha site on loopback for headless Chromium (found by chromium.ts, driven by
 * playwright-core): the API (createApi + createListener, memory meter) at
 * http://api.example.test:PORT, and a page server at http://shop.example.test:PORT2 whose
 * `/?k=<site key>` page holds the README's two-line snippet. The browser maps *.example.test to
 * 127.0.0.1. Used by captcha-risk.test.ts and bench/captcha-risk.ts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import { createListener, handleClientErrors } from '../../adapters/node.js';
import { createApi } from '../../src/api/create-api.js';
import { createLookup } from '../../src/lookup.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import type { Meter } from '../../src/metering/types.js';
import { requireChromium } from './chromium.js';

export const SHOP = 'shop.example.test';
const FIELD = 'input[name="captcha-response"]';

/** What a visitor's Chrome reports: no "HeadlessChrome" in the User-Agent, no webdriver flag (with NOT_WEBDRIVER). */
export const VISITOR_USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

export interface CaptchaSite {
  meter: Meter;
  browser: Browser;
  /** A new page in a new context (closed by `close`). `hideWebdriver`: navigator.webdriver reads false. */
  newPage(options?: BrowserContextOptions & { hideWebdriver?: boolean }): Promise<Page>;
  /**
   * Open the shop page for `siteKey`, click the widget (after `pauseMs`: a click within 300 ms of
   * render adds the "too fast" signal), and wait for the proof in the form.
   */
  solve(page: Page, siteKey: string, options?: { timeoutMs?: number; pauseMs?: number }): Promise<SolvedPage>;
  siteverify(secret: string, response: string): Promise<{ status: number; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

export interface SolvedPage {
  proof: string;
  /** The JSON answers of /v1/captcha/challenge and /verify as the widget got them. */
  challenge: Record<string, unknown>;
  verify: Record<string, unknown>;
  /** Milliseconds from the challenge's answer to the verify request: the solve in the widget's Worker. */
  solveMs: number;
  /** Milliseconds from the click to the proof in the form. */
  clickToProofMs: number;
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function stop(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export async function startCaptchaSite(): Promise<CaptchaSite> {
  const executablePath = requireChromium();
  const meter = createMemoryMeter();
  const api = createApi({ lookup: createLookup(), meter, secret: 'risk-test-operator-secret-0123456789abcdef' });
  const apiServer = handleClientErrors(createServer(createListener(api)), api);
  const apiPort = await listen(apiServer);
  const apiOrigin = `http://api.example.test:${apiPort}`;
  const apiLocal = `http://127.0.0.1:${apiPort}`;
  const shopServer = createServer((req, res) => {
    const key = new URL(req.url ?? '/', 'http://shop').searchParams.get('k') ?? '';
    const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head><body>
<form method="post" action="/submit"><div class="seclookup-captcha" data-sitekey="${key.replace(/[^A-Za-z0-9_-]/g, '')}"></div><button>Send</button></form>
<script src="${apiOrigin}/widget/api.js" async defer></script></body></html>`;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': String(Buffer.byteLength(html)) });
    res.end(html);
  });
  const shopPort = await listen(shopServer);
  const browser = await chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--host-resolver-rules=MAP *.example.test 127.0.0.1'],
  });
  const contexts: { close(): Promise<void> }[] = [];

  return {
    meter,
    browser,
    async newPage(options = {}) {
      const { hideWebdriver, ...contextOptions } = options;
      const context = await browser.newContext(contextOptions);
      contexts.push(context);
      // As text: a function would be rewritten by tsx (bench/) with helpers the page does not have.
      if (hideWebdriver) await context.addInitScript({ content: "Object.defineProperty(Navigator.prototype, 'webdriver', { get: () => false });" });
      return context.newPage();
    },
    async solve(page, siteKey, { timeoutMs = 30_000, pauseMs = 0 } = {}) {
      const answers = new Map<string, Promise<Record<string, unknown>>>();
      const sentAt = new Map<string, number>();
      page.on('request', (request) => {
        const path = new URL(request.url()).pathname;
        if (path.startsWith('/v1/captcha/') && request.method() !== 'OPTIONS' && !sentAt.has(path)) sentAt.set(path, Date.now());
      });
      const answeredAt = new Map<string, number>();
      page.on('response', (response) => {
        const path = new URL(response.url()).pathname;
        if (!path.startsWith('/v1/captcha/') || response.request().method() === 'OPTIONS' || answers.has(path)) return;
        answeredAt.set(path, Date.now());
        answers.set(path, response.json() as Promise<Record<string, unknown>>);
      });
      await page.goto(`http://${SHOP}:${shopPort}/?k=${siteKey}`);
      await page.frameLocator('iframe[src*="/widget/frame.html"]').locator('#cb').waitFor();
      const frame = page.frames().find((f) => f.url().includes('/widget/frame.html'))!;
      if (pauseMs > 0) await page.waitForTimeout(pauseMs);
      const clicked = Date.now();
      await frame.click('#cb');
      const handle = await page
        .waitForFunction((selector) => (document.querySelector(selector) as HTMLInputElement | null)?.value || false, FIELD, { timeout: timeoutMs })
        .catch(async (error: Error) => {
          throw new Error(`no proof in the form: ${error.message}; the widget says ${JSON.stringify(await frame.textContent('#st'))}`);
        });
      const clickToProofMs = Date.now() - clicked;
      const proof = (await handle.jsonValue()) as string;
      return {
        proof,
        challenge: await answers.get('/v1/captcha/challenge')!,
        verify: await answers.get('/v1/captcha/verify')!,
        solveMs: sentAt.get('/v1/captcha/verify')! - answeredAt.get('/v1/captcha/challenge')!,
        clickToProofMs,
      };
    },
    async siteverify(secret, response) {
      const res = await fetch(`${apiLocal}/v1/captcha/siteverify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ secret, response }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    async close() {
      await Promise.all(contexts.splice(0).map((context) => context.close()));
      await browser.close();
      await Promise.all([stop(apiServer), stop(shopServer)]);
    },
  };
}
