/**
 * A DNS query that cannot open its socket because this process is out of file descriptors
 * fails as this process's own error, never as the DNS server's (`upstream_failed`, worded "the
 * DNS server answered with an error" by the products and counted against the server). Run in a
 * child process whose open-files limit (util-linux prlimit) is used up before it asks.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMAIL_ZONE, startDnsServer, type DnsTestServer } from '../../servers/dns-server.js';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const DNS_INDEX = pathToFileURL(join(fileURLToPath(new URL('.', import.meta.url)), '../../../src/lib/dns/index.ts')).href;

let server: DnsTestServer;
beforeAll(async () => {
  server = await startDnsServer({ zone: EMAIL_ZONE });
});
afterAll(() => server.close());

/** Ask a question in a child limited to 64 open files, after using every free one up. */
function askWithNoFilesLeft(): { kind: string; code?: string; message: string } {
  const script = `
    import { openSync } from 'node:fs';
    import { createDnsResolver } from ${JSON.stringify(DNS_INDEX)};
    const dns = createDnsResolver({ servers: [${JSON.stringify(server.address)}], timeouts: { totalMs: 1000 }, attempts: 1 });
    const held = [];
    try { for (;;) held.push(openSync('/dev/null', 'r')); } catch {}
    try {
      await dns.resolve('example.test', 'MX');
      console.log(JSON.stringify({ kind: 'answered', message: '' }));
    } catch (error) {
      console.log(JSON.stringify({ kind: error.constructor.name, code: error.code, message: error.message }));
    }
  `;
  const run = spawnSync('prlimit', ['--nofile=64:64', process.execPath, '--import', TSX, '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout.trim().split('\n').pop()!);
}

describe('a DNS query with no file descriptor left', () => {
  it('over UDP fails as a local error naming EMFILE, not as the DNS server failing', () => {
    const outcome = askWithNoFilesLeft();
    expect(outcome.kind).toBe('Error');
    expect(outcome.code).toBeUndefined(); // no SeclookupError code: upstream_failed is for the server's failures
    expect(outcome.message).toBe(`cannot open a DNS socket to ${server.address}: EMFILE (this process is out of file descriptors or memory)`);
  });
});
