/** `seclookup reports add|import|dispute|list` through the built CLI, and `lookup scamrisk` reading the same file. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
    expect(await runCliJson(['reports', 'import', file, '--json', '--db', db])).toEqual({ imported: 2, first_id: 2, last_id: 3 });

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

    expect(await runCliJson(['reports', 'dispute', '1', '--json', '--db', db])).toMatchObject({ id: 1, disputed: true });
    expect(await runCliJson(['reports', 'dispute', '1', '--undo', '--json', '--db', db])).toMatchObject({ id: 1, disputed: false });
  });

  it('refuses bad input with the right exit codes; a bad import line imports nothing', async () => {
    const dir = temp.make();
    const db = join(dir, 'seclookup.db');
    expect((await runCli(['reports', 'add', 'email', 'nope', '--category', 'scam', '--db', db])).code).toBe(1);
    expect((await runCli(['reports', 'add', 'fax', '123', '--category', 'scam', '--db', db])).code).toBe(2);
    expect((await runCli(['reports', 'add', 'email', 'a@example.com', '--db', db])).code).toBe(2);
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
