/**
 * `seclookup openapi --batch-limit N`: the document a serve with the same batch limit answers at
 * /v1/openapi.json (the batch routes' maxItems), the limit checked as serve checks it.
 */
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { createTempDirs, runCli, runCliJson } from './harness.js';
import { running, startServe } from './serve-process.js';

const temp = createTempDirs();
afterEach(async () => {
  for (const serve of running) await serve.stop('SIGKILL');
});
afterAll(() => temp.cleanup());

type Document = { paths: Record<string, Record<string, any>> };

/** Each batch route's maxItems, by path. */
function batchMaxItems(doc: Document): Record<string, number> {
  return Object.fromEntries(
    Object.entries(doc.paths)
      .filter(([path]) => path.endsWith('/batch'))
      .map(([path, item]) => [path, item.post.requestBody.content['application/json'].schema.properties.inputs.maxItems]),
  );
}

it('prints the document a serve with the same --batch-limit answers at /v1/openapi.json', async () => {
  const { serve, baseUrl } = await startServe(join(temp.make(), 'serve.db'), { args: ['--batch-limit', '150'] });
  const served = (await (await fetch(`${baseUrl}/v1/openapi.json`)).json()) as Document;
  await serve.stop('SIGTERM');

  const printed = await runCliJson<Document>(['openapi', '--batch-limit', '150']);
  expect(printed).toEqual(served);
  const maxItems = Object.values(batchMaxItems(printed));
  expect(maxItems).toHaveLength(13);
  expect(new Set(maxItems)).toEqual(new Set([150]));
  // Without the flag: serve's default.
  expect(new Set(Object.values(batchMaxItems(await runCliJson<Document>(['openapi', '--compact']))))).toEqual(new Set([100]));
}, 60_000);

it('refuses a --batch-limit serve refuses, with the same message (exit 2)', async () => {
  const db = join(temp.make(), 'serve.db');
  for (const limit of ['0', '10001', 'many', '1.5']) {
    const printed = await runCli(['openapi', '--batch-limit', limit]);
    const served = await runCli(['serve', '--port', '0', '--db', db, '--batch-limit', limit]);
    const message = `--batch-limit must be a whole number from 1 to 10000 (got "${limit}")`;
    expect([printed.code, printed.stdout], limit).toEqual([2, '']);
    expect(printed.stderr, limit).toContain(message);
    expect([served.code, served.stderr.includes(message)], limit).toEqual([2, true]);
  }
  expect(
    JSON.parse((await runCli(['openapi', '--batch-limit', '10000'])).stdout).paths['/v1/geoip/batch'].post.requestBody.content['application/json'].schema
      .properties.inputs.maxItems,
  ).toBe(10_000);
});

it("says in its help that the document is serve's only with the same batch limit", async () => {
  const help = await runCli(['openapi', '--help']);
  expect(help.code).toBe(0);
  expect(help.stdout).toContain('--batch-limit N');
  expect(help.stdout).toMatch(/same batch limit/);
});
