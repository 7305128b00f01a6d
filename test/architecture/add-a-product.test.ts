/**
 * The add-a-product proof (issue 21, "Done means"): a throwaway product folder plus one line in
 * the product list (descriptors.ts), written into a copy of the source, with no other edit,
 * type-checks and gets a working route (and its own error code's status), `seclookup lookup`
 * command, its own `seclookup` command, client method, OpenAPI entry and status route. The copy's own modules are imported (vitest transforms them),
 * so the test exercises exactly the copied tree, over a real loopback listener for the client.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const ID = 'reverser';

const FILES: Record<string, string> = {
  'descriptor.ts': `import { defineDescriptor, oneValue } from '../descriptor.js';

export default defineDescriptor({
  id: '${ID}',
  secretPrefix: 'rv_sec_',
  publicPrefix: 'rv_pub_',
  hasFetchedAt: false,
  hasDatabaseRecords: false,
  load: () => import('./index.js'),
  commands: { reverse: { usage: 'reverse TEXT', summary: 'print TEXT reversed', load: async () => (await import('./cli.js')).runReverse } },
  errorCodes: { text_too_long: 422 },
  client: { request: oneValue('text'), batchInput: 'host' },
});
`,
  'cli.ts': `import { out } from '../../cli/output.js';

export async function runReverse(argv: string[]): Promise<number> {
  out([...(argv[0] ?? '')].reverse().join(''));
  return 0;
}
`,
  'index.ts': `import { LookupError } from '../../errors.js';
import { obj, str } from '../../openapi/schema.js';
import { defineProduct, type ProductEngine } from '../module.js';
import { queryValue } from '../route.js';

export interface ReverserEngine extends ProductEngine<[text: string], string, { text: string; reversed: string }> {}

const engine: ReverserEngine = {
  prepare(text) {
    if (text === '') throw new LookupError('invalid_request', 'text is empty');
    if (text.length > 10) throw new LookupError('text_too_long', 'text is over 10 characters');
    return text;
  },
  lookup: (text) => ({ result: { text, reversed: [...text].reverse().join('') }, cached: false }),
};

export default defineProduct({
  id: '${ID}',
  optionNames: {},
  createEngine: () => engine,
  routes: [{ method: 'GET', path: 'lookup', inputError: 'invalid_request', args: ({ query }): [string] => [queryValue(query, 'text') ?? ''] }],
  batch: { input: 'host', args: (value): [string] => [value] },
  doc: {
    summary: 'Reverses a text (a throwaway product of the add-a-product test).',
    query: { text: { description: 'The text.' } },
    result: obj({ text: str('The input.'), reversed: str('The input, reversed.') }),
    errors: ['text_too_long'],
  },
  cli: { input: 'a text', example: 'abc', args: (input): [string] => [input] },
});
`,
};

/** Adds `import name from './<id>/descriptor.js';` and `  name,` after the first product's lines. */
function addLine(path: string): void {
  const text = readFileSync(path, 'utf8');
  const first = /^import (\w+) from '\.\/(\w+)\/descriptor\.js';$/m.exec(text);
  if (!first) throw new Error(`no product import in ${path}`);
  const withImport = text.replace(first[0], `${first[0]}\nimport ${ID} from './${ID}/descriptor.js';`);
  const entry = new RegExp(`^  ${first[1]},$`, 'm');
  if (!entry.test(withImport)) throw new Error(`no list entry for ${first[1]} in ${path}`);
  writeFileSync(path, withImport.replace(entry, `  ${first[1]},\n  ${ID},`));
}

let dir = '';
let server: Server | undefined;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'seclookup-new-product-'));
  for (const folder of ['src', 'adapters']) cpSync(join(ROOT, folder), join(dir, folder), { recursive: true });
  for (const file of ['package.json', 'tsconfig.json']) cpSync(join(ROOT, file), join(dir, file));
  for (const link of ['node_modules', 'data']) symlinkSync(join(ROOT, link), join(dir, link));
  const folder = join(dir, 'src/products', ID);
  mkdirSync(folder);
  for (const [name, text] of Object.entries(FILES)) writeFileSync(join(folder, name), text);
  addLine(join(dir, 'src/products/descriptors.ts'));
  // Only the copied source: the repository's tests name the fifteen products' samples.
  const tsconfig = JSON.parse(readFileSync(join(dir, 'tsconfig.json'), 'utf8'));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ ...tsconfig, include: ['src', 'adapters'] }));
});

afterAll(async () => {
  if (server) await new Promise((done) => server?.close(done));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe(`a new product "${ID}": its folder plus one line in descriptors.ts`, () => {
  it('type-checks with no other edit', () => {
    // TypeScript's native compiler (tsgo, the TypeScript 7 preview): the same errors as tsc on
    // this tree in a tenth of its CPU (3 CPU-s, where tsc took 22 of the suite's).
    // `npm run typecheck` and the pretest step stay on tsc.
    const tsgo = join(ROOT, 'node_modules/@typescript/native-preview/bin/tsgo');
    const run = spawnSync(process.execPath, [tsgo, '--noEmit', '-p', dir], { encoding: 'utf8' });
    expect(run.stdout + run.stderr).toBe('');
    expect(run.status).toBe(0);
  }, 120_000);

  it('answers its route, status route, batch route and client method over a real listener', async () => {
    const { createApi } = await import(join(dir, 'src/api/create-api.ts'));
    const { createLookup } = await import(join(dir, 'src/lookup.ts'));
    const { createMemoryMeter } = await import(join(dir, 'src/metering/memory/meter.ts'));
    const { issueKeys } = await import(join(dir, 'src/metering/keys.ts'));
    const { createListener } = await import(join(dir, 'adapters/node.ts'));
    const { createClient } = await import(join(dir, 'src/client/index.ts'));
    const meter = createMemoryMeter();
    const keys = await issueKeys(meter, { product: ID });
    expect(keys.secretKey).toMatch(/^rv_sec_/);
    const lookup = createLookup();
    const api = createApi({ meter, lookup, secret: 'test-operator-secret-0123456789abcdef0123456789' });
    server = createServer(createListener(api));
    await new Promise<void>((done) => server?.listen(0, '127.0.0.1', done));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const raw = await fetch(`${baseUrl}/v1/${ID}/lookup?text=abc`, { headers: { authorization: `Bearer ${keys.secretKey}` } });
    expect(raw.status).toBe(200);
    expect(await raw.json()).toMatchObject({ text: 'abc', reversed: 'cba' });

    const client = createClient({ baseUrl, keys: { [ID]: keys.secretKey }, retries: 0 });
    expect(await client[ID]('héllo')).toMatchObject({ text: 'héllo', reversed: 'olléh' });
    await expect(client[ID]('')).rejects.toMatchObject({ code: 'invalid_request', status: 400 });
    // Its own error code, declared in its descriptor: the error table gives it its status.
    await expect(client[ID]('abcdefghijk')).rejects.toMatchObject({ code: 'text_too_long', status: 422 });
    expect(await client.batch[ID](['ab', 'xyz'])).toMatchObject([{ result: { reversed: 'ba' } }, { result: { reversed: 'zyx' } }]);
    const status = await client.status(ID);
    expect(status).toMatchObject({ product: ID, plan: 'starter' });
    await lookup.close();
  }, 60_000);

  it('has its OpenAPI entries', async () => {
    const { buildOpenApiDocument } = await import(join(dir, 'src/openapi/document.ts'));
    const document = buildOpenApiDocument();
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining([`/v1/${ID}/lookup`, `/v1/${ID}/status`, `/v1/${ID}/batch`]));
    expect(JSON.stringify(document.paths[`/v1/${ID}/lookup`])).toContain('text_too_long');
  });

  it('runs as `seclookup lookup reverser TEXT`', async () => {
    const { runLookup } = await import(join(dir, 'src/cli/lookup.ts'));
    const written: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      expect(await runLookup([ID, 'abc'])).toBe(0);
    } finally {
      write.mockRestore();
    }
    expect(JSON.parse(written.join(''))).toMatchObject({ text: 'abc', reversed: 'cba' });
  });

  it('runs its own command, `seclookup reverse TEXT`, listed in the main help', async () => {
    const { main } = await import(join(dir, 'src/cli/main.ts'));
    const run = async (argv: string[]) => {
      const stdout: string[] = [];
      const stderr: string[] = [];
      const io = { stdout: { write: (text: string) => stdout.push(text) }, stderr: { write: (text: string) => stderr.push(text) }, env: {}, cwd: dir };
      return { code: await main(argv, io), stdout: stdout.join(''), stderr: stderr.join('') };
    };
    expect(await run(['reverse', 'abc'])).toEqual({ code: 0, stdout: 'cba\n', stderr: '' });
    expect((await run(['--help'])).stdout).toMatch(/^ {2}reverse TEXT {10}print TEXT reversed$/m);
  });
});
