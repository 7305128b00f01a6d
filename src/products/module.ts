/**
 * The contract of a product: everything seclookup needs to know about one product lives in
 * one module object in `src/products/<id>/index.ts`, listed once in `registry.ts`. From the
 * registry come `createLookup`'s methods, the API's routes and status extras, `seclookup
 * lookup`, `seclookup data update` and the bench runner.
 */
import type { ProductCache } from '../lib/cache.js';
import type { DnsResolver } from '../lib/dns/index.js';
import type { LookupOutcome, MaybePromise } from '../lib/outcome.js';
import type { OutboundGuard } from '../lib/outbound.js';
import type { ResolvedKey } from '../metering/types.js';
import type { ProductId } from './catalog.js';
import type { ExtraRoute, LookupRoute } from './route.js';
import type { ProductDoc } from '../openapi/types.js';

/**
 * The engine every product implements: `prepare` validates and normalizes the input (the 400 and
 * 422 checks, synchronous and free of I/O, so the API runs it before the meter reserves quota),
 * `lookup` answers the prepared query (the only step that may hold a quota reservation).
 */
// biome-ignore lint/suspicious/noExplicitAny: the defaults make ProductEngine the type of any engine; `unknown` would refuse every engine whose prepare takes a string
export interface ProductEngine<Args extends unknown[] = any[], Query = any, Result extends object = object> {
  prepare(...args: Args): Query;
  lookup(query: Query): MaybePromise<LookupOutcome<Result>>;
  /** Release what the engine holds open (file watches, a database); `createLookup().close()` calls it. */
  close?(): unknown;
}

/**
 * Every product's engine type by id. Each product adds its own entry from its folder
 * (`declare module '../module.js' { interface ProductEngines { geoip: GeoIpEngine } }`), so a
 * module that `needs` another gets that engine typed from `EngineContext.engine`.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging, one product's index.ts at a time
export interface ProductEngines {}

/** The engine type of a product id (`unknown` for one that declared none). */
export type EngineOf<Id> = Id extends keyof ProductEngines ? ProductEngines[Id] : unknown;

/** What an engine is built from. Engines take everything from here, never from globals. */
export interface EngineContext<Options, Needs extends ProductId = never> {
  /** The dataset folder (`createLookup({ dataDir })`, else the bundled `data/`). */
  dataDir: string;
  /** This product's options: `createLookup({ <id>: options })`. */
  options: Options | undefined;
  /**
   * This product's result cache: the shared store from `createLookup({ cache })`, namespaced by
   * product, or else a private in-process LRU of `maxEntries`. Null when `maxEntries` is 0 and
   * no shared store is configured.
   */
  cache<Value>(settings: { ttlMs?: number; maxEntries: number }): ProductCache<Value> | null;
  /** Clock in ms since the epoch. */
  now: () => number;
  /** The DNS resolver every DNS-using product shares (`createLookup({ dns })`), made on first use. */
  dns(): DnsResolver;
  /** The outbound-connection guard every connection made for a client goes through (lib/outbound.ts). */
  outbound(): OutboundGuard;
  /** The engine of a product this one `needs`, built on first use (for products that combine others). */
  engine<Id extends Needs>(id: Id): EngineOf<Id>;
}

/**
 * An engine setting taken from the command line by `serve` and `lookup` (a database path, a
 * source address), with an environment variable fallback: flag `--geoip-db` reads
 * `$SECLOOKUP_GEOIP_DB`. `apply` turns the text into the product's engine options.
 */
export interface ProductSetting<Options> {
  /** One help line: what the value is and the default. */
  help: string;
  /** The engine options the value sets; throws a TypeError (with code invalid_option) for bad text. */
  apply(value: string): Partial<NonNullable<Options>>;
}

/** How `seclookup lookup <id> INPUT` calls the product. */
export interface ProductCli<Args extends unknown[], Options = unknown> {
  /** What INPUT is, for the help: `a User-Agent string (quote it)`. */
  input: string;
  /** One example INPUT (and flags), for the help. */
  example: string;
  /** Extra string flags the product takes, name -> help line. */
  flags?: Readonly<Record<string, string>>;
  /** The engine arguments from INPUT and the flags. */
  args(input: string, flags: Readonly<Record<string, string | undefined>>): Args;
  /** Engine settings by flag name (`geoip-db`), for `serve` and `lookup`; names start with the product id. */
  settings?: Readonly<Record<string, ProductSetting<Options>>>;
  /** Engine options `lookup` adds (one answer, then exit: a file may be read lazily); the flags' settings win. */
  oneShot?: Partial<NonNullable<Options>>;
}

export interface DatasetUpdateOptions {
  /** The data folder whose file(s) are rewritten. */
  dataDir: string;
  /** Fetch `https://host/path` from `${mirror}/host/path` instead (an internal mirror). */
  mirror?: string;
  /** Per request. @default the product's own, documented in its help */
  timeoutMs?: number;
  /** `--source NAME[,NAME]`: which of the product's sources to update (products that have several). @default the product's own */
  source?: string;
  /** Progress lines, for stderr. */
  onProgress: (line: string) => void;
}

export interface DatasetUpdateReport {
  /** One line for stdout. */
  summary: string;
  /** False when nothing could be updated (every source failed): the CLI exits 1. */
  ok: boolean;
  /** Lines for stderr after the summary (what failed, what to do next). */
  notes: string[];
}

export interface DatasetImportOptions {
  /** The data folder whose dataset is replaced (unless `out` is given). */
  dataDir: string;
  /** The files (or folders) to import, in the order given. */
  files: string[];
  /** Write the dataset here instead of its place in `dataDir`. */
  out?: string;
  /** Import the good lines when some are corrupt (they are reported either way). @default false: refuse */
  skipCorrupt?: boolean;
  /** Folder for temporary files. @default beside the dataset */
  tmpDir?: string;
  /** Import input known to be incomplete (pwbreach: a folder lacking some prefix files). @default false: refuse */
  allowPartial?: boolean;
  /** Progress lines, for stderr. */
  onProgress: (line: string) => void;
  /** Progress of the current phase (called often; the caller throttles), for a progress bar. */
  onProgressBar?: (progress: ImportProgress) => void;
}

export interface ImportProgress {
  /** What is being done: `reading`, `sorting`. */
  phase: string;
  done: number;
  total: number;
  /** What `done` and `total` count. */
  unit: 'bytes' | 'buckets';
}

/**
 * A dataset `seclookup data update <id>` refreshes from its public sources, and/or one that
 * `seclookup data import <id> FILE...` builds from files the operator has.
 */
export interface ProductDataset {
  /** A paragraph for `seclookup data --help`: what is fetched or read, and what happens on failure. */
  help: string;
  /** Throws when the dataset cannot be updated at all (the file is left unchanged). */
  update?(options: DatasetUpdateOptions): Promise<DatasetUpdateReport>;
  /** Throws when nothing could be imported (the dataset is left unchanged). */
  import?(options: DatasetImportOptions): Promise<DatasetUpdateReport>;
  /**
   * The sources `data update --source` picks among, for a dataset fed by several; `parse` throws
   * a TypeError naming an unknown one. Absent: one source, and the flag is refused.
   */
  sources?: { names: readonly string[]; parse(text: string): unknown };
}

import type { BatchInput } from './descriptor.js';

export type { BatchInput } from './descriptor.js';

/**
 * `POST /v1/<id>/batch` with `{ "inputs": [...] }`, for a product whose lookup takes one string:
 * each input is looked up as `engine.prepare(...args(input))` then `engine.lookup`, as a single lookup.
 */
export interface ProductBatch<Args extends unknown[]> {
  /** What each input is (`ip`): the lookup parameter's name, for the docs and OpenAPI. */
  input: BatchInput;
  /** The engine arguments of one input. */
  args(value: string): Args;
}

/**
 * Every option name of a product's `Options`, each `true`: the compiler keeps the list complete
 * and exact, so option objects from JSON (a config file) can be checked by name and a typo is
 * refused instead of ignored.
 */
export type OptionNames<Options> = [NonNullable<Options>] extends [never]
  ? Readonly<Record<string, never>>
  : { readonly [Name in keyof Required<NonNullable<Options>>]: true };

/** The option names an options object has that its product does not know, in order. */
export function unknownOptionNames(module: Pick<AnyProductModule, 'optionNames'>, options: object): string[] {
  return Object.keys(options).filter((name) => !Object.hasOwn(module.optionNames, name));
}

/** The arguments of an engine's `prepare`: the product's in-process call (`lookup.webhookip(ip, options)`). */
export type ArgsOf<Engine> = Engine extends { prepare(...args: infer Args): unknown } ? Args : never;
/** The query an engine's `prepare` makes. */
export type QueryOf<Engine> = Engine extends { prepare(...args: never[]): infer Query } ? Query : never;
/** The result an engine's `lookup` answers with. */
export type ResultOf<Engine> = Engine extends { lookup(query: never): MaybePromise<LookupOutcome<infer Result>> } ? Result : never;

/**
 * When a dataset the engine loaded was built or published, as its data records it (an MMDB
 * file's build date, a `"generated"` field, a snapshot date): never a file's modification time.
 */
export interface EngineDatasetAge {
  dataset: string;
  /** ms since the epoch; null when the data carries no date (undated). */
  builtAtMs: number | null;
  /** A release name the data carries instead of a date (timezone's tzdata `2025b`), said by doctor. */
  version?: string;
}

/**
 * One product: its engine (which has the verbs), the products it builds on, and what the API,
 * the CLI and the docs need to know of it. `Needs` are the products whose engines it uses.
 */
export type ProductModule<Id extends ProductId, Engine extends ProductEngine, Options, Needs extends ProductId = never> = ProductModuleFields<
  Id,
  Engine,
  Options,
  Needs
> &
  ([Needs] extends [never]
    ? { needs?: readonly never[] }
    : { /** The products whose engines this one uses (`ctx.engine('geoip')`): required when its context names any. */ needs: readonly Needs[] });

/** Everything of a {@link ProductModule} but `needs`. */
export interface ProductModuleFields<Id extends ProductId, Engine extends ProductEngine, Options, Needs extends ProductId> {
  id: Id;
  /** The names of its options (`createLookup({ <id>: options })`), for checking options given as JSON. */
  optionNames: OptionNames<Options>;
  /**
   * Check its options' types and ranges (the object has only names from `optionNames`), throwing
   * a TypeError `invalid_option` naming the option. `createLookup` calls it at construction, so
   * a mistake is not found at the product's first call: cheap checks only (no file read, no
   * engine built); what needs the data (a zone name looked up in its file) is checked by
   * `createEngine`, which still checks everything.
   */
  checkOptions?(options: Readonly<Record<string, unknown>>): void;
  /**
   * Build the engine. May throw SeclookupError `dataset_missing` / `dataset_invalid`. A product
   * that uses others types its context `EngineContext<Options, 'geoip' | ...>` and lists them in `needs`.
   */
  createEngine(context: EngineContext<Options, Needs>): Engine;
  /** The HTTP lookup routes (SPEC: the product's table). */
  routes: readonly LookupRoute<ArgsOf<Engine>>[];
  /** Routes beyond the lookup (pwbreach's `range/:prefix`), authenticated and billed like it. */
  extraRoutes?: readonly ExtraRoute<Engine>[];
  /** The batch route, on products whose lookup takes one string (not scamrisk). */
  batch?: ProductBatch<ArgsOf<Engine>>;
  /** Fields the status resource adds for this product (`database_records`, ...). */
  statusExtras?(engine: Engine, key: ResolvedKey): Record<string, unknown>;
  /**
   * The dates of the data this engine loaded, as the data records them (MMDB build time, a
   * file's `"generated"`, a snapshot date; null for data that carries none): `seclookup doctor`
   * and `seclookup_dataset_age_seconds` read them, never the files' modification times. Cheap:
   * what the engine kept when it loaded its data.
   */
  datasetAges?(engine: Engine): EngineDatasetAge[];
  /** What the OpenAPI document says of the routes: parameters, result schema, the product's error codes. */
  doc: ProductDoc;
  cli: ProductCli<ArgsOf<Engine>, Options>;
  dataset?: ProductDataset;
  /** The option `serve` sets to its `--db` file unless given (scamrisk's `reports`): data kept beside the meter. */
  dbFileOption?: keyof NonNullable<Options> & string;
  /** What `seclookup doctor` checks beyond building the engine (which proves its data loads). */
  doctor?: ProductDoctor<Engine>;
}

/** One line of `seclookup doctor`: `fail` means the product cannot answer here. */
export interface DoctorFinding {
  level: 'ok' | 'warn' | 'fail';
  /** What was checked: `data`, `dns`, `outbound`, `corpus`. */
  check: string;
  message: string;
}

/** A product's own part of `seclookup doctor`. */
export interface ProductDoctor<Engine> {
  /** Its answers need the DNS resolver: doctor asks the configured servers a question. */
  dns?: boolean;
  /** Its answers need outbound connections: a well-known peer doctor tries to reach, and why. */
  outbound?: { host: string; port: number; why: string };
  /**
   * The upstream API its options point it at, if any (pwbreach's range API, riskscore's
   * provider): doctor tries to reach its host, and says which it tried without the URL's
   * credentials or path.
   */
  upstream?(options: Readonly<Record<string, unknown>> | undefined): { url: string; why: string } | undefined;
  /** What the engine knows about itself (pwbreach: answering from the small bundled sample); warnings are also printed when `serve` starts. */
  check?(engine: Engine): DoctorFinding[];
  /**
   * How many days old each dated dataset (`datasetAges`' names) may be before doctor warns that
   * it is stale, from how often its source changes (a Tor exit list daily, DB-IP monthly), and
   * how to refresh it (`seclookup data update riskscore`). Datasets not named are never stale.
   */
  freshness?: { maxAgeDays: Readonly<Record<string, number>>; refresh: string };
}

/** A module of any product, for code that handles them all alike. */
// biome-ignore lint/suspicious/noExplicitAny: options and needs differ per product; code handling every module reads neither's type
export type AnyProductModule = ProductModule<ProductId, ProductEngine, any, any>;

/** Identity, for type inference: `export default defineProduct({ id: 'useragent', ... })`. */
export function defineProduct<Id extends ProductId, Engine extends ProductEngine, Options = undefined, Needs extends ProductId = never>(
  module: ProductModule<Id, Engine, Options, Needs>,
): ProductModule<Id, Engine, Options, Needs> {
  return module;
}
