import { execFileSync, spawn } from 'node:child_process';
import fc from 'fast-check';
import fs, { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { RequestLogEvent } from '../../src/api/types.js';
import { createLineBatch, createServeLog, requestLine } from '../../src/cli/log.js';
import { countDroppedLogLines } from '../../src/cli/serve.js';
import { Registry } from 'prom-client';
import { ERROR_STATUS, type ErrorCode } from '../../src/errors.js';
import { PRODUCT_IDS } from '../../src/products/catalog.js';
import { createTempDirs, REPO_ROOT } from './harness.js';

const temp = createTempDirs();
afterAll(() => temp.cleanup());

function requestEvent(i: number): RequestLogEvent {
  return {
    time: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    request_id: `req_${i}`,
    method: 'GET',
    route: '/v1/useragent/lookup',
    product: 'useragent',
    status: i % 2 ? 200 : 429,
    error_code: i % 2 ? null : 'rate_limit_exceeded',
    latency_ms: 1.25,
    client_ip: '203.0.113.7',
  };
}

function lines(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '');
}

describe('serve log', () => {
  it('writes request lines exactly as before pino (level first, then the event fields) and error lines with their cause', async () => {
    const file = join(temp.make(), 'log.jsonl');
    const log = createServeLog({ level: 'info', dest: file });
    expect(log.logsRequests).toBe(true);
    // Fewer bytes than one buffered write: only close() gets them to the file.
    const events = [1, 2, 3].map(requestEvent);
    for (const event of events) log.request(event);
    log.error(new Error('store failed', { cause: new Error('SQLITE_BUSY') }), 'meter refund');
    await log.close();

    const written = lines(file);
    expect(written.slice(0, 3)).toEqual(events.map((event) => JSON.stringify({ level: 'info', ...event })));
    const error = JSON.parse(written[3]) as Record<string, string>;
    expect(Object.keys(error)).toEqual(['level', 'time', 'context', 'error']);
    expect(error).toMatchObject({ level: 'error', context: 'meter refund' });
    expect(new Date(error.time).toISOString()).toBe(error.time);
    expect(error.error).toMatch(/^Error: store failed\n\s+at /);
    expect(error.error).toContain('caused by: Error: SQLITE_BUSY');
    expect(written).toHaveLength(4);
  });

  it('drops a line logged after close instead of writing to the closed file', async () => {
    const file = join(temp.make(), 'late.jsonl');
    const log = createServeLog({ level: 'info', dest: file });
    log.request(requestEvent(1));
    await log.close();
    log.error(new Error('late'), 'closing the database');
    // Lines are handed to the file at the end of the turn: give it a few.
    for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(lines(file)).toEqual([JSON.stringify({ level: 'info', ...requestEvent(1) })]);
  });

  it('leaves out what is below its level', async () => {
    const dir = temp.make();
    const warn = createServeLog({ level: 'warn', dest: join(dir, 'warn.jsonl') });
    const silent = createServeLog({ level: 'silent', dest: join(dir, 'silent.jsonl') });
    expect(warn.logsRequests).toBe(false);
    expect(silent.logsRequests).toBe(false);
    for (const log of [warn, silent]) {
      log.request(requestEvent(1));
      log.error(new Error('boom'), 'server');
      await log.close();
    }
    expect(lines(join(dir, 'warn.jsonl')).map((line) => (JSON.parse(line) as { level: string }).level)).toEqual(['error']);
    expect(lines(join(dir, 'silent.jsonl'))).toEqual([]);
  });

  it('writes a busy log in few large writes, every line intact (non-ASCII text included)', async () => {
    const file = join(temp.make(), 'busy.jsonl');
    const log = createServeLog({ level: 'info', dest: file });
    // Each fs.write wakes a thread-pool thread, which costs the event loop far more than the
    // bytes: 400 lines (about 90 KiB) handed over 20 a turn must leave in at most 3 writes.
    const write = vi.spyOn(fs, 'write');
    try {
      const events = Array.from({ length: 400 }, (_, i) => requestEvent(i));
      for (let i = 0; i < events.length; i++) {
        log.request(events[i]);
        if (i % 20 === 19) await new Promise((resolve) => setImmediate(resolve));
      }
      log.error(new Error('störung – 故障'), 'server');
      await log.close();
      expect(write.mock.calls.length).toBeGreaterThan(0);
      expect(write.mock.calls.length).toBeLessThanOrEqual(3);
      const written = lines(file);
      expect(written.slice(0, 400)).toEqual(events.map((event) => JSON.stringify({ level: 'info', ...event })));
      expect((JSON.parse(written[400]) as { error: string }).error).toMatch(/^Error: störung – 故障\n/);
      expect(written).toHaveLength(401);
    } finally {
      write.mockRestore();
    }
  });

  it('keeps every line whole and in order across many batches: multi-byte text, lines near and over the batch size', async () => {
    const file = join(temp.make(), 'mixed.jsonl');
    const log = createServeLog({ level: 'info', dest: file });
    let seed = 7;
    const random = (below: number) => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % below;
    const scripts = ['a', 'é', '故', '😀', '\u2028', '"\\'];
    const expected: Array<{ request: string } | { error: string }> = [];
    for (let i = 0; i < 600; i++) {
      const text = Array.from({ length: 1 + random(i % 50 === 0 ? 30_000 : 400) }, () => scripts[random(scripts.length)]).join('');
      if (i % 7 === 3) {
        // Some error lines are larger than the whole batch buffer (64 KiB, 3 bytes a character counted).
        log.error(new Error(text), 'server');
        expected.push({ error: text });
      } else {
        const event = { ...requestEvent(i), route: `/v1/${text}` };
        log.request(event);
        expected.push({ request: JSON.stringify({ level: 'info', ...event }) });
      }
      if (i % 25 === 24) await new Promise((resolve) => setImmediate(resolve));
    }
    await log.close();
    const written = lines(file);
    expect(written).toHaveLength(expected.length);
    expected.forEach((line, i) => {
      if ('request' in line) expect(written[i]).toBe(line.request);
      else expect((JSON.parse(written[i]) as { error: string }).error.startsWith(`Error: ${line.error}\n`)).toBe(true);
    });
  });

  it('at low traffic, hands a lone line to the file after a second, not only once 48 KiB have gathered', async () => {
    const file = join(temp.make(), 'quiet.jsonl');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const write = vi.spyOn(fs, 'write');
    const log = createServeLog({ level: 'info', dest: file });
    try {
      log.request(requestEvent(1));
      await vi.advanceTimersByTimeAsync(999);
      expect(write).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1);
      await vi.waitFor(() => expect(lines(file)).toEqual([JSON.stringify({ level: 'info', ...requestEvent(1) })]));
    } finally {
      vi.useRealTimers();
      write.mockRestore();
      await log.close();
    }
  });

  it('on an uncaught exception, logs it as fatal after every buffered line and exits 1', async () => {
    const file = join(temp.make(), 'crash.jsonl');
    const logModule = pathToFileURL(join(REPO_ROOT, 'src/cli/log.ts')).href;
    const script = `
      import { createServeLog, flushOnFatal } from ${JSON.stringify(logModule)};
      const log = createServeLog({ level: 'info', dest: ${JSON.stringify(file)} });
      flushOnFatal(log, (text) => process.stderr.write(text + '\\n'));
      for (let i = 0; i < 5; i++) log.request({ time: new Date().toISOString(), request_id: 'req_' + i, method: 'GET', route: '/healthz', product: null, status: 200, error_code: null, latency_ms: 0.1, client_ip: '127.0.0.1' });
      setTimeout(() => { throw new Error('kaboom'); }, 10);
    `;
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stderr });
      });
    });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('seclookup: fatal error, exiting: Error: kaboom');
    const written = lines(file).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(written.map((line) => line.request_id ?? line.level)).toEqual(['req_0', 'req_1', 'req_2', 'req_3', 'req_4', 'fatal']);
    expect(written[5]).toMatchObject({ context: 'uncaughtException' });
    expect(written[5].error).toMatch(/^Error: kaboom\n/);
  });
});

describe('a log destination that stops taking lines', () => {
  /** Lines of about 250 bytes, handed over a turn at a time as serve's would be. */
  /** Everything a non-blocking reader can read now (a FIFO's read end). */
  function readAvailable(reader: number): string {
    const chunk = Buffer.alloc(64 * 1024);
    let text = '';
    for (;;) {
      try {
        const n = fs.readSync(reader, chunk);
        if (n === 0) return text;
        text += chunk.toString('utf8', 0, n);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return text;
        throw error;
      }
    }
  }

  async function logLines(log: ReturnType<typeof createServeLog>, count: number, from = 0): Promise<void> {
    for (let i = from; i < from + count; i++) {
      log.request(requestEvent(i));
      if (i % 200 === 199) await new Promise((resolve) => setImmediate(resolve));
    }
  }

  it('a full disk (/dev/full): the error reported once, lines past the backlog dropped and counted, close prompt', async () => {
    const writeErrors: string[] = [];
    const backlogFull: number[] = [];
    const log = createServeLog({
      level: 'info',
      dest: '/dev/full',
      backlogBytes: 256 * 1024,
      onWriteError: (error) => writeErrors.push((error as NodeJS.ErrnoException).code!),
      onBacklogFull: (bytes) => backlogFull.push(bytes),
    });
    // About 2.5 MB of lines: ten times the backlog. Before the bound, all of it stayed in memory.
    await logLines(log, 10_000);
    await vi.waitFor(() => expect(log.droppedLines).toBeGreaterThan(8_000));
    expect(writeErrors).toEqual(['ENOSPC']);
    expect(backlogFull).toEqual([256 * 1024]);
    // What is held is the backlog at most: every line not dropped fits in it.
    const lineBytes = requestLine(requestEvent(5_000)).length;
    expect(10_000 - log.droppedLines).toBeLessThanOrEqual(Math.ceil((256 * 1024) / lineBytes) + 200);
    // serve's metric reads the same count at each scrape.
    const registry = new Registry();
    await countDroppedLogLines(registry, log);
    expect((await registry.getSingleMetricAsString('seclookup_log_lines_dropped_total')).split('\n').at(-1)).toBe(
      `seclookup_log_lines_dropped_total ${log.droppedLines}`,
    );
    const started = Date.now();
    await log.close(10_000);
    // The failed write ends the close: it does not wait out its timeout.
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a stalled reader: lines past the backlog dropped; once the reader catches up, later lines are written again', async () => {
    const fifo = join(temp.make(), 'log.fifo');
    execFileSync('mkfifo', [fifo]);
    // Opened for reading first (without blocking), so the log's open for writing does not wait.
    const reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    const backlogFull: number[] = [];
    const log = createServeLog({ level: 'info', dest: fifo, backlogBytes: 256 * 1024, onBacklogFull: (bytes) => backlogFull.push(bytes) });
    try {
      await logLines(log, 4_000);
      await vi.waitFor(() => expect(log.droppedLines).toBeGreaterThan(0));
      expect(backlogFull).toEqual([256 * 1024]);
      const dropped = log.droppedLines;
      let read = '';
      const readAll = () => void (read += readAvailable(reader));
      // The reader catches up: it reads until every line not dropped has reached it (a pause in
      // the flow proves nothing on a loaded machine).
      const kept = 4_000 - dropped;
      const linesRead = () => read.split('\n').length - 1;
      await vi.waitFor(
        () => {
          readAll();
          expect(linesRead()).toBe(kept);
        },
        { timeout: 10_000, interval: 5 },
      );
      expect(read.length).toBeGreaterThan(256 * 1024);
      // Writing again: a line logged now arrives whole, after the backlog.
      log.request(requestEvent(9_999));
      let closed = false;
      const closing = log.close(5_000).then(() => (closed = true));
      while (!closed) {
        readAll();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await closing;
      readAll();
      const lines = read.split('\n').filter((line) => line !== '');
      expect(lines.at(-1)).toBe(JSON.stringify({ level: 'info', ...requestEvent(9_999) }));
      expect(lines).toHaveLength(4_000 - dropped + 1);
      expect(log.droppedLines).toBe(dropped);
    } finally {
      fs.closeSync(reader);
    }
  });

  it('says so once; every line it did not get is counted as dropped, the batch being written when it went included (found by a reviewer)', async () => {
    const fifo = join(temp.make(), 'gone.fifo');
    execFileSync('mkfifo', [fifo]);
    const reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    let gone = 0;
    const log = createServeLog({ level: 'info', dest: fifo, onReaderGone: () => gone++ });
    let read = '';
    const readAll = () => void (read += readAvailable(reader));
    // 1,000 lines read whole; then the reader leaves, and 3,000 more are logged.
    await logLines(log, 1_000);
    await vi.waitFor(
      () => {
        readAll();
        expect(read.split('\n').length - 1).toBe(1_000);
      },
      { timeout: 10_000, interval: 5 },
    );
    fs.closeSync(reader);
    await logLines(log, 3_000);
    await log.close(5_000);
    expect(gone).toBe(1);
    expect(log.droppedLines).toBe(3_000);
  });
});

describe('requestLine', () => {
  it('writes the same bytes as JSON.stringify for any request event, odd methods and null fields included', () => {
    fc.assert(
      fc.property(
        fc.record({
          time: fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString()),
          request_id: fc.stringMatching(/^req_[0-9a-f]{32}$/),
          method: fc.string(),
          route: fc.oneof(fc.constant('unmatched'), fc.string()),
          product: fc.option(fc.constantFrom(...PRODUCT_IDS)),
          status: fc.integer({ min: 100, max: 599 }),
          error_code: fc.option(fc.constantFrom(...(Object.keys(ERROR_STATUS) as ErrorCode[]))),
          latency_ms: fc.double({ min: 0, max: 1e6, noNaN: true }).map((ms) => Math.round(ms * 1000) / 1000),
          client_ip: fc.option(fc.oneof(fc.ipV4(), fc.constant('2001:db8::1'))),
        }),
        (event) => {
          expect(requestLine(event)).toBe(`${JSON.stringify({ level: 'info', ...event })}\n`);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('keeps each line right when one route answers by turns with other methods, statuses, errors and products', () => {
    // The line's middle is remembered per route: every field it holds must be compared.
    const variants: Partial<RequestLogEvent>[] = [
      {},
      {},
      { status: 429, error_code: 'rate_limit_exceeded' },
      { status: 429, error_code: 'quota_exceeded' },
      { method: 'POST' },
      { method: 'HEAD' },
      { product: null },
      { product: 'geoip' },
      { route: '/v1/geoip/lookup', product: 'geoip' },
      {},
    ];
    for (const [i, variant] of [...variants, ...variants].entries()) {
      const event = { ...requestEvent(i), status: 200, error_code: null, ...variant };
      expect(requestLine(event)).toBe(`${JSON.stringify({ level: 'info', ...event })}\n`);
    }
  });
});

describe('the line batch', () => {
  it('never writes again into bytes it handed over; full batches leave as they are, small ones as copies of their size', () => {
    const handed: Array<{ bytes: Buffer; asHanded: Buffer }> = [];
    const batch = createLineBatch({ writeBytes: (bytes) => handed.push({ bytes, asHanded: Buffer.from(bytes) }) }, 48 * 1024);
    const lines = Array.from({ length: 2_000 }, (_, i) => `${JSON.stringify({ i, text: 'é故😀'.repeat(i % 40) })}\n`);
    for (const line of lines) batch.write(line);
    // Up to the next full hand-over, then one short line that leaves alone at `end`.
    for (let i = 0, count = handed.length; handed.length === count; i++) lines.push(`{"more":${i}}\n`), batch.write(lines.at(-1)!);
    lines.push('{"last":true}\n');
    batch.write(lines.at(-1)!);
    batch.end();
    expect(handed.length).toBeGreaterThan(3);
    // What was handed over is what it was then: later lines went elsewhere.
    for (const { bytes, asHanded } of handed) expect(bytes.equals(asHanded)).toBe(true);
    expect(Buffer.concat(handed.map(({ bytes }) => bytes)).toString('utf8')).toBe(lines.join(''));
    expect(handed[0].bytes.buffer.byteLength).toBe(64 * 1024);
    const last = handed.at(-1)!.bytes;
    expect(last.toString()).toBe('{"last":true}\n');
    expect(last.buffer.byteLength).toBe(last.length);
  });

  it("at a turn's end, a destination that holds what it is given (a stalled reader) holds only the lines, not the batch's buffer", async () => {
    const handed: Buffer[] = [];
    const batch = createLineBatch({ writeBytes: (bytes) => handed.push(bytes) }, 0);
    for (let turn = 0; turn < 5; turn++) {
      batch.write(`{"turn":${turn}}\n`);
      await new Promise((resolve) => setImmediate(resolve));
    }
    batch.end();
    expect(handed.map((bytes) => bytes.toString())).toEqual([0, 1, 2, 3, 4].map((turn) => `{"turn":${turn}}\n`));
    for (const bytes of handed) expect(bytes.buffer.byteLength).toBe(bytes.length);
  });
});
