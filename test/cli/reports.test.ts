/** `seclookup reports add|import|dispute|list` through the built CLI, and `lookup scamrisk` reading the same file. */
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createTempDirs, runCli, runCliJson } from './harness.js';

const temp = createTempDirs();
afterAll(() => temp.cleanup());

describe('seclookup reports', () => {
  it('adds (normalized), imports, lists, disputes; the assessment reads the same database', async () => {
    const dir = temp.make();
    const db = join(dir, 'seclookup.db');
    const added = await runCliJson<Record<string, unknown>>([
      'reports',
      'add',
      'email',
      'Bad.Actor@EXAMPLE.com',
      '--category',
      'phishing',
      '--verified',
      '--source',
      'desk',
      '--json',
      '--db',
      db,
    ]);
    expect(added).toMatchObject({ id: 1, type: 'email', identifier: 'bad.actor@example.com', category: 'phishing', verified: true, disputed: false });

    const file = join(dir, 'reports.jsonl');
    writeFileSync(
      file,
      [
        '{"type":"phone","value":"+1 415 555 0100","category":"fraud","source":"a"}',
        '# comment',
        '{"type":"username","value":"@Scammer","category":"scam","reported_at":"2024-01-01T00:00:00Z"}',
        '',
      ].join('\n'),
    );
    expect(await runCliJson(['reports', 'import', file, '--json', '--db', db])).toEqual({ imported: 2, skipped: 0, first_id: 2, last_id: 3 });

    const listed = await runCliJson<{ id: number; identifier: string; source: string }[]>(['reports', 'list', '--json', '--db', db]);
    expect(listed.map((r) => r.identifier).sort()).toEqual(['+14155550100', 'bad.actor@example.com', 'scammer']);
    expect(listed.find((r) => r.identifier === 'scammer')?.source).toBe('import');
    const filtered = await runCliJson<unknown[]>(['reports', 'list', '--type', 'phone', '--value', '+14155550100', '--json', '--db', db]);
    expect(filtered.length).toBe(1);

    const text = await runCli(['reports', 'list', '--db', db]);
    expect(text.stdout).toMatch(/^ID\s+TYPE\s+IDENTIFIER/);

    const assessed = await runCliJson<{ report_summary: unknown }>([
      'lookup',
      'scamrisk',
      '--type',
      'email',
      'bad.actor@example.com',
      '--scamrisk-reports',
      db,
      '--scamrisk-disable',
      'emailval,emailauth,whois',
    ]);
    expect(assessed.report_summary).toMatchObject({ total_reports: 1, verified_reports: 1, categories: ['phishing'] });
    // A mistyped report database is said, and not made: an empty one would quietly hold no reports.
    const typo = join(dirname(db), 'seclookup.bd');
    expect(
      await runCli(['lookup', 'scamrisk', '--type', 'username', 'scammer', '--scamrisk-reports', typo, '--scamrisk-disable', 'emailval,emailauth,whois']),
    ).toEqual({
      code: 1,
      stdout: '',
      stderr: `seclookup: no such file ${typo} (scamrisk's reports database): lookup reads it, and never creates one\n`,
    });
    expect(existsSync(typo)).toBe(false);

    expect(await runCliJson(['reports', 'dispute', '1', '--json', '--db', db])).toMatchObject({ id: 1, disputed: true });
    expect(await runCliJson(['reports', 'dispute', '1', '--undo', '--json', '--db', db])).toMatchObject({ id: 1, disputed: false });
    // No such report: the hint lists this --db file's reports, not ./seclookup.db's.
    expect(await runCli(['reports', 'dispute', '999', '--db', db])).toEqual({
      code: 1,
      stdout: '',
      stderr: `seclookup: no report 999; see \`seclookup reports list --db ${db}\`\n`,
    });
  });

  it('refuses bad input with the right exit codes; a bad import line imports nothing', async () => {
    const dir = temp.make();
    const db = join(dir, 'seclookup.db');
    expect((await runCli(['reports', 'add', 'email', 'nope', '--category', 'scam', '--db', db])).code).toBe(1);
    expect((await runCli(['reports', 'add', 'fax', '123', '--category', 'scam', '--db', db])).code).toBe(2);
    expect((await runCli(['reports', 'add', 'email', 'a@example.com', '--db', db])).code).toBe(2);
    // A source that turns the rest of its row around in `reports list` (U+202E), as a control character would break it.
    expect(await runCli(['reports', 'add', 'email', 'a@example.com', '--category', 'scam', '--source', 'desk\u202Eresu', '--db', db])).toMatchObject({
      code: 1,
      stderr: 'seclookup: source must hold no control or text-direction characters\n',
    });
    expect((await runCli(['reports', 'dispute', '42', '--db', db])).code).toBe(1);
    expect((await runCli(['reports'])).code).toBe(2);
    const file = join(dir, 'bad.jsonl');
    writeFileSync(file, '{"type":"email","value":"a@example.com","category":"scam"}\n{"type":"email","value":"bad","category":"scam"}\n');
    const result = await runCli(['reports', 'import', file, '--db', db]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/line 2/);
    expect(await runCliJson(['reports', 'list', '--json', '--db', db])).toEqual([]);
    expect((await runCli(['reports', '--help'])).stdout).toMatch(/reports import FILE/);
  });
});

describe('reports import: all or nothing, by the store own rules', () => {
  const good = '{"type":"domain","value":"good.example.com","category":"scam"}';
  const line = (extra: Record<string, unknown>) => JSON.stringify({ type: 'domain', value: 'bad.example.com', category: 'scam', ...extra });

  it.each([
    ['a note over 500 characters', line({ note: 'n'.repeat(501) }), 'line 2: note must be at most 500 characters (got 501)'],
    ['a time before 1970', line({ reported_at: '1960-01-01T00:00:00Z' }), 'line 2: reported_at must be a time from 1970 on'],
    [
      'a time in the future',
      line({ reported_at: '2999-01-01T00:00:00Z' }),
      'line 2: reported_at is in the future (2999-01-01T00:00:00.000Z; at most 5 minutes ahead of this clock)',
    ],
    ['verified that is not a boolean', line({ verified: 'yes' }), 'line 2: verified must be true or false'],
    // Date.parse took these (found by a reviewer): a day that does not exist, no offset (read in this machine's zone), not ISO.
    [
      'a day that does not exist',
      line({ reported_at: '2024-02-30' }),
      'line 2: reported_at is not an ISO 8601 date or time with its offset (got "2024-02-30")',
    ],
    [
      'a time without its offset',
      line({ reported_at: '2024-01-01T10:00' }),
      'line 2: reported_at is not an ISO 8601 date or time with its offset (got "2024-01-01T10:00")',
    ],
    [
      'a time that is not ISO 8601',
      line({ reported_at: '2024-01-01 12:00 PM' }),
      'line 2: reported_at is not an ISO 8601 date or time with its offset (got "2024-01-01 12:00 PM")',
    ],
    ['an empty source', line({ source: '' }), 'line 2: source must be 1 to 100 characters'],
    ['a source over 100 characters', line({ source: 's'.repeat(101) }), 'line 2: source must be 1 to 100 characters'],
    [
      'an unknown field',
      line({ verfied: true }),
      'line 2: unknown field "verfied"; fields: type, value, category, source, verified, note, region, reported_at',
    ],
    ['a JSON array', `[${line({})}]`, 'line 2: not a JSON object'],
  ])('refuses %s in one line, without a stack, and imports no line', async (_what, bad, message) => {
    const dir = temp.make();
    const db = join(dir, 'seclookup.db');
    const file = join(dir, 'reports.jsonl');
    writeFileSync(file, `${good}\n${bad}\n`);
    const result = await runCli(['reports', 'import', file, '--db', db]);
    expect(result.stderr).toBe(`${message}\nseclookup: 1 bad line(s) in ${file}; nothing imported\n`);
    expect(result.code).toBe(1);
    expect(await runCliJson(['reports', 'list', '--json', '--db', db])).toEqual([]);
  });

  it('imports a file again without filing its dated reports twice: a line with its own reported_at that is stored already (or twice in the file) is skipped', async () => {
    const dir = temp.make();
    const db = join(dir, 'seclookup.db');
    const file = join(dir, 'reports.jsonl');
    const dated = line({ reported_at: '2024-01-01T00:00:00Z' });
    writeFileSync(file, `${dated}\n${dated}\n${line({ reported_at: '2024-01-02T00:00:00Z' })}\n${good}\n`);
    expect(await runCliJson(['reports', 'import', file, '--json', '--db', db])).toEqual({ imported: 3, skipped: 1, first_id: 1, last_id: 3 });
    // Again: both dated reports are on file; the undated line is a report made now, and new.
    expect(await runCliJson(['reports', 'import', file, '--json', '--db', db])).toEqual({ imported: 1, skipped: 3, first_id: 4, last_id: 4 });
    expect((await runCli(['reports', 'import', file, '--db', db])).stdout).toBe(`imported 1 report(s) from ${file}; skipped 3 already filed\n`);
    // Another source (or note, category, verified) is another report.
    expect(await runCliJson(['reports', 'import', file, '--source', 'desk', '--json', '--db', db])).toMatchObject({ imported: 3, skipped: 1 });
    expect(await runCliJson<unknown[]>(['reports', 'list', '--json', '--db', db])).toHaveLength(8);
  });

  it('takes a time up to 5 minutes ahead (clock skew), a byte order mark, and --verified for every line', async () => {
    const dir = temp.make();
    const db = join(dir, 'seclookup.db');
    const file = join(dir, 'reports.jsonl');
    const soon = new Date(Date.now() + 4 * 60_000).toISOString();
    writeFileSync(file, `\uFEFF${good}\n${line({ reported_at: soon, verified: false })}\n`);
    expect(await runCliJson(['reports', 'import', file, '--verified', '--json', '--db', db])).toEqual({ imported: 2, skipped: 0, first_id: 1, last_id: 2 });
    const listed = await runCliJson<{ verified: boolean; reported_at: string }[]>(['reports', 'list', '--json', '--db', db]);
    expect(listed.map((r) => r.verified)).toEqual([true, true]);
    expect(listed.map((r) => r.reported_at)).toContain(soon);
  });

  it('writes the lines in one transaction: a failure inside it leaves none of them', async () => {
    const dir = temp.make();
    const db = join(dir, 'seclookup.db');
    expect((await runCli(['reports', 'list', '--db', db])).code).toBe(0);
    // A trigger refuses the third row, as a full disk or a lost lock would: after the first two were written.
    const sqlite = new Database(db);
    sqlite.exec(
      "CREATE TRIGGER refuse_third BEFORE INSERT ON scamrisk_reports WHEN NEW.identifier = 'third.example.com' BEGIN SELECT RAISE(ABORT, 'disk full'); END;",
    );
    sqlite.close();
    const file = join(dir, 'reports.jsonl');
    writeFileSync(
      file,
      ['first', 'second', 'third'].map((name) => JSON.stringify({ type: 'domain', value: `${name}.example.com`, category: 'scam' })).join('\n'),
    );
    const result = await runCli(['reports', 'import', file, '--db', db]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^seclookup: .*disk full/);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(await runCliJson(['reports', 'list', '--json', '--db', db])).toEqual([]);
  });
});

describe('reports add: the store rules, said in one line', () => {
  it('counts a note in characters, not UTF-16 units: 500 emoji are taken, 501 refused', async () => {
    const db = join(temp.make(), 'seclookup.db');
    const add = (note: string) => runCli(['reports', 'add', 'domain', 'evil.example.com', '--category', 'scam', '--note', note, '--json', '--db', db]);
    const fits = await add('😀'.repeat(500));
    expect([fits.code, fits.stderr]).toEqual([0, '']);
    expect(JSON.parse(fits.stdout)).toMatchObject({ note: '😀'.repeat(500) });
    const over = await add('😀'.repeat(501));
    expect([over.code, over.stderr]).toEqual([1, 'seclookup: note must be at most 500 characters (got 501)\n']);
    expect((await runCliJson<unknown[]>(['reports', 'list', '--json', '--db', db])).length).toBe(1);
  });

  it('a note over 500 characters, a source over 100, or an empty source is refused without a stack, and nothing is written', async () => {
    const db = join(temp.make(), 'seclookup.db');
    const add = (...extra: string[]) => runCli(['reports', 'add', 'domain', 'evil.example.com', '--category', 'scam', ...extra, '--db', db]);
    const note = await add('--note', 'n'.repeat(501));
    expect(note.stderr).toBe('seclookup: note must be at most 500 characters (got 501)\n');
    expect(note.code).toBe(1);
    const source = await add('--source', 's'.repeat(101));
    expect(source.stderr).toBe('seclookup: source must be 1 to 100 characters\n');
    expect(source.code).toBe(1);
    const empty = await add('--source', '');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('--source needs a value');
    expect(existsSync(db)).toBe(false);
  });
});
