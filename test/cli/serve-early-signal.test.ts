/**
 * A stop signal while `serve` starts (loading its modules, building the engines, opening the
 * database) stops it cleanly: exit 0, "stopped before listening" on stderr, no port opened and no
 * starter keys made. Before, serve installed its handlers only once listening, so such a SIGTERM
 * killed it with no word (exit 143). In process (signals from an emitter, at two moments of the
 * start) and through the binary with a real signal.
 */
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { CLI_PATH, cliEnv, createTempDirs, runCliJson } from './harness.js';

const dirs = createTempDirs();
afterAll(() => dirs.cleanup());

/**
 * `serve` in this process. `signalAtOnce`: send SIGTERM the moment serve listens for it (before
 * anything slow). `onStderr` sees each write to stderr as it happens (synchronously, as a signal
 * arriving at that moment would). Fails after 15 s, stopping serve, if it has not exited.
 */
async function serveInProcess(
  db: string,
  { signalAtOnce = false, onStderr = () => {} }: { signalAtOnce?: boolean; onStderr?: (text: string, signals: EventEmitter) => void },
): Promise<{ code: number; stderr: string }> {
  const signals = new EventEmitter();
  let stderr = '';
  const io = {
    stdout: { write: () => true },
    stderr: {
      write: (text: string) => {
        stderr += text;
        onStderr(text, signals);
      },
    },
    env: cliEnv(),
    cwd: tmpdir(),
    host: { signals, exit: () => {} },
  };
  // Right after serve's SIGTERM listener is added (a microtask later, before serve goes on).
  if (signalAtOnce)
    signals.once('newListener', (event: string) => {
      if (event === 'SIGTERM') queueMicrotask(() => signals.emit('SIGTERM', 'SIGTERM'));
    });
  const run = main(['serve', '--port', '0', '--db', db], io);
  const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 15_000).unref());
  const code = await Promise.race([run, timeout]);
  if (code === 'timeout') {
    signals.emit('SIGTERM', 'SIGTERM');
    signals.emit('SIGTERM', 'SIGTERM');
    await run;
    throw new Error(`serve did not stop; stderr:\n${stderr}`);
  }
  return { code, stderr };
}

describe('a stop signal while serve starts', () => {
  it('before the engines load: exit 0, stopped before listening, nothing created', async () => {
    const db = join(dirs.make(), 'seclookup.db');
    const result = await serveInProcess(db, { signalAtOnce: true });
    expect(result.stderr).toBe('seclookup: SIGTERM received while starting: stopped before listening\n');
    expect(result.code).toBe(0);
    expect(existsSync(db)).toBe(false);
  });

  it('while the engines load (at their warning): exit 0, no port, no starter keys', async () => {
    const db = join(dirs.make(), 'seclookup.db');
    let sent = false;
    const result = await serveInProcess(db, {
      onStderr: (text, signals) => {
        if (!sent && text.includes('warning: pwbreach')) {
          sent = true;
          signals.emit('SIGTERM', 'SIGTERM');
        }
      },
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('seclookup: SIGTERM received while starting: stopped before listening\n');
    expect(result.stderr).not.toContain('listening on');
    expect(result.stderr).not.toContain('starter');
    expect(await runCliJson(['keys', 'list', '--json', '--db', db])).toEqual([]);
  });

  it('the binary: a real SIGTERM while it starts (loading its modules: most of a second) exits 0, not 143', async () => {
    const db = join(dirs.make(), 'seclookup.db');
    const result = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [CLI_PATH, 'serve', '--port', '0', '--db', db], {
        env: cliEnv(),
        cwd: tmpdir(),
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      // Sent once the child has used 500 ms of CPU: Node's start and serve's first module (which
      // catches the signals) take about 150, serve's engines and first keys about 2,900 before it
      // listens. CPU time, not a wall-clock delay, which raced Node's own start on a loaded machine.
      const poll = setInterval(() => {
        if (child.pid !== undefined && cpuMs(child.pid) >= 500) {
          clearInterval(poll);
          child.kill('SIGTERM');
        }
      }, 5);
      child.on('error', reject);
      child.on('close', (code, signal) => {
        clearInterval(poll);
        resolve({ code, signal, stderr });
      });
    });
    expect(result).toMatchObject({ code: 0, signal: null });
    expect(result.stderr).toMatch(/SIGTERM received/);
  });
});

/** CPU time process `pid` has used, in ms (Linux: utime + stime of /proc/<pid>/stat, in 10 ms ticks); 0 once it is gone. */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}
