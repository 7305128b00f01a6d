/**
 * `seclookup serve` with its stdout redirected to a file, rotated the two usual ways, and the
 * signals Node would otherwise act on (found by a reviewer): SIGUSR1 opened Node's debugger on
 * 127.0.0.1:9229, where any local user could run code in serve; SIGUSR2 killed it at once,
 * losing the buffered log lines; a `copytruncate` rotation left a run of NUL bytes up to serve's
 * old offset; a rename-and-signal rotation had no signal to give. One real process: signals and
 * file descriptors are what this is about.
 */
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmdirSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { CLI_PATH, cliEnv, createTempDirs } from './harness.js';
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
  await waitForLines(log, 5);

  // A name that cannot be opened now (a folder in its place): said at each signal, the log going on where it was.
  renameSync(log, `${log}.2`);
  mkdirSync(log);
  // One at a time: signals sent together arrive as one.
  for (let i = 1; i <= 3; i++) {
    serve.kill('SIGUSR1');
    await serve.waitFor(() => (serve.stderr.match(/SIGUSR1: cannot reopen the log file \(EISDIR/g) ?? []).length === i);
  }
  await healthz(1);
  await waitForLines(`${log}.2`, 6);
  rmdirSync(log);
  serve.kill('SIGUSR1');
  await serve.waitFor(() => serve.stderr.split(`SIGUSR1: reopening the log file ${log}`).length === 3);
  await healthz(1);
  expect(await serve.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  // Every line written once, none lost to a signal; no leak warning; and no debugger was ever opened.
  expect(linesOf(`${log}.2`)).toHaveLength(6);
  expect(linesOf(log)).toHaveLength(1);
  expect(serve.stderr).not.toContain('MaxListenersExceededWarning');
  expect(serve.stderr).not.toContain('Debugger listening');
});

it('with stdout and stderr on one file opened by `> file 2>&1`: the notes never overwrite request lines (found by a reviewer)', async () => {
  const dir = temp.make();
  const log = join(dir, 'all.log');
  const fd = openSync(log, 'w');
  // Both on the one descriptor, as the shell's `2>&1` leaves them; serve's "listening" line is read from the file.
  const child = spawn(process.execPath, [CLI_PATH, 'serve', '--port', '0', '--db', join(dir, 'serve.db')], { env: cliEnv(), stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  let baseUrl = '';
  for (let waited = 0; !baseUrl; waited += 50) {
    if (waited > 30_000) throw new Error(`serve did not start:\n${readFileSync(log, 'utf8')}`);
    await sleep(50);
    baseUrl = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(readFileSync(log, 'utf8'))?.[1] ?? '';
  }
  const ids: string[] = [];
  const healthz = async (times: number) => {
    for (let i = 0; i < times; i++) ids.push((await fetch(`${baseUrl}/healthz`)).headers.get('x-request-id')!);
  };
  const requestLines = () =>
    readFileSync(log, 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { request_id: string });
  await healthz(30);
  while (requestLines().length < 30) await sleep(50);
  child.kill('SIGUSR2');
  child.kill('SIGUSR1');
  while (!readFileSync(log, 'utf8').includes('SIGUSR1 ignored')) await sleep(50);
  await healthz(30);
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
  const text = readFileSync(log, 'utf8');
  expect(requestLines().map((line) => line.request_id)).toEqual(ids);
  expect(text).toContain('SIGUSR2 ignored');
  expect(text).toContain('SIGUSR1 ignored: the log is not a file opened by name');
  expect(text).toContain('seclookup stopped');
});
