/**
 * RDAP over HTTPS: a registry's redirect may move within https or up from http, never down from
 * https to http, where anyone on the path could rewrite the answer (the same rule as every other
 * upstream's redirects, lib/http-get.ts). The servers are real HTTPS servers on loopback with a
 * certificate from a test CA; the lookups run in a child process that trusts that CA
 * (NODE_EXTRA_CA_CERTS, read only at a process's start).
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTempDirs } from '../cli/harness.js';
import { rdapAnswer, startRdapServer, type RdapTestServer } from '../servers/rdap-server.js';
import { mintCertificate } from '../servers/tls-server.js';

const run = promisify(execFile);
const temp = createTempDirs();
let secure: RdapTestServer;
let plain: RdapTestServer;
let caFile: string;

const domain = (name: string) => rdapAnswer.json({ objectClassName: 'domain', ldhName: name, status: ['active'] });

beforeAll(async () => {
  const ca = mintCertificate({ subject: 'seclookup test CA', ca: true });
  const leaf = mintCertificate({ subject: '127.0.0.1', otherNames: [{ type: 'ip', ip: '127.0.0.1' }], issuer: ca });
  caFile = join(temp.make(), 'ca.pem');
  writeFileSync(caFile, ca.pem);
  secure = await startRdapServer({}, '127.0.0.1', { certificate: leaf });
  plain = await startRdapServer();
  // .com is asked over https, .net over http.
  secure.set('direct.com', domain('direct.com'));
  secure.set('moved.com', rdapAnswer.redirect(`${secure.base}moved/moved.com`));
  secure.set('/rdap/moved/moved.com', domain('moved.com'));
  secure.set('down.com', rdapAnswer.redirect(`${plain.base}domain/down.com`));
  plain.set('down.com', domain('down.com'));
  plain.set('up.net', rdapAnswer.redirect(`${secure.base}domain/up.net`));
  secure.set('up.net', domain('up.net'));
});

afterAll(async () => {
  await Promise.all([secure?.close(), plain?.close()]);
  temp.cleanup();
});

/** Each name's whois answer (its ldhName) or failure (code and message), from a process that trusts the test CA. */
async function whoisInChild(names: string[]): Promise<Record<string, string>> {
  const lookupModule = pathToFileURL(join(import.meta.dirname, '../../src/lookup.ts')).href;
  const script = `
    import { createLookup } from ${JSON.stringify(lookupModule)};
    const lookup = createLookup({
      outbound: { allowPrivateTargets: ['127.0.0.0/8'] },
      whois: { rdapServers: { com: ${JSON.stringify(secure.base)}, net: ${JSON.stringify(plain.base)} }, timeouts: { connectMs: 2000, totalMs: 4000 } },
    });
    const answers = {};
    for (const name of ${JSON.stringify(names)}) {
      try {
        answers[name] = 'answered ' + (await lookup.whois(name)).domain;
      } catch (error) {
        answers[name] = error.code + ': ' + error.message;
      }
    }
    await lookup.close();
    console.log(JSON.stringify(answers));
  `;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    env: { ...process.env, NODE_EXTRA_CA_CERTS: caFile },
    timeout: 30_000,
  });
  return JSON.parse(stdout) as Record<string, string>;
}

describe('RDAP redirects over https', () => {
  it('follows https to https and http up to https; refuses https down to http, naming the host', async () => {
    const answers = await whoisInChild(['direct.com', 'moved.com', 'up.net', 'down.com']);
    expect(answers['direct.com']).toBe('answered direct.com');
    expect(answers['moved.com']).toBe('answered moved.com');
    expect(answers['up.net']).toBe('answered up.net');
    expect(answers['down.com']).toMatch(/^lookup_failed: .*refusing a redirect from https down to http \(127\.0\.0\.1:\d+\)/);
    // The http server was never asked for the downgraded answer.
    expect(plain.hits.get('/rdap/domain/down.com')).toBeUndefined();
  });
});
