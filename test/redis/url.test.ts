/** The Redis URL forms `--redis` and the stores take: one Redis, or a Cluster's seed nodes. */
import { describe, expect, it } from 'vitest';
import { createRedisClient } from '../../src/metering/redis/index.js';
import { parseClusterUrl, redactRedisUrl, redisUrlProblem } from '../../src/metering/redis/url.js';

describe('Redis Cluster URLs', () => {
  it('redis+cluster://[user:password@]h1:p1,h2:p2 gives the seed nodes and the credentials', () => {
    expect(parseClusterUrl('redis+cluster://app:s%40cret@10.0.0.1:7000,redis-b.internal:7001,[::1]:7002,node-d/0')).toEqual({
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: 'redis-b.internal', port: 7001 },
        { host: '::1', port: 7002 },
        { host: 'node-d', port: 6379 },
      ],
      username: 'app',
      password: 's@cret',
      tls: false,
    });
    expect(parseClusterUrl('rediss+cluster://:pw@h:1')).toEqual({ nodes: [{ host: 'h', port: 1 }], username: undefined, password: 'pw', tls: true });
  });

  it('refuses a database other than 0, a bad node or port, without repeating the URL', () => {
    expect(redisUrlProblem('redis+cluster://h1:7000/3')).toMatch(/database 0 only/);
    expect(redisUrlProblem('redis+cluster://u:hunter2@h1:7000,,h2:1')).toMatch(/seed node must be host:port/);
    expect(redisUrlProblem('redis+cluster://h1:70000')).toMatch(/seed node must be host:port/);
    expect(redisUrlProblem('redis+cluster://u:hunter2@h1:x')).not.toContain('hunter2');
    expect(redisUrlProblem('http://h1:7000')).toMatch(/must start with redis:\/\//);
    expect(redisUrlProblem('redis://127.0.0.1:6379/2')).toBeNull();
    expect(() => createRedisClient('redis+cluster://h1:7000/1')).toThrow(expect.objectContaining({ code: 'invalid_option' }));
  });

  it('redacts the password of either form, and any ?options (ioredis reads a password there)', () => {
    expect(redactRedisUrl('redis+cluster://app:hunter2@h1:7000,h2:7001')).toBe('redis+cluster://app:***@h1:7000,h2:7001');
    expect(redactRedisUrl('redis://:hunter2@h1:6379/0')).toBe('redis://:***@h1:6379/0');
    expect(redactRedisUrl('redis://h1:6379/0?password=hunter2')).toBe('redis://h1:6379/0?***');
    expect(redactRedisUrl('redis://h1:bad port/0')).not.toContain('h1');
    // A password with an unencoded '/' or '#' parses as a host, a port and a path: still hidden.
    expect(redactRedisUrl('redis://u:4242/topsecret@h1:6379/0')).toBe('redis://u:***@h1:6379/0');
    expect(redactRedisUrl('redis://u:4242#topsecret@h1:6379')).toBe('redis://u:***@h1:6379');
  });

  it('cluster seed nodes may be named with _, as Docker Compose names services', () => {
    expect(parseClusterUrl('redis+cluster://redis_node_1:7000,redis_node_2').nodes).toEqual([
      { host: 'redis_node_1', port: 7000 },
      { host: 'redis_node_2', port: 6379 },
    ]);
  });
});
