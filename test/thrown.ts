/** What `run` throws, for tests that look at an error's fields; fails the test when it returns. */
export function thrown(run: () => unknown): Error & { code?: string; cause?: unknown } {
  try {
    run();
  } catch (error) {
    return error as Error & { code?: string; cause?: unknown };
  }
  throw new Error('expected it to throw, it returned');
}
