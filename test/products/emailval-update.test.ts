/**
 * updateDisposableDomains against a real loopback HTTP server standing in for the official
 * source (through --mirror): a good update, an unchanged one, and hostile answers (hang, a
 * stalled body, garbage, a wrong shape, 500, oversize, an implausibly short list), each of
 * which must leave the file byte for byte as it was. Then the same through the built CLI.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLookup } from '../../src/lookup.js';
import { formatDisposableFile } from '../../src/products/emailval/disposable.js';
import { viaMirror } from '../../src/lib/source-update.js';
import { DISPOSABLE_SOURCE_URLS, DisposableUpdateError, updateDisposableDomains, type DisposableUpdateOptions } from '../../src/products/emailval/update.js';
import { runCli } from '../cli/harness.js';
import { respond, startHttpFixture, type HttpFixture } from '../servers/http-fixture.js';

const INDEX_PATH = viaMirror(DISPOSABLE_SOURCE_URLS.index, '');
const WILDCARD_PATH = viaMirror(DISPOSABLE_SOURCE_URLS.wildcard, '');
/** What the test data folder starts with: six domains. */
const ON_FILE = ['mailinator.com', 'guerrillamail.com', 'yopmail.com', 'trashmail.example', 'old-gone.example', 'ddns.net'];
const ROLES = '# category\tlocal_part\nother\tadmin\n';

let server: HttpFixture;
let dataDir: string;
let file: string;
let progress: string[];

function serve(index: unknown, wildcard: unknown = ['ddns.net']): void {
  server.routes.set(INDEX_PATH, respond.json(index));
  server.routes.set(WILDCARD_PATH, respond.json(wildcard));
  server.hits.clear();
}

function update(options: Partial<DisposableUpdateOptions> = {}) {
  return updateDisposableDomains({
    dataDir,
    mirror: server.url,
    // No answering mirror misses it on a loaded machine; the hostile cases set a short one.
    timeoutMs: 15_000,
    onProgress: (line) => progress.push(line),
    now: () => new Date('2026-12-01T10:00:00Z'),
    ...options,
  });
}

/** The update must fail with a DisposableUpdateError whose message contains `message`, leaving the file and folder as they were. */
async function expectRefused(message: string, options: Partial<DisposableUpdateOptions> = {}): Promise<void> {
  const before = readFileSync(file, 'utf8');
  const error = await update(options).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(DisposableUpdateError);
  expect((error as Error).message).toContain(message);
  expect(readFileSync(file, 'utf8')).toBe(before);
  expect(readdirSync(join(dataDir, 'emailval')).sort()).toEqual(['disposable-domains.txt', 'role-based-local-parts.tsv']);
}

beforeAll(async () => {
  server = await startHttpFixture();
});
afterAll(() => server.close());
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'seclookup-emailval-update-'));
  mkdirSync(join(dataDir, 'emailval'));
  file = join(dataDir, 'emailval', 'disposable-domains.txt');
  writeFileSync(file, formatDisposableFile(ON_FILE, { source: 'test', version: 'test', date: '2026-11-23', licence: 'MIT' }));
  writeFileSync(join(dataDir, 'emailval', 'role-based-local-parts.tsv'), ROLES);
  progress = [];
  server.routes.clear();
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

describe('updateDisposableDomains', () => {
  it('merges index.json and wildcard.json, converts IDN, drops non-domains, and rewrites the file with its header', async () => {
    serve(
      ['mailinator.com', 'GuerrillaMail.com', 'yopmail.com', 'trashmail.example', 'new-one.example', 'Bücher-mail.example', 'not a domain', 'localhost', ''],
      ['ddns.net', 'wild.example'],
    );
    const report = await update();
    // Entries added: new-one, the IDN one, wild.example, and the *. lines of ddns.net and wild.example.
    expect(report).toEqual({ path: file, before: 6, after: 8, added: 5, removed: 1, dropped: 3, changed: true });
    expect(readFileSync(file, 'utf8')).toBe(
      [
        '# Disposable e-mail domains for seclookup emailval: one per line, lower-case ASCII (IDN as punycode).',
        '# A plain line matches that domain only (the source\'s index.json); a "*." line matches the',
        "# subdomains of the domain after it, down to the registrable domain (the source's wildcard.json).",
        `# Source: ${DISPOSABLE_SOURCE_URLS.index} (exact) + wildcard.json (with subdomains)`,
        '# Version: master branch as fetched on the date below',
        '# Date: 2026-12-01',
        '# Licence: MIT (disposable-email-domains, github.com/ivolo/disposable-email-domains; see SOURCES.md)',
        '# Entries: 8 domains, 2 of them with their subdomains ("*." lines)',
        'ddns.net',
        '*.ddns.net',
        'guerrillamail.com',
        'mailinator.com',
        'new-one.example',
        'trashmail.example',
        'wild.example',
        '*.wild.example',
        'xn--bcher-mail-9db.example',
        'yopmail.com',
        '',
      ].join('\n'),
    );
    expect(progress).toEqual(['index.json: 9 entries; wildcard.json: 2 entries', 'left out 3 entries that are not a domain name', '8 domains (+5 -1 entries)']);
    expect(Object.fromEntries(server.hits)).toEqual({ [INDEX_PATH]: 1, [WILDCARD_PATH]: 1 });
    // The engine loads the new file: a subdomain of a new wildcard entry is disposable, one of an
    // index.json entry is not, a removed entry is not.
    const engine = createLookup({ dataDir }).engine('emailval');
    expect([
      engine.disposableCount,
      engine.isDisposable('x.wild.example'),
      engine.isDisposable('new-one.example'),
      engine.isDisposable('x.new-one.example'),
      engine.isDisposable('old-gone.example'),
    ]).toEqual([8, true, true, false, false]);
  });

  it('rewrites a file whose domains are the same but whose wildcard entries are not marked (written before "*." lines)', async () => {
    // ON_FILE as the old format wrote it: every domain a plain line, ddns.net included.
    const old = [
      '# Disposable e-mail domains for seclookup emailval: one per line, lower-case ASCII (IDN as punycode).',
      '# A subdomain of a listed domain counts as listed, down to the registrable domain.',
      '# Source: test',
      '# Version: test',
      '# Date: 2026-11-23',
      '# Licence: MIT',
      `# Entries: ${ON_FILE.length}`,
      ...[...ON_FILE].sort(),
    ];
    writeFileSync(file, `${old.join('\n')}\n`);
    serve(ON_FILE, ['ddns.net']);
    // Read as it was meant (each domain with its subdomains): all but ddns.net lose their subdomains.
    expect(await update()).toEqual({ path: file, before: 6, after: 6, added: 0, removed: 5, dropped: 0, changed: true });
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('\nddns.net\n*.ddns.net\n');
    expect(text).not.toContain('*.mailinator.com');
    // Then the same source again changes nothing.
    expect((await update()).changed).toBe(false);
    const engine = createLookup({ dataDir }).engine('emailval');
    expect([engine.isDisposable('foo.ddns.net'), engine.isDisposable('foo.mailinator.com')]).toEqual([true, false]);
  });

  it('leaves the file untouched when the list is the same (order and case aside)', async () => {
    writeFileSync(file, formatDisposableFile([...ON_FILE, '*.ddns.net'], { source: 'test', version: 'test', date: '2026-11-23', licence: 'MIT' }));
    const before = readFileSync(file, 'utf8');
    serve([...ON_FILE].reverse().map((d) => d.toUpperCase()));
    expect(await update()).toEqual({ path: file, before: 6, after: 6, added: 0, removed: 0, dropped: 0, changed: false });
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('takes a mirror URL with a trailing slash', async () => {
    serve(ON_FILE, []); // the file on hand has no "*." lines
    expect((await update({ mirror: `${server.url}/` })).changed).toBe(false);
    expect(server.hits.get(INDEX_PATH)).toBe(1);
  });

  it('follows a feed that moved (a redirect), and refuses a redirect loop, naming the document', async () => {
    serve(['mailinator.com', 'yopmail.com', 'guerrillamail.com']);
    const moved = server.routes.get(INDEX_PATH)!;
    server.routes.set(INDEX_PATH, respond.redirect('/new-home/index.json', 301));
    server.routes.set('/new-home/index.json', moved);
    expect(await update()).toMatchObject({ after: 4, changed: true });
    server.routes.set(INDEX_PATH, respond.redirect(INDEX_PATH));
    await expectRefused('index.json: more than 5 redirects');
  });

  it('refuses a list with fewer than half the domains on file', async () => {
    serve(['mailinator.com', 'yopmail.com']); // with wildcard.json's ddns.net: 3, exactly half, is accepted
    expect((await update()).after).toBe(3);
    serve([]);
    await expectRefused('refusing the new list: 1 domain, fewer than half of the 3 on file');
  });

  it('refuses a server that accepts and never answers, within the timeout', async () => {
    server.routes.set(INDEX_PATH, respond.hang());
    server.routes.set(WILDCARD_PATH, respond.json(['ddns.net']));
    await expectRefused('index.json: timeout after 300 ms', { timeoutMs: 300 });
  });

  it('refuses a body that stalls halfway', async () => {
    serve(ON_FILE);
    server.routes.set(WILDCARD_PATH, respond.stallBody('["ddns.net", '));
    await expectRefused('wildcard.json: timeout after 300 ms', { timeoutMs: 300 });
  });

  it('refuses garbage', async () => {
    serve(ON_FILE);
    server.routes.set(INDEX_PATH, respond.text('<html>rate limited</html>', { contentType: 'text/html' }));
    await expectRefused('index.json: the response is not valid JSON');
  });

  it.each([
    ['an object', { domains: ON_FILE }],
    ['an array with a non-string', [...ON_FILE, 42]],
  ])('refuses JSON of the wrong shape: %s', async (_name, body) => {
    serve(body);
    await expectRefused('index.json: expected a JSON array of domain names');
  });

  it('refuses an error status', async () => {
    serve(ON_FILE);
    server.routes.set(WILDCARD_PATH, respond.status(500));
    await expectRefused('wildcard.json: HTTP 500');
  });

  it('refuses an oversize answer, declared or chunked', async () => {
    const big = Array.from({ length: 500 }, (_, i) => `disposable-${i}.example`);
    serve(big);
    await expectRefused('index.json: response larger than 4096 bytes', { maxBytes: 4096 });
    server.routes.set(INDEX_PATH, respond.chunked(JSON.stringify(big), 512));
    await expectRefused('index.json: response larger than 4096 bytes', { maxBytes: 4096 });
  });

  it('refuses when the source cannot be reached at all', async () => {
    await expectRefused('index.json: request failed: ECONNREFUSED', { mirror: 'http://127.0.0.1:1' });
  });

  it('fails with dataset_missing, naming the file, when there is no list to update', async () => {
    rmSync(file);
    serve(ON_FILE);
    await expect(update()).rejects.toMatchObject({ code: 'dataset_missing', message: expect.stringContaining('disposable-domains.txt') });
  });
});

describe('seclookup data update emailval (built CLI)', () => {
  it('updates from the mirror and exits 0; a refused update exits 1 and changes nothing', async () => {
    serve([...ON_FILE, 'new-one.example']);
    const ok = await runCli(['data', 'update', 'emailval', '--data-dir', dataDir, '--mirror', server.url, '--timeout', '2000']);
    expect([ok.code, ok.stdout.trim()]).toEqual([0, `emailval: 7 disposable domains (+2 -0 entries); wrote ${file}`]);
    expect(ok.stderr).toContain('Restart `seclookup serve` to load the new list.');
    expect(readFileSync(file, 'utf8')).toContain('\nnew-one.example\n');

    const before = readFileSync(file, 'utf8');
    server.routes.set(INDEX_PATH, respond.hang());
    const refused = await runCli(['data', 'update', 'emailval', '--data-dir', dataDir, '--mirror', server.url, '--timeout', '300']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('emailval update failed, dataset left unchanged: index.json: timeout after 300 ms');
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
});
