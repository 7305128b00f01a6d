/**
 * `seclookup keys create | list | revoke`: API keys in the metering database. Only a key's
 * SHA-256 hash and a short visible prefix are stored, so a secret is printed exactly once,
 * by `keys create`, and never again.
 */
import { hashKey, issueKeys, type IssuedKeys } from '../metering/keys.js';
import { resolvePlan } from '../metering/plans.js';
import type { KeyInfo, MeterAdmin, MeterHotPath } from '../metering/types.js';
import type { ProductId } from '../products/catalog.js';
import { METER_OPTIONS, expectPositionals, parseCidrList, parseCommand, parseProduct } from './args.js';
import { chooseAdminStore, describeMeter, whenServersSeeChanges, withMeter } from './db.js';
import { CommandError, EXIT_OK, UsageError } from './errors.js';
import { formatIpAllow, formatTable, out, outDelivered, printJson } from './output.js';

export const KEYS_HELP = `Usage:
  seclookup keys create --product PRODUCT [--plan SLUG] [--ip-allow CIDR,...] [--json] [--db FILE | --redis URL]
  seclookup keys list [--json] [--db FILE | --redis URL]
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
            both --db and --redis).`;

export async function runKeys(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'create':
      return createKeys(rest);
    case 'list':
      return listKeys(rest);
    case 'revoke':
      return revokeKey(rest);
    case undefined:
      throw new UsageError('missing subcommand: create, list or revoke', 'keys');
    default:
      if (sub === '-h' || sub === '--help') return printHelp();
      throw new UsageError(`unknown subcommand ${JSON.stringify(sub)}; use create, list or revoke`, 'keys');
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

async function revokeKey(argv: string[]): Promise<number> {
  const command = 'keys revoke';
  const { values, positionals } = parseCommand(argv, { ...METER_OPTIONS }, command);
  if (values.help) return printHelp();
  const [keyOrId] = expectPositionals(positionals, ['KEY'], command).map((v) => v.trim());

  // A numeric argument is a key id from `keys list`; anything else is a full key, which the
  // store knows only by its hash.
  const byId = /^[1-9]\d*$/.test(keyOrId);
  const target = byId ? keyOrId : hashKey(keyOrId);
  const store = chooseAdminStore(values, command);

  const { before, revoked } = await withMeter(store, { create: false }, async (meter: MeterAdmin & Pick<MeterHotPath, 'resolveKey'>) => {
    const before = byId ? (await meter.listKeys()).find((k) => k.id === keyOrId)?.status : (await meter.resolveKey(target))?.status;
    return { before, revoked: await meter.revokeKey(target) };
  });
  if (!revoked) {
    throw new CommandError(
      byId ? `no key with id ${keyOrId} (see \`seclookup keys list\`)` : 'no key matches; pass the full key, or its id from `seclookup keys list`',
    );
  }
  const what = `key ${revoked.id} (${revoked.product} ${revoked.kind}, ${revoked.prefix}...)`;
  out(before === 'revoked' ? `${what} was already revoked.` : `Revoked ${what}. It stops working ${await whenServersSeeChanges(store)}.`);
  return EXIT_OK;
}
