/**
 * Instructions per request, counted by valgrind's callgrind: `BENCH_COUNT=instructions npm run
 * bench -- routes`. A count does not move with the host's load the way CPU time does (on a loud
 * host bare Node's CPU per request was 3-4x its quiet figure), so a route can be compared with
 * itself across builds where throughput ratios move by a tenth from run to run. What it leaves
 * out: the kernel's work (reads, writes, epoll), and the speed of each instruction. What it gets
 * wrong: valgrind hides the CPU's SHA extensions, so OpenSSL hashes with AVX2 code, several
 * times the instructions; and time runs about fifty times slower, so work done once a
 * millisecond or from a timer lands on fewer requests and counts more per request than it costs
 * (docs/benchmarks.md says how to read the figures).
 *
 * A server runs under callgrind with collection off until `startCounting`; each window then
 * zeroes the counters, sends `requests` requests, and dumps: the figure is the fewest
 * instructions a request over the windows, which leaves out a window a major collection or a
 * recompilation fell into.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Whether valgrind is installed (Debian: `apt-get install valgrind`). */
export function haveValgrind(): boolean {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The command line that runs `node args...` under callgrind, its dumps written as
 * `<dir>/<name>.out.<n>`. `--smc-check` because V8 writes the code it runs; Node single-threaded
 * so that V8's collector and compiler do their work on the main thread, in step with the
 * requests, rather than on helper threads whose share of a window varies. Four runs of one route
 * repeated to 0.5% for the bare server and 3% for serve.
 */
export function underCallgrind(dir: string, name: string, nodeArgs: string[]): { command: string; args: string[] } {
  return {
    command: 'valgrind',
    args: [
      '-q',
      '--tool=callgrind',
      '--instr-atstart=no',
      '--smc-check=all-non-file',
      `--callgrind-out-file=${join(dir, `${name}.out`)}`,
      process.execPath,
      '--single-threaded',
      ...nodeArgs,
    ],
  };
}

/** Collection on from now (the warm-up before this was not counted). */
export async function startCounting(pid: number): Promise<void> {
  await run('callgrind_control', ['--instr=on', String(pid)]);
}

/**
 * The fewest instructions a request over `windows` windows of `requests` requests each, sent by
 * `send` (which must send exactly that many and throw on a wrong answer).
 */
export async function instructionsPerRequest(
  pid: number,
  dir: string,
  name: string,
  requests: number,
  windows: number,
  send: (requests: number) => Promise<void>,
): Promise<number> {
  let fewest = Number.POSITIVE_INFINITY;
  for (let window = 0; window < windows; window++) {
    await run('callgrind_control', ['--zero', String(pid)]);
    await send(requests);
    const dumped = dumpsOf(dir, name).length;
    await run('callgrind_control', ['--dump', String(pid)]);
    const dumps = dumpsOf(dir, name);
    if (dumps.length !== dumped + 1) throw new Error(`callgrind wrote ${dumps.length - dumped} dumps for ${name}, not one`);
    fewest = Math.min(fewest, totalOf(join(dir, dumps.at(-1)!)) / requests);
  }
  return fewest;
}

/** `<name>.out.<n>` files, oldest first. */
function dumpsOf(dir: string, name: string): string[] {
  const prefix = `${name}.out.`;
  return readdirSync(dir)
    .filter((file) => file.startsWith(prefix))
    .sort((a, b) => Number(a.slice(prefix.length)) - Number(b.slice(prefix.length)));
}

/** The instruction total of a callgrind dump (its `totals:` or `summary:` line). */
function totalOf(file: string): number {
  const match = /^(?:totals|summary): (\d+)/m.exec(readFileSync(file, 'utf8'));
  if (!match) throw new Error(`no totals in ${file}`);
  return Number(match[1]);
}
