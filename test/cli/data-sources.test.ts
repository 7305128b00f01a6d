/**
 * `data update --source`: an unknown source is a usage error (exit 2) listing the product's
 * sources, and a product with a single source refuses the flag, before anything is fetched
 * (the mirror here is a closed port: a fetch would fail with exit 1 instead). And the messages
 * of a failed update carry one `seclookup: ` prefix, not two.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createTempDirs, runCli } from './harness.js';

const dirs = createTempDirs();
afterAll(() => dirs.cleanup());

const CLOSED = 'http://127.0.0.1:1';

describe('data update --source', () => {
  it.each(['webhookip', 'emailval', 'whois'])('%s has no sources to choose from: --source is refused, exit 2, nothing fetched', async (product) => {
    const result = await runCli(['data', 'update', product, '--source', 'bogus', '--mirror', CLOSED, '--data-dir', dirs.make()]);
    expect(result.stderr).toBe(
      `seclookup: ${product} has no sources to choose from (--source is for riskscore and scamrisk); leave it out\nRun \`seclookup data --help\` for usage.\n`,
    );
    expect(result.code).toBe(2);
  });

  it.each([
    ['scamrisk', 'phishing,bogus', 'unknown scamrisk source "bogus"; sources: phishing, polkadot-addresses, ofac'],
    ['riskscore', 'bogus', 'unknown riskscore source "bogus"; sources: tor, hosting-vpn, cloud, apple-private-relay, ipsum, spamhaus-drop'],
  ])('%s: an unknown source is a usage error listing its sources', async (product, source, message) => {
    const result = await runCli(['data', 'update', product, '--source', source, '--mirror', CLOSED, '--data-dir', dirs.make()]);
    expect(result.stderr).toBe(`seclookup: --source: ${message}\nRun \`seclookup data --help\` for usage.\n`);
    expect(result.code).toBe(2);
  });

  it('data --help lists the sources of each product that has several', async () => {
    const help = await runCli(['data', '--help']);
    expect(help.stdout).toContain('scamrisk: phishing, polkadot-addresses, ofac');
    expect(help.stdout).toContain('riskscore: tor, hosting-vpn, cloud, apple-private-relay, ipsum, spamhaus-drop');
  });
});

describe('a failed update', () => {
  it('says seclookup once', async () => {
    const empty = dirs.make();
    const result = await runCli(['data', 'update', 'webhookip', '--mirror', CLOSED, '--data-dir', empty]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^seclookup: webhookip update failed, dataset left unchanged: cannot read dataset /);
    expect(result.stderr).not.toContain('seclookup: cannot read');
  });
});
