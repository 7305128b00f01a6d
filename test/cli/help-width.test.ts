/** Every `--help` fits a 100-column terminal, product flags and settings included. */
import { describe, expect, it } from 'vitest';
import { runCli } from './harness.js';

describe('--help fits 100 columns', () => {
  it.each([[[]], [['serve']], [['keys']], [['plans']], [['usage']], [['lookup']], [['data']], [['doctor']], [['openapi']], [['reports']], [['sitekeys']]])(
    'seclookup %j --help',
    async (command) => {
      const result = await runCli([...command, '--help']);
      expect(result.code).toBe(0);
      const wide = result.stdout.split('\n').filter((line) => line.length > 100);
      expect(wide).toEqual([]);
    },
  );
});
