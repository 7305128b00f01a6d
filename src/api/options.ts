/**
 * `createApi`'s options, checked at construction: a JavaScript caller's mistake (a misspelt
 * name, a string where a function goes, a meter that is not one) is an `invalid_option`
 * TypeError naming the option, not a 500 on every request later.
 */
import { invalidOption } from '../errors.js';
import type { ApiOptions } from './types.js';

/** Every option createApi reads. */
const OPTION_NAMES: ReadonlySet<string> = new Set<keyof ApiOptions>([
  'lookup',
  'meter',
  'singleUse',
  'secret',
  'bodyLimit',
  'batchLimit',
  'batchDeadlineMs',
  'trustProxy',
  'onMeterError',
  'meterTimeoutMs',
  'onResponse',
  'onError',
  'logger',
  'now',
]);

/** What the API calls on the meter. */
const METER_METHODS = ['resolveKey', 'consume', 'refund', 'commit', 'quota', 'getSetting', 'setSetting', 'setSettingIfAbsent'] as const;

/** Throws invalid_option for options of the wrong shape; the values' ranges are checked where they are read. */
export function checkApiOptions(options: ApiOptions): void {
  if (typeof options !== 'object' || options === null) throw invalidOption('createApi needs an options object: createApi({ lookup, meter })');
  for (const name of Object.keys(options)) {
    if (!OPTION_NAMES.has(name)) throw invalidOption(`createApi has no option ${JSON.stringify(name)}; it takes ${[...OPTION_NAMES].join(', ')}`);
  }
  const { lookup, meter, singleUse, logger, trustProxy } = options;
  if (!lookup || !meter) throw invalidOption('createApi needs { lookup, meter }');
  if (typeof lookup.engine !== 'function') throw invalidOption('lookup must be what createLookup() returns');
  for (const method of METER_METHODS) {
    if (typeof meter[method] !== 'function')
      throw invalidOption(`meter must be a Meter (createSqliteMeter, createMemoryMeter, createRedisMeter): it has no ${method}()`);
  }
  if (singleUse !== undefined && (typeof singleUse?.consume !== 'function' || typeof singleUse.close !== 'function'))
    throw invalidOption('singleUse must be a SingleUseStore (createSqliteSingleUseStore, createRedisSingleUseStore): consume() and close()');
  for (const name of ['onResponse', 'onError', 'now'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') throw invalidOption(`${name} must be a function (got ${typeof options[name]})`);
  }
  if (logger !== undefined && (typeof logger?.info !== 'function' || typeof logger.error !== 'function'))
    throw invalidOption('logger must have info() and error(), as a pino logger has');
  if (trustProxy !== undefined && (!Array.isArray(trustProxy) || !trustProxy.every((cidr) => typeof cidr === 'string')))
    throw invalidOption(`trustProxy must be an array of CIDR strings, such as ['10.0.0.0/8'] (got ${JSON.stringify(trustProxy)})`);
  const { secret } = options;
  if (
    secret !== undefined &&
    typeof secret !== 'string' &&
    !(secret instanceof Uint8Array) &&
    !(typeof secret === 'object' && secret !== null && 'kek' in secret)
  )
    throw invalidOption(`secret must be text or bytes, at least 32 bytes (got ${typeof secret})`);
}
