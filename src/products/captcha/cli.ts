/**
 * `seclookup sitekeys create | list | update | revoke | rotate-signing-key`: captcha site keys.
 * A site key is a public key for pages (tf_pub_) and a secret key for the site's server
 * (tf_sec_), with its domain allowlist, optional IP allowlist, managed mode and risk policy.
 * The secret is printed once, by `create`.
 */
import { invalidOption, isSeclookupError } from '../../errors.js';
import { rotateSigningKey, signingKeysProblem } from './key-ring.js';
import { riskPolicyOf, type RiskPolicy } from './risk-policy.js';
import {
  createSiteKey,
  describeKeyArgument,
  findSiteKey,
  listSiteKeys,
  normalizeDomains,
  revokeSiteKey,
  updateSiteKey,
  type CreatedSiteKey,
  type SiteKeyChanges,
  type SiteKeyStore,
} from './site-keys.js';
import { METER_OPTIONS, expectPositionals, parseCidrList, parseCommand, resolveDbPath, resolveRedisUrl } from '../../cli/args.js';
import { resolveOperatorSecret, SECRET_OPTIONS } from '../../cli/secret.js';
import { chooseAdminStore, describeMeter, onSameStore, withMeter, type MeterFlags } from '../../cli/db.js';
import { CommandError, EXIT_OK, UsageError } from '../../cli/errors.js';
import { formatIpAllow, formatTable, out, outDelivered, printJson } from '../../cli/output.js';
import { cliEnv } from '../../cli/io.js';

export const SITEKEYS_HELP = `Usage:
  seclookup sitekeys create [--domain example.com[,other.com]] [--ip-allow CIDR,...] [--managed]
                            [--risk-block-at N|off] [--no-risk-scaling]
                            [--plan SLUG | --subscription ID] [--json] [--db FILE | --redis URL]
  seclookup sitekeys list [--json] [--db FILE | --redis URL]
  seclookup sitekeys update KEY [--domain ...] [--ip-allow CIDR,... | --no-ip-allow]
                            [--managed | --no-managed] [--risk-block-at N|off]
                            [--risk-scaling | --no-risk-scaling] [--db FILE | --redis URL]
  seclookup sitekeys revoke KEY [--db FILE | --redis URL]
  seclookup sitekeys rotate-signing-key [--secret-file FILE] [--force] [--db FILE | --redis URL]

Captcha site keys. Pages carry the site key (tf_pub_); the site's server sends the secret key
(tf_sec_) to /v1/captcha/siteverify.

sitekeys create   Create a site key and print site_key and secret_key. The secret is shown
                  only this once (the database keeps its hash).
  --domain D,...        hostnames whose pages may use it; each allows itself and its
                        subdomains (example.com allows www.example.com). Comma-separated,
                        repeatable; a value that names none (",") is refused.
                        Without any, browser routes answer 403
                        domain_not_configured until \`sitekeys update --domain\`.
  --ip-allow CIDR,...   only callers from these networks, on every captcha route
  --managed             allow managed mode (no puzzle for a browser that looks human)
  --risk-block-at N|off siteverify refuses proofs whose risk score is N or more (1-100) with
                        403 risk_too_high; off: never. Default 60 (risk level high, which a
                        headless browser reaches: raise it or turn it off for a site key your
                        own browser tests use)
  --no-risk-scaling     the same proof of work for everyone; by default it grows 4x per risk
                        level seen at challenge time (low, medium, high: 16x at most)
  --plan SLUG           plan of the new subscription (default: starter)
  --subscription ID     add the site key to this captcha subscription instead: site keys of
                        one subscription share its monthly quota; each has its own rate limit
  --json                print one JSON object: site_key, secret_key, domains, plan,
                        subscription_id, secret_key_id, public_key_id, created_at

sitekeys list     Every site key: the site key itself (it is public), subscription, plan,
                  status, domains, IP allowlist, managed mode, risk policy. Secrets are
                  never shown.

sitekeys update   Change a site key's settings (running servers see them within 2 s).
                  KEY is the tf_pub_ key, its secret key (tf_sec_) or its id. --domain
                  replaces the whole list.

sitekeys revoke   Revoke both keys of a site key. Running servers refuse them at once on a
                  --db file, and within 1 s on Redis (each server keeps a key in memory that
                  long). KEY is the tf_pub_ key, its secret key (tf_sec_: after a leak,
                  revoke by the key you hold) or its id.

sitekeys rotate-signing-key
                  Sign new challenges and proofs with a fresh key; tokens already handed out
                  keep verifying for an hour. The key is stored wrapped under the operator
                  secret, found as serve finds it: --secret-file FILE ($SECLOOKUP_SECRET_FILE),
                  else $SECLOOKUP_SECRET, else <db>.secret beside the database (made if
                  absent, only while the store holds no signing key); required with --redis.
                  Give it the secret the server uses: a secret that cannot unwrap the
                  current key is refused (exit 1), as the rotation would drop that key and
                  break captcha on every server still using it.
  --force               rotate anyway, dropping every key the secret cannot unwrap: how a new
                        operator secret takes over (then restart every instance with it)

Common options (one store: --db and --redis together are refused):
  --db FILE     metering database (default: $SECLOOKUP_DB, else ./seclookup.db); given,
                it wins over $SECLOOKUP_REDIS
  --redis URL   keys, plans and usage in Redis instead, as serve --redis uses them
                (redis://host:port/db or redis+cluster://h1:p1,h2:p2;
                default: $SECLOOKUP_REDIS)
  -h, --help    show this help

Exit codes: 0 done, 1 failed (no such site key, subscription or database, a database or key
            file error, a rotation that would drop the current signing key without --force),
            2 usage error (both --db and --redis among them).`;

export async function runSitekeys(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'create':
      return create(rest);
    case 'list':
      return list(rest);
    case 'update':
      return update(rest);
    case 'revoke':
      return revoke(rest);
    case 'rotate-signing-key':
      return rotate(rest);
    case undefined:
      throw new UsageError('missing subcommand: create, list, update, revoke or rotate-signing-key', 'sitekeys');
    default:
      if (sub === '-h' || sub === '--help') return help();
      throw new UsageError(`unknown subcommand ${JSON.stringify(sub)}; use create, list, update, revoke or rotate-signing-key`, 'sitekeys');
  }
}

function help(): number {
  out(SITEKEYS_HELP);
  return EXIT_OK;
}

/** `--domain a.com,b.com --domain c.com`, checked (a usage error names the bad entry). */
function parseDomains(values: string[] | undefined, command: string): string[] | undefined {
  if (values === undefined) return undefined;
  const items = values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
  // `--domain ,` names no hostname: on update it would empty the allowlist, as --ip-allow , may not.
  if (items.length === 0) throw new UsageError(`--domain needs at least one hostname (got ${JSON.stringify(values.join(','))})`, command);
  try {
    return normalizeDomains(items);
  } catch (error) {
    throw new UsageError(`--domain: ${(error as Error).message}`, command);
  }
}

/** `--risk-block-at`: a score from 1 to 100, or `off`. */
function parseBlockAt(text: string, command: string): number | null {
  const value = text.trim().toLowerCase();
  if (value === 'off') return null;
  if (!/^\d{1,3}$/.test(value) || Number(value) < 1 || Number(value) > 100)
    throw new UsageError(`--risk-block-at: give a risk score from 1 to 100, or off (got ${JSON.stringify(text)})`, command);
  return Number(value);
}

/** A risk policy in a table cell or a sentence: `block at 60, scaling on`. */
function formatRisk(risk: RiskPolicy): string {
  return `${risk.blockAt === null ? 'never block' : `block at ${risk.blockAt}`}, scaling ${risk.scaleDifficulty ? 'on' : 'off'}`;
}

/** Store-side refusals (an unknown plan or subscription) are the operator's to fix: exit 1 with the message. */
async function run<T>(flags: MeterFlags, options: { create: boolean; write?: boolean }, work: Parameters<typeof withMeter<T>>[2]): Promise<T> {
  try {
    return await withMeter(flags, options, work);
  } catch (error) {
    if (isSeclookupError(error, 'invalid_option') || isSeclookupError(error, 'secret_unavailable')) throw new CommandError(error.message, { cause: error });
    throw error;
  }
}

async function create(argv: string[]): Promise<number> {
  const command = 'sitekeys create';
  const { values, positionals } = parseCommand(
    argv,
    {
      domain: { type: 'string', multiple: true },
      'ip-allow': { type: 'string', multiple: true },
      managed: { type: 'boolean' },
      'risk-block-at': { type: 'string' },
      'no-risk-scaling': { type: 'boolean' },
      plan: { type: 'string' },
      subscription: { type: 'string' },
      json: { type: 'boolean' },
      ...METER_OPTIONS,
    },
    command,
  );
  if (values.help) return help();
  expectPositionals(positionals, [], command);
  if (values.plan !== undefined && values.subscription !== undefined)
    throw new UsageError("give --plan or --subscription, not both: a site key shares its subscription's plan", command);
  // Subscription ids are whole numbers on every store: anything else is a typo (or a key pasted
  // in the wrong place, so the value is not repeated), not an unknown id.
  if (values.subscription !== undefined && !/^[1-9]\d*$/.test(values.subscription))
    throw new UsageError('--subscription takes a subscription id, a number (see seclookup sitekeys list)', command);
  const domains = parseDomains(values.domain, command) ?? [];
  const ipAllow = parseCidrList(values['ip-allow'], '--ip-allow', command);
  const risk: Partial<RiskPolicy> = {};
  if (values['risk-block-at'] !== undefined) risk.blockAt = parseBlockAt(values['risk-block-at'], command);
  if (values['no-risk-scaling']) risk.scaleDifficulty = false;
  const store = chooseAdminStore(values, command);
  await run(store, { create: true }, async (meter) => {
    if (values.plan !== undefined && !(await meter.listPlans()).some((p) => p.slug === values.plan && (p.product === '*' || p.product === 'captcha'))) {
      throw invalidOption(`unknown plan "${values.plan}" for captcha (see \`seclookup plans list\`)`);
    }
    const created = await createSiteKey(meter, {
      domains,
      ipAllow,
      managed: values.managed ?? false,
      risk,
      plan: values.plan,
      subscriptionId: values.subscription,
    });
    // The secret key exists only in this output: a site key nobody saw must not stay active.
    let shown: string;
    try {
      shown = values.json ? JSON.stringify(await createdJson(meter, created), null, 2) : createdText(created, describeMeter(store));
    } catch (error) {
      throw await revokeUnseen(meter, created, 'cannot read the new site key back', error);
    }
    try {
      await outDelivered(shown);
    } catch (error) {
      throw await revokeUnseen(meter, created, 'cannot write the output', error);
    }
  });
  return EXIT_OK;
}

/** Revoke a new site key whose secret key was never shown, and the error saying so. */
async function revokeUnseen(meter: SiteKeyStore, created: CreatedSiteKey, what: string, error: unknown): Promise<CommandError> {
  await revokeSiteKey(meter, created.siteKey);
  const why = error instanceof Error ? error.message : String(error);
  return new CommandError(`${what} (${why}): revoked the new site key ${created.siteKey}, since its secret key was never shown; run the command again`, {
    cause: error,
  });
}

/**
 * `sitekeys create --json`: the keys, and the ids a rotation or a revocation names (the key ids
 * as `keys create --json` names them, the subscription that `--subscription` takes), read back
 * from the site key's stored settings.
 */
async function createdJson(meter: SiteKeyStore, created: CreatedSiteKey): Promise<Record<string, unknown>> {
  const config = await findSiteKey(meter, created.siteKey);
  if (!config) throw new Error(`site key ${created.siteKey} is not in the store`);
  return {
    site_key: created.siteKey,
    secret_key: created.secretKey,
    domains: created.domains,
    plan: created.plan,
    subscription_id: created.subscriptionId,
    secret_key_id: config.secretKeyId,
    public_key_id: config.publicKeyId,
    created_at: config.createdAt,
  };
}

/** The text output; `where` names the store written (the file, or the Redis URL without its password). */
function createdText(created: CreatedSiteKey, where: string): string {
  return [
    `Created a captcha site key on plan "${created.plan}" (subscription ${created.subscriptionId}) in ${where}.`,
    '',
    `  site key (pages):    ${created.siteKey}`,
    `  secret key (server): ${created.secretKey}`,
    '',
    created.domains.length > 0
      ? `Allowed on: ${created.domains.join(', ')} (and their subdomains).`
      : 'No domains yet: add them with `seclookup sitekeys update <site key> --domain example.com`.',
    'The secret key is shown only this once. Copy it now.',
  ].join('\n');
}

async function list(argv: string[]): Promise<number> {
  const command = 'sitekeys list';
  const { values, positionals } = parseCommand(argv, { json: { type: 'boolean' }, ...METER_OPTIONS }, command);
  if (values.help) return help();
  expectPositionals(positionals, [], command);
  const keys = await run(chooseAdminStore(values, command), { create: false, write: false }, (meter) => listSiteKeys(meter));
  if (values.json) {
    printJson(
      keys.map((k) => ({
        site_key: k.siteKey,
        id: k.publicKeyId,
        subscription_id: k.subscriptionId,
        plan: k.plan,
        status: k.status,
        domains: k.domains,
        ip_allow: k.ipAllow,
        managed: k.managed,
        risk: { block_at: k.risk.blockAt, scale_difficulty: k.risk.scaleDifficulty },
        secret_key_prefix: k.secretKeyPrefix,
        created_at: k.createdAt,
      })),
    );
    return EXIT_OK;
  }
  if (keys.length === 0) {
    out('No site keys yet: create one with `seclookup sitekeys create --domain example.com`.');
    return EXIT_OK;
  }
  out(
    formatTable(
      ['ID', 'SITE KEY', 'SUBSCRIPTION', 'PLAN', 'STATUS', 'DOMAINS', 'IP ALLOW', 'MANAGED', 'RISK'],
      keys.map((k) => [
        k.publicKeyId,
        k.siteKey,
        k.subscriptionId,
        k.plan,
        k.status,
        k.domains.join(',') || '(none)',
        formatIpAllow(k.ipAllow),
        k.managed ? 'yes' : 'no',
        formatRisk(k.risk),
      ]),
    ),
  );
  return EXIT_OK;
}

async function update(argv: string[]): Promise<number> {
  const command = 'sitekeys update';
  const { values, positionals } = parseCommand(
    argv,
    {
      domain: { type: 'string', multiple: true },
      'ip-allow': { type: 'string', multiple: true },
      'no-ip-allow': { type: 'boolean' },
      managed: { type: 'boolean' },
      'no-managed': { type: 'boolean' },
      'risk-block-at': { type: 'string' },
      'risk-scaling': { type: 'boolean' },
      'no-risk-scaling': { type: 'boolean' },
      ...METER_OPTIONS,
    },
    command,
  );
  if (values.help) return help();
  const [key] = expectPositionals(positionals, ['KEY'], command);
  if (values.managed && values['no-managed']) throw new UsageError('give --managed or --no-managed, not both', command);
  if (values['ip-allow'] && values['no-ip-allow']) throw new UsageError('give --ip-allow or --no-ip-allow, not both', command);
  if (values['risk-scaling'] && values['no-risk-scaling']) throw new UsageError('give --risk-scaling or --no-risk-scaling, not both', command);
  const changes: SiteKeyChanges = {};
  const domains = parseDomains(values.domain, command);
  if (domains !== undefined) changes.domains = domains;
  if (values['ip-allow']) changes.ipAllow = parseCidrList(values['ip-allow'], '--ip-allow', command);
  if (values['no-ip-allow']) changes.ipAllow = [];
  if (values.managed) changes.managed = true;
  if (values['no-managed']) changes.managed = false;
  const risk: Partial<RiskPolicy> = {};
  if (values['risk-block-at'] !== undefined) risk.blockAt = parseBlockAt(values['risk-block-at'], command);
  if (values['risk-scaling'] || values['no-risk-scaling']) risk.scaleDifficulty = values['risk-scaling'] === true;
  if (Object.keys(risk).length > 0) changes.risk = risk;
  if (Object.keys(changes).length === 0) {
    throw new UsageError(
      'nothing to change: give --domain, --ip-allow, --no-ip-allow, --managed, --no-managed, --risk-block-at, --risk-scaling or --no-risk-scaling',
      command,
    );
  }
  const updated = await run(chooseAdminStore(values, command), { create: false }, (meter) => updateSiteKey(meter, key, changes));
  out(
    `Updated site key ${updated.publicKeyId}: domains ${updated.domains.join(', ') || '(none)'}; IP allowlist ${formatIpAllow(updated.ipAllow)}; managed ${updated.managed ? 'on' : 'off'}; risk ${formatRisk(riskPolicyOf(updated.risk))}.`,
  );
  return EXIT_OK;
}

async function revoke(argv: string[]): Promise<number> {
  const command = 'sitekeys revoke';
  const { values, positionals } = parseCommand(argv, { ...METER_OPTIONS }, command);
  if (values.help) return help();
  const [key] = expectPositionals(positionals, ['KEY'], command);
  const store = chooseAdminStore(values, command);
  const revoked = await run(store, { create: false }, (meter) => revokeSiteKey(meter, key));
  if (!revoked)
    throw new CommandError(
      `no site key ${describeKeyArgument(key)} (give the tf_pub_ key, its tf_sec_ key or its id; see \`${onSameStore('sitekeys list', store)}\`)`,
    );
  out(revoked.alreadyRevoked ? `site key ${revoked.publicKeyId} was already revoked.` : `Revoked site key ${revoked.publicKeyId} and its secret key.`);
  return EXIT_OK;
}

async function rotate(argv: string[]): Promise<number> {
  const command = 'sitekeys rotate-signing-key';
  const { values, positionals } = parseCommand(argv, { ...METER_OPTIONS, ...SECRET_OPTIONS, force: { type: 'boolean' } }, command);
  if (values.help) return help();
  expectPositionals(positionals, [], command);
  const secretFile = values['secret-file'] ?? (cliEnv().SECLOOKUP_SECRET_FILE || undefined);
  const store = chooseAdminStore(values, command);
  const dbPath = resolveRedisUrl(store.redis) ? null : resolveDbPath(store.db);
  const force = values.force === true;
  // An existing store only: a mistyped --db must not make a new database (and a key file beside it).
  const { kid, dropped } = await run(store, { create: false }, async (meter) => {
    const { secret, source } = await resolveOperatorSecret(secretFile, dbPath, command, { store: meter });
    if (!force && (await signingKeysProblem(meter, secret)))
      throw new CommandError(
        `the current captcha signing key in ${describeMeter(store)} does not unwrap under the operator secret of ${source}: rotating would drop it and break captcha on every server still using it. Pass the secret the server uses (--secret-file FILE, or SECLOOKUP_SECRET), or --force to drop it (to move to this secret, or when the old one is lost)`,
      );
    return rotateSigningKey(meter, secret, Date.now(), { force });
  });
  out(`New signing key ${kid}; tokens signed with the previous key keep verifying for an hour.`);
  if (dropped > 0)
    out(`Dropped ${dropped} signing key${dropped === 1 ? '' : 's'} this operator secret cannot unwrap (another secret's, or plaintext from an older version).`);
  return EXIT_OK;
}
