import { invalidOption, isSeclookupError } from '../../errors.js';
import { datasetDateMs } from '../../lib/datasets.js';
import { describeValue, invalidOptionFrom, isOptionsObject } from '../../lib/option-checks.js';
import { WEBHOOKIP_DOC } from './doc.js';
import { defineProduct, type DatasetUpdateReport, type EngineContext } from '../module.js';
import { getLookupRoutes, queryValue } from '../route.js';
import { createWebhookIpEngine, loadWebhookRanges } from './engine.js';
import type { WebhookIpOptions, WebhookRangesDataset } from './types.js';
import { updateWebhookRanges, type WebhookUpdateReport } from './update.js';
import type { WebhookIpEngine } from './engine.js';

// This product's engine type, for the modules that `need` it (EngineContext.engine).
declare module '../module.js' {
  interface ProductEngines {
    webhookip: WebhookIpEngine;
  }
}

export interface WebhookIpEngineOptions {
  /** Use these ranges instead of reading `<dataDir>/webhookip/ranges.json`. */
  dataset?: WebhookRangesDataset;
}

/** webhookip: is a public IP in a webhook sender's published ranges? */
export default defineProduct({
  id: 'webhookip',
  optionNames: { dataset: true },
  checkOptions: ({ dataset }) => {
    if (dataset !== undefined && !(isOptionsObject(dataset) && Array.isArray(dataset.providers)))
      throw invalidOption(`webhookip dataset must be a ranges dataset { generated, providers: [...] } (got ${describeValue(dataset)})`);
  },
  createEngine: ({ dataDir, options }: EngineContext<WebhookIpEngineOptions>) =>
    options?.dataset === undefined ? createWebhookIpEngine(loadWebhookRanges(dataDir)) : engineOfOption(options.dataset),
  // SPEC: GET ?ip= and GET /lookup/{ip}, each with an optional `provider` query parameter.
  routes: getLookupRoutes('ip', 'invalid_ip', (ip, query): [string, WebhookIpOptions] => [ip, { provider: queryValue(query, 'provider') }]),
  doc: WEBHOOKIP_DOC,
  datasetAges: (engine) => [{ dataset: 'ranges.json', builtAtMs: datasetDateMs(engine.generated) }],
  doctor: { freshness: { maxAgeDays: { 'ranges.json': 90 }, refresh: 'seclookup data update webhookip' } },
  // Every provider's ranges (no `provider` filter in a batch).
  batch: { input: 'ip', args: (value): [string, WebhookIpOptions?] => [value] },
  cli: {
    input: 'an IPv4 or IPv6 address',
    example: '140.82.115.10 --provider github',
    flags: { provider: 'match only these providers (e.g. github,stripe)' },
    args: (input, flags): [string, WebhookIpOptions] => [input, { provider: flags.provider }],
  },
  dataset: {
    help: `webhookip fetches each provider's published feed (GitHub meta, Stripe, Paddle, ...). A
provider whose feed fails keeps its previous ranges; providers without a machine-readable
feed are kept as they are. The file is rewritten only when something changed. Default
per-feed timeout: 15000 ms.`,
    async update({ dataDir, mirror, timeoutMs, onProgress }) {
      return describeUpdate(await updateWebhookRanges({ dataDir, mirror, timeoutMs, onProgress }));
    },
  },
});

/** The engine of ranges given as the `dataset` option: a dataset it refuses is a configuration mistake (invalid_option), not a broken file. */
function engineOfOption(dataset: WebhookRangesDataset): WebhookIpEngine {
  try {
    return createWebhookIpEngine(dataset);
  } catch (error) {
    if (!isSeclookupError(error, 'dataset_invalid')) throw error;
    throw invalidOptionFrom(`webhookip dataset option: ${error.message.replace(/^seclookup: webhook ranges dataset: /, '')}`, error);
  }
}

/** The updater's report as the CLI prints it (it has already printed a line per provider). */
function describeUpdate(result: WebhookUpdateReport): DatasetUpdateReport {
  const { updated, unchanged, kept, failed } = result;
  const summary =
    `webhookip: ${updated.length} updated, ${unchanged.length} unchanged, ${kept.length} kept (no feed), ${failed.length} failed; ` +
    (result.changed ? `wrote ${result.path}` : `${result.path} not changed`);
  if (updated.length + unchanged.length === 0 && failed.length > 0) {
    return { summary, ok: false, notes: ['Every feed failed, so nothing was updated: check the network, or --mirror and --timeout.'] };
  }
  const notes: string[] = [];
  if (failed.length > 0) notes.push(`${failed.map((f) => f.id).join(', ')}: feed failed, previous ranges kept. The dataset is valid.`);
  if (result.changed) notes.push('Restart `seclookup serve` to load the new ranges.');
  return { summary, ok: true, notes };
}
