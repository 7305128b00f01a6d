/**
 * The Meter conformance suites, one per role. A store that implements the whole Meter (memory,
 * SQLite, Redis) runs the three with `describeMeterConformance`.
 */
import { describeMeterAdminConformance } from './admin.js';
import type { MeterFactory } from './common.js';
import { describeMeterHotPathConformance } from './hot-path.js';
import { describeSettingsStoreConformance } from './settings.js';

export { describeMeterAdminConformance, describeMeterHotPathConformance, describeSettingsStoreConformance };
export { FEB, MINUTE, T0, requestFor, type MeterFactory, type MeterFactoryOptions } from './common.js';

/** Every role's suite on one store. */
export function describeMeterConformance(name: string, makeMeter: MeterFactory): void {
  describeMeterHotPathConformance(name, makeMeter);
  describeMeterAdminConformance(name, makeMeter);
  describeSettingsStoreConformance(name, makeMeter);
}
