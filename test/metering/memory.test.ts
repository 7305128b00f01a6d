import { describe, expect, it } from 'vitest';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import { describeMeterConformance } from './conformance/index.js';

describeMeterConformance('memory', async (options) => {
  const meter = createMemoryMeter(options);
  return { meter, cleanup: () => meter.close() };
});

describe('createMemoryMeter', () => {
  it('starts with the given plan table instead of the defaults', async () => {
    const meter = createMemoryMeter({ plans: [{ slug: 'solo', product: '*', rateLimitPerMinute: 5, monthlyQuota: 50 }] });
    expect(await meter.listPlans()).toEqual([{ slug: 'solo', product: '*', rateLimitPerMinute: 5, monthlyQuota: 50 }]);
  });

  it('rejects an invalid plan table at construction', () => {
    expect(() => createMemoryMeter({ plans: [{ slug: 'solo', product: '*', rateLimitPerMinute: 0, monthlyQuota: 50 }] })).toThrow(TypeError);
  });
});
