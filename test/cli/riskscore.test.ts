/**
 * `seclookup lookup riskscore` and `seclookup data update riskscore` through the built CLI: the
 * bundled data, the upstream settings and their `$SECLOOKUP_RISKSCORE_*` fallbacks, --source.
 */
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { torExitIPv4 } from '../products/riskscore-helpers.js';
import { respond, startHttpFixture, type HttpFixture } from '../servers/http-fixture.js';
import { createTempDirs, REPO_ROOT, runCli, runCliJson } from './harness.js';

const temp = createTempDirs();
let server: HttpFixture;
beforeAll(async () => {
  server = await startHttpFixture({
    '/ipinfo/8.8.8.8': respond.json(JSON.parse(readFileSync(join(REPO_ROOT, 'test/fixtures/riskscore/ipinfo-8.8.8.8.json'), 'utf8'))),
  });
});
afterAll(async () => {
  temp.cleanup();
  await server.close();
});

describe('seclookup lookup riskscore', () => {
  it('says is_tor for a Tor exit of the bundled list, verdict anonymizer', async () => {
    const ip = torExitIPv4();
    const result = await runCliJson<{ ip: string; provider: string; intelligence: { verdict: string; flags: { is_tor: boolean } } }>([
      'lookup',
      'riskscore',
      ip,
    ]);
    expect(result).toMatchObject({ ip, provider: 'local', intelligence: { verdict: 'anonymizer', flags: { is_tor: true } } });
  });

  it('asks an upstream set by --riskscore-provider / --riskscore-url and $SECLOOKUP_RISKSCORE_KEY', async () => {
    const result = await runCliJson(['lookup', 'riskscore', '8.8.8.8', '--riskscore-provider', 'ipinfo', '--riskscore-url', `${server.url}/ipinfo`], {
      env: { SECLOOKUP_RISKSCORE_KEY: 'k-123' },
    });
    expect(result).toMatchObject({ provider: 'ipinfo', network: { asn: 15169 } });
  });

  it('fails with upstream_unconfigured when the local data is off and no upstream is set', async () => {
    const result = await runCli(['lookup', 'riskscore', '8.8.8.8', '--riskscore-local', 'off']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('upstream_unconfigured');
  });

  it('data update riskscore --source with an unknown name is a usage error, the data unchanged', async () => {
    const dir = temp.make();
    cpSync(join(REPO_ROOT, 'data/riskscore'), join(dir, 'riskscore'), { recursive: true });
    const result = await runCli(['data', 'update', 'riskscore', '--data-dir', dir, '--mirror', server.url, '--source', 'nosuch']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown riskscore source "nosuch"');
  });
});
