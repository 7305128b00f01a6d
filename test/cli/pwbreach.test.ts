/**
 * pwbreach through the built CLI: `seclookup data import pwbreach` (both formats, the progress
 * bar, corrupt input refused with exit 1 and the store unchanged), `seclookup lookup pwbreach`
 * with the password on stdin, and `seclookup serve` answering every form while its request log
 * (and every answer) stays free of the password and the hash.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeHashFile } from '../../src/products/pwbreach/testdata.js';
import { CLI_PATH, cliEnv, createTempDirs, outcomeOf, REPO_ROOT, runCli, runCliJson, type CliResult } from './harness.js';
import { running, startServe } from './serve-process.js';

const SAMPLE = join(REPO_ROOT, 'data', 'pwbreach', 'pwned-sample.txt');
const sampleLines = readFileSync(SAMPLE, 'utf8').split('\n').filter(Boolean);
const sha1 = (text: string) => createHash('sha1').update(text, 'utf8').digest('hex').toUpperCase();
const countIn = (lines: string[], hash: string) => Number(lines.find((line) => line.startsWith(hash))?.split(':')[1] ?? 0);

const temp = createTempDirs();
afterAll(() => temp.cleanup());

/**
 * Run `node dist/cli.js` in a child process whose stdin is a pipe fed by `cat FILE`, as in
 * `cat FILE | seclookup ...` (Node's own stdio pipes are sockets, which /dev/stdin cannot open).
 */
function runCliFromPipe(file: string, args: string[]): Promise<CliResult> {
  const script = 'file=$1; shift; cat "$file" | exec "$@"';
  return outcomeOf(
    spawn('sh', ['-c', script, 'sh', file, process.execPath, CLI_PATH, ...args], { env: cliEnv(), cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
}

/** Run the CLI with `input` on its stdin. */
function runWithStdin(args: string[], input: string | Buffer): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI_PATH, ...args], { env: cliEnv(), cwd: tmpdir(), stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end(input);
  return outcomeOf(child);
}

describe('seclookup data import pwbreach', () => {
  it('imports a HASH:COUNT file into the data folder, which lookup then reads', async () => {
    const dataDir = temp.make();
    // A third of the sample, so the imported store and the bundled sample answer differently.
    const lines = sampleLines.filter((_, i) => i % 3 === 0);
    const input = join(temp.make(), 'pwned.txt');
    writeFileSync(input, lines.join('\r\n'));
    const result = await runCli(['data', 'import', 'pwbreach', input, '--data-dir', dataDir]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      new RegExp(
        `^pwbreach: ${lines.length.toLocaleString('en-US')} lines in 1 file\\(s\\) .*sorted.* ${lines.length.toLocaleString('en-US')} hashes, 0 duplicates merged, 0 padding lines skipped, 0 corrupt; wrote .*passwords\\.pwb \\(.*21 bytes per hash`,
        'm',
      ),
    );
    expect(result.stderr).toMatch(/Restart `seclookup serve`/);
    // No bar when stderr is not a terminal.
    expect(result.stderr).not.toMatch(/\[#/);

    const listed = lines[0].split(':')[0];
    const unlisted = sampleLines[1].split(':')[0];
    expect(
      await Promise.all([
        runCliJson(['lookup', 'pwbreach', listed.toLowerCase(), '--data-dir', dataDir]),
        runCliJson(['lookup', 'pwbreach', unlisted, '--data-dir', dataDir]),
      ]),
    ).toEqual([
      { breached: true, count: countIn(lines, listed) },
      { breached: false, count: 0 },
    ]);
  });

  it('imports a folder of per-prefix files to --out with a progress bar, served with --pwbreach-store', async () => {
    const folder = temp.make();
    const lines = sampleLines.slice(0, 200);
    for (const line of lines) writeFileSync(join(folder, `${line.slice(0, 5)}.txt`), `${line.slice(5)}\r\n`, { flag: 'a' });
    const out = join(temp.make(), 'breach.pwb');
    // 200 of the 1,048,576 prefixes: a partial folder, imported only with --allow-partial.
    const result = await runCli(['data', 'import', 'pwbreach', folder, '--out', out, '--progress', '--allow-partial']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/\r\[#+\.*\] +\d+% reading [\d.]+ KB of [\d.]+ KB/);
    expect(result.stderr).toMatch(/100% reading/);
    expect(result.stderr).toContain(`--pwbreach-store ${out}`);
    const hash = lines[10].split(':')[0];
    const expected = { breached: true, count: countIn(lines, hash) };
    expect(
      await Promise.all([
        runCliJson(['lookup', 'pwbreach', hash, '--pwbreach-store', out]),
        runCliJson(['lookup', 'pwbreach', hash], { env: { SECLOOKUP_PWBREACH_STORE: out } }),
      ]),
    ).toEqual([expected, expected]);
  });

  it('refuses corrupt input with exit 1, the line numbers and the store unchanged; --skip-corrupt imports the rest', async () => {
    const dataDir = temp.make();
    const store = join(dataDir, 'pwbreach', 'passwords.pwb');
    expect((await runCli(['data', 'import', 'pwbreach', SAMPLE, '--data-dir', dataDir])).code).toBe(0);
    const before = readFileSync(store);
    const input = join(temp.make(), 'damaged.txt');
    writeFileSync(input, [sampleLines[0], 'hunter2', sampleLines[1], `${sampleLines[2].slice(0, 30)}:9`].join('\n'));

    const refused = await runCli(['data', 'import', 'pwbreach', input, '--data-dir', dataDir]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/2 corrupt; nothing imported/);
    expect(refused.stderr).toContain(`2 corrupt line(s), first at ${input}:2, ${input}:4; nothing was imported (the store is unchanged)`);
    expect(refused.stdout + refused.stderr).not.toContain('hunter2');
    expect(readFileSync(store).equals(before)).toBe(true);

    const skipped = await runCli(['data', 'import', 'pwbreach', input, '--data-dir', dataDir, '--skip-corrupt']);
    expect(skipped.code).toBe(0);
    expect(skipped.stdout).toMatch(/2 hashes/);
    expect(skipped.stderr).toContain(`skipped 2 corrupt line(s), first at ${input}:2, ${input}:4`);
  });

  it('exits 2 on usage errors, 1 for an input that does not exist, and lists import in data --help', async () => {
    const usage: [string[], RegExp][] = [
      [['data', 'import', 'pwbreach'], /missing FILE/],
      [['data', 'import'], /missing PRODUCT/],
      [['data', 'import', 'webhookip', 'x.txt'], /webhookip has no importable dataset; importable: pwbreach/],
      [['data', 'update', 'pwbreach'], /pwbreach has no updatable dataset/],
      [['data', 'import', 'pwbreach', 'x.txt', '--bogus'], /unknown option/],
    ];
    const [missing, help, ...results] = await Promise.all([
      runCli(['data', 'import', 'pwbreach', join(temp.make(), 'nope.txt'), '--data-dir', temp.make()]),
      runCli(['data', '--help']),
      ...usage.map(([args]) => runCli(args)),
    ]);
    results.forEach((result, i) => {
      expect(result.code, usage[i][0].join(' ')).toBe(2);
      expect(result.stderr).toMatch(usage[i][1]);
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/pwbreach import failed, dataset left unchanged: ENOENT/);
    expect(help.stdout).toMatch(/seclookup data import PRODUCT FILE\|DIR\.\.\./);
    expect(help.stdout).toMatch(/pwbreach imports the Pwned Passwords data/);
  });
});

describe('seclookup data import pwbreach: --out and --tmp-dir checked before any work', () => {
  it('refuses an --out that is a folder or in a folder that does not exist, and a --tmp-dir that does not exist, in one line each', async () => {
    const cwd = temp.make();
    const folder = temp.make();
    const cases: [string[], string][] = [
      [['--out', folder], `seclookup: --out ${folder} is a folder: give the path of the file to write\n`],
      [['--out', join(folder, 'no', 'x.pwb')], `seclookup: --out ${join(folder, 'no', 'x.pwb')}: the folder ${join(folder, 'no')} does not exist\n`],
      [['--out', join(folder, 'x.pwb'), '--tmp-dir', 'scratch'], `seclookup: --tmp-dir ${join(cwd, 'scratch')} does not exist: give an existing folder\n`],
      [['--data-dir', folder, '--tmp-dir', SAMPLE], `seclookup: --tmp-dir ${SAMPLE} is not a folder\n`],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(['data', 'import', 'pwbreach', SAMPLE, ...args], { cwd });
      expect(result.stderr, args.join(' ')).toBe(message);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
    }
    // Nothing staged, nothing created: no temporary store beside the folder, no scratch folder.
    expect(readdirSync(folder)).toEqual([]);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('takes a relative --tmp-dir from the working folder', async () => {
    const cwd = temp.make();
    mkdirSync(join(cwd, 'scratch'));
    const input = join(cwd, 'shuffled.txt');
    writeFileSync(input, [...sampleLines].reverse().join('\n'));
    const result = await runCli(['data', 'import', 'pwbreach', input, '--out', 'out.pwb', '--tmp-dir', 'scratch'], { cwd });
    expect(result.code).toBe(0);
    expect(readdirSync(cwd).sort()).toEqual(['out.pwb', 'scratch', 'shuffled.txt']);
    expect(readdirSync(join(cwd, 'scratch'))).toEqual([]);
  });
});

describe('seclookup data import pwbreach: input that would import part of the corpus', () => {
  it('refuses a folder lacking prefixes in one line, naming --allow-partial; with it the import says how many are missing', async () => {
    const folder = temp.make();
    const lines = sampleLines.slice(0, 20);
    for (const line of lines) writeFileSync(join(folder, `${line.slice(0, 5)}.txt`), `${line.slice(5)}\n`, { flag: 'a' });
    const missing = (2 ** 20 - new Set(lines.map((line) => line.slice(0, 5))).size).toLocaleString('en-US');
    const dataDir = temp.make();
    const refused = await runCli(['data', 'import', 'pwbreach', folder, '--data-dir', dataDir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `seclookup: pwbreach import failed, dataset left unchanged: ${folder} lacks ${missing} of the 1,048,576 prefix files (first missing: 00000, 00001, 00002, ...): every password under a missing prefix would read "not breached"; download the rest, or import it as it is with --allow-partial\n`,
    );
    expect(readdirSync(dataDir)).toEqual([]);

    const allowed = await runCli(['data', 'import', 'pwbreach', folder, '--data-dir', dataDir, '--allow-partial']);
    expect(allowed.code).toBe(0);
    expect(allowed.stderr).toContain(`warning: ${folder} lacks ${missing} of the 1,048,576 prefix files`);
    expect(allowed.stdout).toMatch(/20 hashes/);
    expect((await runCli(['data', '--help'])).stdout).toMatch(/--allow-partial +import: import input known to be incomplete/);
  });

  it('refuses unsorted input from a pipe (/dev/stdin), which cannot be read a second time, in one line; sorted input from a pipe imports', async () => {
    const folder = temp.make();
    const input = join(folder, 'hashes.txt');
    // About 4 MB: far more than a pipe holds, so the first pass stops with most of it still unread.
    writeHashFile(input, { records: 100_000, seed: 5 });
    const sorted = readFileSync(input, 'utf8').split('\n');
    const unsorted = join(folder, 'unsorted.txt');
    writeFileSync(unsorted, [sorted[1], sorted[0], ...sorted.slice(2)].join('\n'));
    const dataDir = temp.make();

    const refused = await runCliFromPipe(unsorted, ['data', 'import', 'pwbreach', '/dev/stdin', '--data-dir', dataDir]);
    expect(refused.stderr.trim().split('\n').at(-1)).toBe(
      'seclookup: pwbreach import failed, dataset left unchanged: /dev/stdin:2: hashes are not in ascending order, and /dev/stdin is not a regular file, which unsorted input must be (it is read twice): sort the input first (LC_ALL=C sort) or save it to a file and import that',
    );
    expect(refused.code).toBe(1);
    expect(readdirSync(join(dataDir, 'pwbreach'))).toEqual([]); // no store, no leftovers

    const imported = await runCliFromPipe(input, ['data', 'import', 'pwbreach', '/dev/stdin', '--data-dir', dataDir]);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toMatch(/ 100,\d{3} hashes/);
  }, 30_000);

  it('refuses a --data-dir that does not exist instead of creating it', async () => {
    const typo = join(temp.make(), 'dta');
    const result = await runCli(['data', 'import', 'pwbreach', SAMPLE, '--data-dir', typo]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`seclookup: ${typo} does not exist: check --data-dir (seclookup data init makes a data folder)\n`);
    expect(existsSync(typo)).toBe(false);
  });
});

describe('seclookup lookup pwbreach', () => {
  it('reads the password from stdin with -, and refuses an empty one with exit 1 and invalid_password', async () => {
    const [found, empty] = await Promise.all([runWithStdin(['lookup', 'pwbreach', '-'], '123456\n'), runWithStdin(['lookup', 'pwbreach', '-'], '\n')]);
    expect(found.code).toBe(0);
    expect(JSON.parse(found.stdout)).toEqual({ breached: true, count: countIn(sampleLines, sha1('123456')) });
    expect(empty.code).toBe(1);
    // The sample warning first, then the error as one JSON line.
    const [warning, error] = empty.stderr.trim().split('\n');
    expect(warning).toMatch(/^seclookup: warning: pwbreach answers from the bundled 7,534-hash sample/);
    expect(JSON.parse(error)).toMatchObject({ error_code: 'invalid_password' });
  });

  // Found by a reviewer: a Latin-1 é was read as U+FFFD, and the answer (exit 0) was about that password.
  it('refuses a password on stdin that is not UTF-8 with exit 1 and invalid_password; the same in UTF-8 is read', async () => {
    const [latin1, utf8] = await Promise.all([
      runWithStdin(['lookup', 'pwbreach', '-'], Buffer.from('caf\u00e9\n', 'latin1')),
      runWithStdin(['lookup', 'pwbreach', '-'], Buffer.from('caf\u00e9\n', 'utf8')),
    ]);
    expect(latin1.code).toBe(1);
    expect(JSON.parse(latin1.stderr.trim().split('\n').at(-1)!)).toMatchObject({ error_code: 'invalid_password' });
    expect(latin1.stdout).toBe('');
    expect(utf8.code).toBe(0);
    expect(JSON.parse(utf8.stdout)).toEqual({ breached: false, count: 0 });
  });

  it('says in one line, exit 1, when stdin cannot be read (a folder given as stdin)', async () => {
    const folder = openSync(tmpdir(), 'r');
    try {
      const result = await new Promise<CliResult>((resolve, reject) => {
        const child = spawn(process.execPath, [CLI_PATH, 'lookup', 'pwbreach', '-'], { env: cliEnv(), cwd: tmpdir(), stdio: [folder, 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
        child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^seclookup: cannot read the input: EISDIR: illegal operation on a directory, read$/m);
      expect(result.stderr).not.toContain('unexpected error');
      expect(result.stderr).not.toMatch(/\n\s+at /);
    } finally {
      closeSync(folder);
    }
  });
});
describe('seclookup serve: pwbreach', () => {
  it('answers every form and never writes the password or its hash to the log or an answer', async () => {
    const dir = temp.make();
    const db = join(dir, 'serve.db');
    const { secret_key: key } = await runCliJson<{ secret_key: string }>(['keys', 'create', '--product', 'pwbreach', '--json', '--db', db]);
    // In this process: its log and stderr are serve's own, read as the binary's would be.
    const { serve, baseUrl } = await startServe(db);
    try {
      const password = 'hunter2-serve-secret';
      const hash = sha1(password);
      const known = sha1('123456');
      const auth = { authorization: `Bearer ${key}` };
      const answers: string[] = [];
      const send = async (path: string, init: RequestInit = {}) => {
        const response = await fetch(baseUrl + path, { ...init, headers: { ...auth, ...(init.headers as Record<string, string>) } });
        const text = await response.text();
        answers.push(text, JSON.stringify([...response.headers]));
        return { status: response.status, text };
      };
      const json = { 'content-type': 'application/json' };
      expect(await send('/v1/pwbreach/lookup', { method: 'POST', headers: json, body: JSON.stringify({ password }) })).toMatchObject({ status: 200 });
      expect(
        JSON.parse((await send('/v1/pwbreach/lookup', { method: 'POST', headers: json, body: JSON.stringify({ password: '123456' }) })).text),
      ).toMatchObject({ breached: true, count: countIn(sampleLines, known) });
      expect(
        await send('/v1/pwbreach/lookup', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `password=${password}` }),
      ).toMatchObject({ status: 200 });
      expect(await send(`/v1/pwbreach/lookup?sha1=${hash.toLowerCase()}`)).toMatchObject({ status: 200 });
      expect(await send(`/v1/pwbreach/lookup?password=${password}`)).toMatchObject({ status: 400 });
      expect(await send(`/v1/pwbreach/lookup/${password}`)).toMatchObject({ status: 404 });
      expect(await send(`/v1/pwbreach/lookup/${hash}`)).toMatchObject({ status: 404 });
      const range = await send(`/v1/pwbreach/range/${known.slice(0, 5)}`, { headers: { 'add-padding': 'true' } });
      expect(range.status).toBe(200);
      expect(range.text.split('\r\n')).toContain(`${known.slice(5)}:${countIn(sampleLines, known)}`);

      expect(await serve.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      const lines = serve.logLines();
      expect(lines.filter((line) => line.product === 'pwbreach').map((line) => `${line.method} ${line.route} ${line.status}`)).toEqual([
        'POST /v1/pwbreach/lookup 200',
        'POST /v1/pwbreach/lookup 200',
        'POST /v1/pwbreach/lookup 200',
        'GET /v1/pwbreach/lookup 200',
        'GET /v1/pwbreach/lookup 400',
        'GET unmatched 404',
        'GET unmatched 404',
        'GET /v1/pwbreach/range/:prefix 200',
      ]);
      const everything = `${serve.stdoutLines.join('\n')}\n${serve.stderr}\n${answers.join('\n')}`.toUpperCase();
      for (const secret of [password.toUpperCase(), hash, hash.slice(5)]) expect(everything).not.toContain(secret);
    } finally {
      for (const left of running) await left.stop('SIGKILL');
    }
  });
});
