import { describe, expect, it } from 'vitest';
import { generateKey, hashKey, visiblePrefix } from '../../src/metering/keys.js';

describe('keys', () => {
  it('hashes a key to SHA-256 in lowercase hex', () => {
    expect(hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashKey('ua_sec_é')).toMatch(/^[0-9a-f]{64}$/);
    expect(hashKey('ua_sec_é')).not.toBe(hashKey('ua_sec_e'));
  });

  it('generates keys with the product prefix, 192 random bits and a short visible prefix', () => {
    const key = generateKey('useragent', 'secret');
    expect(key).toMatch(/^ua_sec_[A-Za-z0-9_-]{32}$/);
    expect(generateKey('useragent', 'secret')).not.toBe(key);
    expect(visiblePrefix(key)).toBe(key.slice(0, 'ua_sec_'.length + 6));
  });
});
