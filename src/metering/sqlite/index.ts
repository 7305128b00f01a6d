/**
 * `seclookup/sqlite`: the stores several processes on one machine share through one SQLite file
 * (a Meter, and the SingleUseStore captcha spends its tokens in). This subpath is the only one
 * that loads better-sqlite3.
 */
export { createSqliteMeter } from './meter.js';
export type { SqliteMeterOptions } from './meter.js';
export { createSqliteSingleUseStore } from './single-use.js';
export type { Meter, MeterAdmin, MeterHotPath, SettingsStore } from '../types.js';
export type { SingleUseStore } from '../single-use.js';
