import { defineConfig } from 'tsup';

// One entry per public subpath in package.json "exports"; keep the two in step.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    node: 'adapters/node.ts',
    express: 'adapters/express.ts',
    fastify: 'adapters/fastify.ts',
    sqlite: 'src/metering/sqlite/index.ts',
    redis: 'src/metering/redis/index.ts',
    client: 'src/client/index.ts',
    metrics: 'src/metrics/index.ts',
    cli: 'src/cli/bin.ts',
  },
  format: ['esm'],
  target: 'node20',
  dts: {
    entry: {
      index: 'src/index.ts',
      node: 'adapters/node.ts',
      express: 'adapters/express.ts',
      fastify: 'adapters/fastify.ts',
      sqlite: 'src/metering/sqlite/index.ts',
      redis: 'src/metering/redis/index.ts',
      client: 'src/client/index.ts',
      metrics: 'src/metrics/index.ts',
    },
  },
  clean: true,
  splitting: true,
  sourcemap: true,
  // Frameworks and ioredis are optional peers: never bundle them.
  external: ['express', 'fastify', 'better-sqlite3', 'ioredis'],
});
