/**
 * The captcha's proof of work per risk level, solved by the real widget in headless Chromium
 * (test/browser/captcha-site.ts): three browsers the risk scoring rates low (a visitor's
 * User-Agent, no webdriver flag: 0), medium (the webdriver flag alone: 40) and high (plain
 * headless Chromium: webdriver 40 + HeadlessChrome 30 = 70). For each, RUNS clicks on the widget;
 * printed: the difficulty the server chose, the solve time in the widget's Worker (challenge
 * answer to verify request) and click to proof in the form, medians with min and max.
 *
 *   node --import tsx bench/captcha-risk.ts [RUNS]     (default 9; needs /usr/bin/chromium)
 *
 * Not part of `npm run bench`: it prints times, not ratios against a baseline.
 */
import { createSiteKey } from '../src/products/captcha/site-keys.js';
import { SHOP, VISITOR_USER_AGENT, startCaptchaSite } from '../test/browser/captcha-site.js';

const RUNS = Number(process.argv[2] ?? 9);

const BROWSERS = [
  { level: 'low', options: { userAgent: VISITOR_USER_AGENT, hideWebdriver: true } },
  { level: 'medium', options: { userAgent: VISITOR_USER_AGENT } },
  { level: 'high', options: {} },
] as const;

function summary(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `${sorted[Math.floor(sorted.length / 2)]} ms (${sorted[0]}-${sorted[sorted.length - 1]})`;
}

async function main(): Promise<void> {
  const site = await startCaptchaSite();
  const lines = [
    '| risk level (score) | pow difficulty x count | expected SHA-256 | solve in the Worker, median (min-max) | click to proof, median (min-max) |',
    '|---|---|---:|---|---|',
  ];
  try {
    for (const browser of BROWSERS) {
      // The limit off: only the solve is measured here.
      const key = await createSiteKey(site.meter, { domains: [SHOP], risk: { blockAt: null }, plan: 'enterprise' });
      const solves: number[] = [];
      const clicks: number[] = [];
      let shown = '';
      for (let run = 0; run < RUNS; run++) {
        const page = await site.newPage(browser.options);
        // A person's pause before clicking: the "too fast" signal would move the medium browser to high.
        const solved = await site.solve(page, key.siteKey, { timeoutMs: 120_000, pauseMs: 500 });
        const params = solved.challenge.params as { difficulty: number; count: number };
        if (solved.verify.risk_level !== browser.level)
          throw new Error(`expected risk level ${browser.level}, the server saw ${String(solved.verify.risk_level)}`);
        shown = `| ${browser.level} (${String(solved.verify.risk_score)}) | ${params.difficulty} x ${params.count} | ${(params.count * 2 ** params.difficulty).toLocaleString('en-US')} `;
        solves.push(solved.solveMs);
        clicks.push(solved.clickToProofMs);
        await page.context().close();
      }
      lines.push(`${shown}| ${summary(solves)} | ${summary(clicks)} |`);
      console.error(lines[lines.length - 1]);
    }
  } finally {
    await site.close();
  }
  console.log(lines.join('\n'));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
