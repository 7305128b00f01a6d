/**
 * `seclookup serve` started in a terminal that then goes away (an SSH session dropped, a
 * terminal window closed): the kernel sends SIGHUP, and every later write to stdout and stderr
 * fails with EIO. serve must drain as on SIGTERM, bill exactly what it answered, and exit.
 * Node's default for SIGHUP killed it with its log buffer and its last commits; with SIGHUP
 * handled, the log's flush at exit then retried the EIO write for ever and serve never exited.
 * The terminal is a real pseudo-terminal, made by util-linux's `script` (Debian's essential
 * bsdutils); killing `script` closes its master side, which is the hangup.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterAll, expect, it } from 'vitest';
import { issueKeys } from '../../src/metering/keys.js';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import { CLI_PATH, createTempDirs } from './harness.js';
import { getStatus } from './serve-process.js';

const temp = createTempDirs();
afterAll(() => temp.cleanup());

const CLIENTS = 8;

/** Pids of the processes whose command line holds `text` (the database's unique path). */
function processesWith(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv.some((arg) => arg.endsWith('cli.js')) && argv.includes(text)) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

it('the terminal closes under load: serve drains, bills exactly what it answered, and exits', async () => {
  const db = join(temp.make(), 'terminal.db');
  const setup = createSqliteMeter(db);
  await setup.setPlan({ slug: 'big', product: '*', rateLimitPerMinute: 1_000_000, monthlyQuota: null });
  const { secretKey, subscriptionId } = await issueKeys(setup, { product: 'useragent', plan: 'big' });
  await setup.close();

  const command = [process.execPath, CLI_PATH, 'serve', '--port', '0', '--db', db].map((arg) => `'${arg}'`).join(' ');
  const terminal = spawn('script', ['--quiet', '--flush', '--command', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let screen = '';
  terminal.stdout.setEncoding('utf8').on('data', (chunk: string) => (screen += chunk));
  try {
    let baseUrl: string | undefined;
    for (let waited = 0; !baseUrl; waited += 20) {
      if (waited > 15_000) throw new Error(`serve did not start; its terminal showed:\n${screen}`);
      baseUrl = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(screen)?.[1];
      await sleep(20);
    }
    expect(processesWith(db)).toHaveLength(1);

    const url = `${baseUrl}/v1/useragent/lookup?ua=${encodeURIComponent('Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0')}`;
    const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
    let answered = 0;
    let unexpected = 0;
    let stopped = false;
    const client = async () => {
      while (!stopped) {
        const status = await getStatus(url, secretKey, agent);
        if (status === 200) answered++;
        else if (status !== 'cut' && status !== 503) unexpected++;
      }
    };
    const clients = Array.from({ length: CLIENTS }, client);
    while (answered < 500) await sleep(5);
    // The hangup: the terminal's master side closes.
    terminal.kill('SIGKILL');
    for (let waited = 0; processesWith(db).length > 0; waited += 50) {
      if (waited > 20_000) throw new Error(`serve still running 20 s after its terminal closed:\n${screen.slice(-2000)}`);
      await sleep(50);
    }
    stopped = true;
    await Promise.all(clients);
    agent.destroy();
    expect(unexpected).toBe(0);

    // A clean stop: no lease left behind (a kill leaves its allowance leased), every answer billed.
    const file = new Database(db, { readonly: true });
    const leases = file.prepare('SELECT count(*) FROM leases WHERE subscription_id = ?').pluck().get(subscriptionId);
    file.close();
    expect(leases).toBe(0);
    const reader = createSqliteMeter(db);
    const usage = (await reader.usage()).filter((row) => row.subscriptionId === subscriptionId).reduce((sum, row) => sum + row.lookups, 0);
    await reader.close();
    expect(usage).toBe(answered);
  } finally {
    terminal.kill('SIGKILL');
    for (const pid of processesWith(db)) process.kill(pid, 'SIGKILL');
  }
});
