/**
 * `seclookup serve` with its stdout redirected to a file, rotated the two usual ways, and the
 * signals Node would otherwise act on (found by a reviewer): SIGUSR1 opened Node's debugger on
 * 127.0.0.1:9229, where any local user could run code in serve; SIGUSR2 killed it at once,
 * losing the buffered log lines; a `copytruncate` rotation left a run of NUL bytes up to serve's
 * old offset; a rename-and-signal rotation had no signal to give. One real process: signals and
 * file descriptors are what this is about.
 */
import { closeSync, openSync, readFileSync, renameSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createTempDirs } from './harness.js';
import { ServeProcess, running } from './serve-process.js';

const temp = createTempDirs();

afterEach(async () => {
  for (const serve of running) await serve.stop('SIGKILL');
  temp.cleanup();
});

/** The request lines in a log file; fails on a line that is not JSON (a run of NULs included). */
const linesOf = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { route: string; status: number });

it('with stdout a file (as `>` opens it): copytruncate leaves no NULs, SIGUSR1 reopens the file by name (never the debugger), SIGUSR2 is ignored', async () => {
  const dir = temp.make();
  const log = join(dir, 'requests.log');
  // Opened as a shell's `>` does: write-only, truncated, without O_APPEND.
  const fd = openSync(log, 'w');
  const { serve, baseUrl } = await ServeProcess.start(join(dir, 'serve.db'), { stdout: fd, env: { NODE_OPTIONS: '--inspect-port=0' } });
  closeSync(fd);
  const healthz = async (times: number) => {
    for (let i = 0; i < times; i++) expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
  };
  // Lines reach the file within FLUSH_INTERVAL_MS (1 s) of a quiet server.
  const waitForLines = (path: string, count: number) => serve.waitFor(() => linesOf(path).length >= count);

  await healthz(20);
  await waitForLines(log, 20);
  // copytruncate: the file emptied under serve. Written at serve's old offset, the next lines would follow ~3 KB of NULs.
  truncateSync(log, 0);
  await healthz(5);
  await waitForLines(log, 5);
  expect(readFileSync(log, 'utf8')).not.toContain('\0');
  expect(linesOf(log)).toHaveLength(5);

  // Rename and signal: the old name's lines stay where they were, the new ones go to a new file of the same name.
  renameSync(log, `${log}.1`);
  serve.kill('SIGUSR1');
  await serve.waitFor(() => serve.stderr.includes(`SIGUSR1: reopening the log file ${log}`));
  await healthz(3);
  await waitForLines(log, 3);
  expect(linesOf(`${log}.1`)).toHaveLength(5);
  expect(linesOf(log).map((line) => [line.route, line.status])).toEqual(Array(3).fill(['/healthz', 200]));

  serve.kill('SIGUSR2');
  await serve.waitFor(() => serve.stderr.includes('SIGUSR2 ignored'));
  await healthz(2);
  expect(await serve.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  // Every line written, none lost to a signal; and no debugger was ever opened.
  expect(linesOf(log)).toHaveLength(5);
  expect(serve.stderr).not.toContain('Debugger listening');
});
