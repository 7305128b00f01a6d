import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LookupError } from '../../errors.js';
import type { QueryParams } from '../../lib/query.js';
import { defineProduct, type DatasetUpdateReport, type EngineContext } from '../module.js';
import type { ExtraRoute } from '../route.js';
import { checkPwbreachOptions, createPwbreachEngine, STORE_FILE, type PwbreachEngine, type RangeQuery } from './engine.js';
import { describePartialFolder, formatBytes, ImportRefused, importBreachFiles, type ImportReport } from './import.js';
import { RECORD_BYTES } from './store.js';
import type { PwbreachEngineOptions, PwbreachInput } from './types.js';
import { checkUpstreamUrl } from './upstream.js';
import { PWBREACH_DOC } from './doc.js';

// This product's engine type, for the modules that `need` it (EngineContext.engine).
declare module '../module.js' {
  interface ProductEngines {
    pwbreach: PwbreachEngine;
  }
}

/**
 * A password in a URL ends up in access logs, proxies and browser history: refused wherever it
 * appears, on every pwbreach route, under any case of its name (`?Password=`).
 */
function refusePasswordInUrl(query: QueryParams, code: 'invalid_password' | 'invalid_request' = 'invalid_password'): void {
  if (query.names().some((name) => name.toLowerCase() === 'password')) {
    throw new LookupError(code, 'passwords must never be sent in a URL: POST them in the body, or send their SHA-1 as ?sha1=');
  }
}

/** `Add-Padding: true`, as the public range API reads it. */
function wantsPadding(value: string | string[] | undefined): boolean {
  const first = Array.isArray(value) ? value[0] : value;
  return first?.trim().toLowerCase() === 'true';
}

/**
 * Beyond SPEC: `GET /v1/pwbreach/range/{prefix}`, the public range API's answer for clients that
 * keep k-anonymity against this server too (they send 5 hex digits, never the hash).
 */
const RANGE_ROUTE: ExtraRoute<PwbreachEngine, RangeQuery> = {
  method: 'GET',
  path: 'range/:prefix',
  inputError: 'invalid_request',
  prepare(engine, { pathValue, query, headers }) {
    // The range route's input error is invalid_request (it takes no password at all).
    refusePasswordInUrl(query, 'invalid_request');
    const mode = query.get('mode');
    if (mode !== null && mode.toLowerCase() !== 'sha1') throw new LookupError('invalid_request', 'only SHA-1 ranges are served (mode=sha1)');
    return engine.prepareRange(pathValue ?? '', wantsPadding(headers['add-padding']));
  },
  lookup: (engine, query) => engine.rangeAnswer(query),
};

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The password piped to `lookup pwbreach -`, one final line break dropped. Bytes that are not
 * UTF-8 (a Latin-1 file or terminal) are refused, as the API refuses such a body: read leniently
 * they would become U+FFFD, and the answer would be about a password nobody typed.
 */
function stdinPassword(): string {
  const bytes = readFileSync(0);
  let text: string;
  try {
    text = STRICT_UTF8.decode(bytes);
  } catch {
    throw new LookupError('invalid_password', 'the password on stdin is not UTF-8 text');
  }
  return text.replace(/\r?\n$/, '');
}

/** Said by `serve`, `lookup pwbreach` and `doctor`: most breached passwords are not in the sample. */
const SAMPLE_WARNING =
  'answers from the bundled 7,534-hash sample, so most breached passwords come back not breached; import the full corpus (seclookup data import pwbreach FILE) or set an upstream (--pwbreach-upstream URL)';

/** pwbreach: is a password (or its SHA-1) in the breach data, and how often? */
export default defineProduct({
  id: 'pwbreach',
  optionNames: { store: true, memoryMaxBytes: true, upstream: true, cacheSize: true, cacheTtlMs: true },
  checkOptions: (options) => checkPwbreachOptions(options),
  createEngine: ({ dataDir, options, cache, outbound }: EngineContext<PwbreachEngineOptions>) =>
    createPwbreachEngine({ dataDir, options, cache: (settings) => cache<string>(settings), slots: outbound().slots }),
  // SPEC: POST JSON { password } or { sha1 } (or a form field password); GET ?sha1= only. No path form.
  routes: [
    {
      method: 'POST',
      path: 'lookup',
      inputError: 'invalid_password',
      args: ({ query, body }): [PwbreachInput] => {
        refusePasswordInUrl(query);
        return [{ password: body?.password, sha1: body?.sha1 } as PwbreachInput];
      },
    },
    {
      method: 'GET',
      path: 'lookup',
      inputError: 'invalid_password',
      args: ({ query }): [PwbreachInput] => {
        refusePasswordInUrl(query);
        return [{ sha1: query.get('sha1') ?? '' }];
      },
    },
  ],
  // SHA-1 hashes only: a password never goes into a batch.
  batch: { input: 'sha1', args: (value): [PwbreachInput] => [{ sha1: value }] },
  extraRoutes: [RANGE_ROUTE],
  // Neither the sample nor a store written by `data import` records the corpus's date: undated.
  datasetAges: (engine) =>
    engine.source === 'upstream' ? [] : [{ dataset: engine.source === 'sample' ? 'pwned-sample.txt' : 'passwords.pwb', builtAtMs: null }],
  doc: PWBREACH_DOC,
  doctor: {
    upstream: (options) => {
      const upstream = options?.upstream;
      const url = typeof upstream === 'string' ? upstream : (upstream as { url?: unknown } | undefined)?.url;
      return typeof url === 'string' ? { url: url.replaceAll('{prefix}', '00000'), why: 'the range API --pwbreach-upstream names' } : undefined;
    },
    check: (engine) =>
      engine.source === 'sample'
        ? [{ level: 'warn', check: 'corpus', message: SAMPLE_WARNING }]
        : [
            {
              level: 'ok',
              check: 'corpus',
              message: engine.source === 'upstream' ? 'answers from the upstream range API' : `${engine.records.toLocaleString('en-US')} hashes`,
            },
          ],
  },
  cli: {
    input: 'a password, - to read it from stdin (keeps it out of shell history), or a SHA-1 (40 hex digits)',
    example: '- <<< "correct horse battery staple"',
    args: (input): [PwbreachInput] => {
      if (input === '-') return [stdinPassword()];
      return [/^[0-9a-f]{40}$/i.test(input) ? { sha1: input } : input];
    },
    settings: {
      'pwbreach-upstream': {
        help: 'ask a range API: URL with {prefix} (default: the local store)',
        apply: (value) => ({ upstream: checkUpstreamUrl(value) }),
      },
      'pwbreach-store': {
        help: `store file from \`data import pwbreach\` (default: DATA_DIR/${STORE_FILE}, else the bundled sample)`,
        apply: (value) => ({ store: value }),
      },
    },
  },
  dataset: {
    help: `pwbreach imports the Pwned Passwords data you downloaded (the official downloader's
output): a file of HASH:COUNT lines (40 hex digits), and/or per-prefix files of
SUFFIX:COUNT lines named by their prefix (00000.txt, ...) or the folder holding them.
Sorted or not, CRLF or LF. It writes DATA_DIR/${STORE_FILE} (or --out FILE), 21 bytes
per hash plus a 4 MB index, replacing the previous store atomically. A hash listed twice
keeps its largest count. Corrupt lines refuse the import (the store is unchanged) unless
--skip-corrupt; either way their count and first line numbers are printed. A folder
of per-prefix files must hold all 1,048,576 prefixes (a missing one would make every
password under it read "not breached"); --allow-partial imports one that does not, with a
warning. Unsorted input is read twice: from a pipe it is refused (sort it, or save it to a
file).`,
    async import({ dataDir, files, out, skipCorrupt, tmpDir, allowPartial, onProgress, onProgressBar }) {
      const target = out ?? join(dataDir, STORE_FILE);
      try {
        const report = await importBreachFiles(files, { out: target, skipCorrupt, tmpDir, allowPartial, onProgress, onProgressBar });
        return describeImport(report, out !== undefined);
      } catch (error) {
        if (!(error instanceof ImportRefused)) throw error;
        return { summary: `pwbreach: ${summaryOf(error.report)}; nothing imported`, ok: false, notes: [error.message, ...ignoredNotes(error.report)] };
      }
    },
  },
});

function summaryOf(report: ImportReport): string {
  const rate = report.seconds > 0 ? Math.round(report.lines / report.seconds) : report.lines;
  return (
    `${report.lines.toLocaleString('en-US')} lines in ${report.files} file(s) (${formatBytes(report.bytes)}, ${report.sorted ? 'sorted' : `unsorted, ${report.buckets} bucket(s)`}) ` +
    `in ${report.seconds.toFixed(2)} s (${rate.toLocaleString('en-US')} lines/s): ${report.hashes.toLocaleString('en-US')} hashes, ` +
    `${report.duplicates.toLocaleString('en-US')} duplicates merged, ${report.padding.toLocaleString('en-US')} padding lines skipped, ${report.corrupt.toLocaleString('en-US')} corrupt`
  );
}

function ignoredNotes(report: ImportReport): string[] {
  if (report.ignored.length === 0) return [];
  const shown = report.ignored.slice(0, 3).join(', ');
  return [
    `ignored ${report.ignored.length} folder entr${report.ignored.length === 1 ? 'y' : 'ies'} not named by a prefix (${shown}${report.ignored.length > 3 ? ', ...' : ''})`,
  ];
}

/** The importer's report as the CLI prints it. */
function describeImport(report: ImportReport, customOut: boolean): DatasetUpdateReport {
  const summary = `pwbreach: ${summaryOf(report)}; wrote ${report.out} (${formatBytes(report.storeBytes)}: ${RECORD_BYTES} bytes per hash + 4 MB index)`;
  const notes = [...report.partial.map((gap) => `warning: ${describePartialFolder(gap)} (imported as it is: --allow-partial)`), ...ignoredNotes(report)];
  if (report.corrupt > 0) notes.push(`skipped ${report.corrupt} corrupt line(s), first at ${report.corruptAt.join(', ')}`);
  if (report.capped > 0) notes.push(`${report.capped} count(s) above 268,435,455 stored as 268,435,455`);
  notes.push(customOut ? `Serve it with \`seclookup serve --pwbreach-store ${report.out}\`.` : 'Restart `seclookup serve` to use the new store.');
  return { summary, ok: true, notes };
}
