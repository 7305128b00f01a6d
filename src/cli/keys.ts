/**
 * `seclookup keys create | list | update | revoke`: API keys in the metering database. Only a key's
 * SHA-256 hash and a short visible prefix are stored, so a secret is printed exactly once,
 * by `keys create`, and never again.
 */
import { hashKey, issueKeys, type IssuedKeys } from '../metering/keys.js';
import { resolvePlan } from '../metering/plans.js';
import type { KeyInfo, MeterAdmin, MeterHotPath, SubscriptionChanges } from '../metering/types.js';
import type { ProductId } from '../products/catalog.js';
import { METER_OPTIONS, expectPositionals, parseCidrList, parseCommand, parseProduct } from './args.js';
import { chooseAdminStore, describeMeter, onSameStore, whenServersSeeChanges, withMeter, type MeterFlags } from './db.js';
import { CommandError, EXIT_OK, UsageError } from './errors.js';
import { formatIpAllow, formatTable, out, outDelivered, printJson } from './output.js';

export const KEYS_HELP = `Usage:
  seclookup keys create --product PRODUCT [--plan SLUG] [--ip-allow CIDR,...] [--json]
                        [--db FILE | --redis URL]
  seclookup keys list [--json] [--db FILE | --redis URL]
  seclookup keys update KEY|ID [--plan SLUG] [--ip-allow CIDR,... | --no-ip-allow] [--json]
                        [--db FILE | --redis URL]
  seclookup keys revoke KEY|ID [--db FILE | --redis URL]

Manage API keys in the metering database.

keys create   Subscribe PRODUCT to a plan and print a new secret key (for servers) and
              public key. The secret key is shown only this once: the database keeps its
              hash, so copy it now.
  --product PRODUCT     one of the 15 products, e.g. useragent, webhookip (required;
                        captcha keys are made by \`seclookup sitekeys create\`)
  --plan SLUG           plan the keys are tied to (default: starter; see \`seclookup plans list\`)
  --ip-allow CIDR,...   the keys work only from these networks (10.0.0.0/8) or single
                        addresses (203.0.113.7); comma-separated, repeatable; default:
                        any address. A CIDR with host bits set (10.0.0.1/8) is refused.
  --json                print one JSON object: secret_key, public_key, product, plan,
                        subscription_id, ip_allow, secret_key_id, public_key_id

keys list     List every key: id, product, kind, visible prefix, plan, status, IP
              allowlist and creation time. Full keys are never shown.
  --json                print a JSON array instead of a table

keys update   Move a key's subscription to another plan, or change its IP allowlist, in
              place: the change applies to the subscription, so to both keys of the pair
              (to every site key of a captcha subscription), and the keys stay the same.
              Usage and this month's quota count are kept: the new plan's quota counts
              from what is used. A running server applies it at once on a --db file, and
              within 1 s on Redis. KEY or ID as for \`keys revoke\`. Give at least one of:
  --plan SLUG           the plan to move to (see \`seclookup plans list\`)
  --ip-allow CIDR,...   the keys work only from these networks or addresses from now on
                        (replaces the allowlist; comma-separated, repeatable)
  --no-ip-allow         the keys work from any address (drops the allowlist)
  --json                print one JSON object: subscription_id, product, plan, ip_allow,
                        before (plan, ip_allow) and keys (as \`keys list --json\`)
              A captcha key takes --plan only: its IP allowlist is its site key's, set
              with \`seclookup sitekeys update KEY --ip-allow CIDR,...\`.

keys revoke   Revoke one key. A running server refuses it at once on a --db file, and
              within 1 s on Redis (each server keeps a key in memory that long). KEY is
              either the full key (ua_sec_...) or the numeric id shown by \`keys list\`. The
              other key of the pair stays active; revoke it separately if needed.

Common options (one store: --db and --redis together are refused):
  --db FILE     metering database (default: $SECLOOKUP_DB, else ./seclookup.db); given,
                it wins over $SECLOOKUP_REDIS
  --redis URL   keys, plans and usage in Redis instead, as serve --redis uses them
                (redis://host:port/db or redis+cluster://h1:p1,h2:p2;
                default: $SECLOOKUP_REDIS)
  -h, --help    show this help

Exit codes: 0 done, 1 failed (unknown plan, key not found, database error),
            2 usage error (unknown product, bad CIDR, missing or unknown option,
            both --db and --redis, nothing to change for keys update, --ip-allow
            for a captcha key).`;

export async function runKeys(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'create':
      return createKeys(rest);
    case 'list':
      return listKeys(rest);
    case 'update':
      return updateKey(rest);
    case 'revoke':
      return revokeKey(rest);
    case undefined:
      throw new UsageError("missing subcommand: create, list or revoke a key, or update its subscription's plan or IP allowlist", 'keys');
    default:
      if (sub === '-h' || sub === '--help') return printHelp();
      throw new UsageError(`unknown subcommand ${JSON.stringify(sub)}; use create, list, update or revoke`, 'keys');
  }
}

function printHelp(): number {
  out(KEYS_HELP);
  return EXIT_OK;
}

async function createKeys(argv: string[]): Promise<number> {
  const command = 'keys create';
  const { values, positionals } = parseCommand(
    argv,
    { product: { type: 'string' }, plan: { type: 'string' }, 'ip-allow': { type: 'string', multiple: true }, json: { type: 'boolean' }, ...METER_OPTIONS },
    command,
  );
  if (values.help) return printHelp();
  expectPositionals(positionals, [], command);
  if (values.product === undefined) throw new UsageError('missing --product (e.g. --product useragent)', command);
  const product = parseProduct(values.product, command);
  // A captcha key pair without a site key's settings would be refused by every captcha route.
  if (product === 'captcha')
    throw new UsageError('captcha keys are site keys, with a domain allowlist: use `seclookup sitekeys create --domain example.com` instead', command);
  const ipAllow = parseCidrList(values['ip-allow'], '--ip-allow', command);
  const plan = values.plan ?? 'starter';
  const store = chooseAdminStore(values, command);

  await withMeter(store, { create: true }, async (meter: MeterAdmin) => {
    await assertPlanExists(meter, plan, product);
    const issued = await issueKeys(meter, { product, plan, ipAllow });
    try {
      await outDelivered(values.json ? JSON.stringify(issuedToJson(issued), null, 2) : issuedText(issued, describeMeter(store)));
    } catch (error) {
      // The secret exists only in this output: keys nobody saw must not stay active.
      throw await revokeUnseen(meter, issued, error);
    }
  });
  return EXIT_OK;
}

/**
 * Revoke a key pair whose output could not be written (its secret key was never shown), and the
 * error saying so; if revoking fails too, the error says which keys to revoke by hand.
 */
async function revokeUnseen(meter: MeterAdmin, issued: IssuedKeys, writeError: unknown): Promise<CommandError> {
  const why = `cannot write the output (${writeError instanceof Error ? writeError.message : String(writeError)})`;
  const ids = issued.keys.map((key) => key.id);
  const pair = `the new ${issued.product} key pair (key ids ${ids.join(' and ')}, subscription ${issued.subscriptionId})`;
  try {
    for (const id of ids) await meter.revokeKey(id);
  } catch (error) {
    return new CommandError(
      `${why}, and revoking ${pair} failed (${error instanceof Error ? error.message : String(error)}): its secret key was never shown; revoke it with \`seclookup keys revoke ${ids[0]}\` and \`seclookup keys revoke ${ids[1]}\``,
      { cause: writeError },
    );
  }
  return new CommandError(`${why}: revoked ${pair}, since its secret key was never shown; run the command again`, { cause: writeError });
}

/** Checked here rather than left to the store, for a message that says where to look. */
async function assertPlanExists(meter: MeterAdmin, slug: string, product: ProductId): Promise<void> {
  const plans = await meter.listPlans();
  if (resolvePlan(plans, slug, product)) return;
  const known = [...new Set(plans.filter((p) => p.product === '*' || p.product === product).map((p) => p.slug))];
  throw new CommandError(
    `unknown plan "${slug}" for ${product}; plans for it: ${known.join(', ') || 'none'} (see \`seclookup plans list\`, create one with \`seclookup plans set\`)`,
  );
}

function issuedToJson(issued: IssuedKeys): Record<string, unknown> {
  const secret = issued.keys.find((k) => k.kind === 'secret');
  const pub = issued.keys.find((k) => k.kind === 'public');
  return {
    secret_key: issued.secretKey,
    public_key: issued.publicKey,
    product: issued.product,
    plan: issued.plan,
    subscription_id: issued.subscriptionId,
    ip_allow: secret?.ipAllow ?? [],
    secret_key_id: secret?.id ?? null,
    public_key_id: pub?.id ?? null,
  };
}

/** The text output; `where` names the store written (the file, or the Redis URL without its password). */
function issuedText(issued: IssuedKeys, where: string): string {
  const secret = issued.keys.find((k) => k.kind === 'secret');
  const pub = issued.keys.find((k) => k.kind === 'public');
  // "an asn", "an emailval"; "a useragent" (a u that sounds as "you", as every product's does).
  return [
    `Created ${/^[aeio]/.test(issued.product) ? 'an' : 'a'} ${issued.product} key pair on plan "${issued.plan}" (subscription ${issued.subscriptionId}) in ${where}.`,
    '',
    `  secret key  ${issued.secretKey}   (id ${secret?.id}; use it on servers only)`,
    `  public key  ${issued.publicKey}   (id ${pub?.id})`,
    ...(secret && secret.ipAllow.length > 0 ? [`  usable from ${secret.ipAllow.join(', ')}`] : []),
    '',
    'The secret key is shown only this once: only its hash is stored. Copy it now.',
  ].join('\n');
}

async function listKeys(argv: string[]): Promise<number> {
  const command = 'keys list';
  const { values, positionals } = parseCommand(argv, { json: { type: 'boolean' }, ...METER_OPTIONS }, command);
  if (values.help) return printHelp();
  expectPositionals(positionals, [], command);
  const store = chooseAdminStore(values, command);

  const keys = await withMeter(store, { create: false, write: false }, (meter: MeterAdmin) => meter.listKeys());
  if (values.json) {
    printJson(keys.map(keyToJson));
  } else if (keys.length === 0) {
    out('No keys yet. Create one with `seclookup keys create --product <product>`.');
  } else {
    const rows = keys.map((k) => [k.id, k.product, k.kind, `${k.prefix}...`, k.plan, k.status, formatIpAllow(k.ipAllow), k.createdAt]);
    out(formatTable(['ID', 'PRODUCT', 'KIND', 'PREFIX', 'PLAN', 'STATUS', 'IP ALLOW', 'CREATED'], rows));
  }
  return EXIT_OK;
}

function keyToJson(key: KeyInfo): Record<string, unknown> {
  return {
    id: key.id,
    subscription_id: key.subscriptionId,
    product: key.product,
    kind: key.kind,
    prefix: key.prefix,
    plan: key.plan,
    status: key.status,
    ip_allow: key.ipAllow,
    created_at: key.createdAt,
  };
}

/** A key given as `keys revoke` and `keys update` take it: its id from `keys list`, or the full key. */
interface KeyArgument {
  text: string;
  byId: boolean;
  /** The id, or the key's SHA-256 (the store knows a key only by its hash). */
  target: string;
}

function parseKeyArgument(text: string): KeyArgument {
  const byId = /^[1-9]\d*$/.test(text);
  return { text, byId, target: byId ? text : hashKey(text) };
}

function noKeyError(key: KeyArgument, store: MeterFlags): CommandError {
  const list = onSameStore('keys list', store);
  return new CommandError(key.byId ? `no key with id ${key.text} (see \`${list}\`)` : `no key matches; pass the full key, or its id from \`${list}\``);
}

/** The key a KEY|ID argument names, as listed (with its subscription's plan and allowlist); null when none. */
async function findKey(meter: MeterAdmin & Pick<MeterHotPath, 'resolveKey'>, key: KeyArgument): Promise<KeyInfo | null> {
  const id = key.byId ? key.target : (await meter.resolveKey(key.target))?.id;
  if (id === undefined) return null;
  return (await meter.listKeys()).find((k) => k.id === id) ?? null;
}

async function updateKey(argv: string[]): Promise<number> {
  const command = 'keys update';
  const { values, positionals } = parseCommand(
    argv,
    {
      plan: { type: 'string' },
      'ip-allow': { type: 'string', multiple: true },
      'no-ip-allow': { type: 'boolean' },
      json: { type: 'boolean' },
      ...METER_OPTIONS,
    },
    command,
  );
  if (values.help) return printHelp();
  const [keyText] = expectPositionals(positionals, ['KEY'], command).map((v) => v.trim());
  const changes = subscriptionChanges(values, command);
  const key = parseKeyArgument(keyText);
  const store = chooseAdminStore(values, command);

  const { before, after } = await withMeter(store, { create: false }, async (meter: MeterAdmin & Pick<MeterHotPath, 'resolveKey'>) => {
    const before = await findKey(meter, key);
    if (!before) throw noKeyError(key, store);
    // A captcha subscription's own allowlist stays empty: each site key has one, which captcha routes check.
    if (before.product === 'captcha' && changes.ipAllow !== undefined)
      throw new UsageError(
        "a captcha key's IP allowlist is its site key's: use `seclookup sitekeys update KEY --ip-allow CIDR,...` (or --no-ip-allow); keys update takes --plan for it",
        command,
      );
    if (changes.plan !== undefined) await assertPlanExists(meter, changes.plan, before.product);
    return { before, after: await meter.updateSubscription(before.subscriptionId, changes) };
  });
  const [updated] = after;
  if (values.json) {
    printJson({
      subscription_id: updated.subscriptionId,
      product: updated.product,
      plan: updated.plan,
      ip_allow: updated.ipAllow,
      before: { plan: before.plan, ip_allow: before.ipAllow },
      keys: after.map(keyToJson),
    });
  } else {
    out(updatedText(before, after, changes, await whenServersSeeChanges(store)));
  }
  return EXIT_OK;
}

/** The changes `keys update` was given; a usage error when none, or both --ip-allow and --no-ip-allow. */
function subscriptionChanges(values: { plan?: string; 'ip-allow'?: string[]; 'no-ip-allow'?: boolean }, command: string): SubscriptionChanges {
  if (values['ip-allow'] && values['no-ip-allow']) throw new UsageError('give --ip-allow or --no-ip-allow, not both', command);
  const changes: SubscriptionChanges = {};
  if (values.plan !== undefined) changes.plan = values.plan;
  if (values['ip-allow']) changes.ipAllow = parseCidrList(values['ip-allow'], '--ip-allow', command);
  if (values['no-ip-allow']) changes.ipAllow = [];
  if (Object.keys(changes).length === 0) throw new UsageError('nothing to change: give --plan, --ip-allow or --no-ip-allow', command);
  return changes;
}

/** What `keys update` did, naming every key it applies to (the pair, not only the key given). */
function updatedText(before: KeyInfo, after: KeyInfo[], changes: SubscriptionChanges, when: string): string {
  const [updated] = after;
  const keys = after.map((k) => `${k.kind} key ${k.id}${k.status === 'revoked' ? ' (revoked)' : ''}`).join(', ');
  const changed = [
    changes.plan !== undefined && describeChange('plan', before.plan, updated.plan),
    changes.ipAllow !== undefined && describeChange('IP allowlist', formatIpAllow(before.ipAllow), formatIpAllow(updated.ipAllow)),
  ].filter((text): text is string => typeof text === 'string');
  return [
    `Updated subscription ${updated.subscriptionId} (${updated.product}: ${keys}): ${changed.join('; ')}.`,
    `It applies to every key listed, which stay the same; usage and this month's quota count are kept. Running servers apply it ${when}.`,
  ].join('\n');
}

function describeChange(what: string, from: string, to: string): string {
  return from === to ? `${what} ${to} (as before)` : `${what} ${from} -> ${to}`;
}

async function revokeKey(argv: string[]): Promise<number> {
  const command = 'keys revoke';
  const { values, positionals } = parseCommand(argv, { ...METER_OPTIONS }, command);
  if (values.help) return printHelp();
  const [keyOrId] = expectPositionals(positionals, ['KEY'], command).map((v) => v.trim());
  const key = parseKeyArgument(keyOrId);
  const store = chooseAdminStore(values, command);

  const { before, revoked } = await withMeter(store, { create: false }, async (meter: MeterAdmin & Pick<MeterHotPath, 'resolveKey'>) => {
    const before = key.byId ? (await meter.listKeys()).find((k) => k.id === key.text)?.status : (await meter.resolveKey(key.target))?.status;
    return { before, revoked: await meter.revokeKey(key.target) };
  });
  if (!revoked) throw noKeyError(key, store);
  const what = `key ${revoked.id} (${revoked.product} ${revoked.kind}, ${revoked.prefix}...)`;
  out(before === 'revoked' ? `${what} was already revoked.` : `Revoked ${what}. It stops working ${await whenServersSeeChanges(store)}.`);
  return EXIT_OK;
}
