/** Causes followed at most: a chain longer than that is cut with a note. */
const MAX_CAUSES = 8;

/**
 * Message, stack and the chain of causes (a meter failure wraps the store's own error), for a log
 * line. Never throws: a cause that loops back is named once, and a thrown value whose text cannot
 * be had (`Object.create(null)`, a throwing `toString`) is described by its type.
 */
export function describeError(error: unknown): string {
  const seen = new Set<unknown>();
  const parts: string[] = [];
  for (let current = error; ; ) {
    parts.push(describeOne(current));
    seen.add(current);
    if (!(current instanceof Error) || current.cause === undefined) break;
    current = current.cause;
    if (seen.has(current)) {
      parts.push('(the chain of causes loops back here)');
      break;
    }
    if (parts.length > MAX_CAUSES) {
      parts.push(`(further causes not shown: over ${MAX_CAUSES})`);
      break;
    }
  }
  return parts.join('\ncaused by: ');
}

function describeOne(error: unknown): string {
  try {
    if (!(error instanceof Error)) return String(error);
    const stack = error.stack ?? '';
    return stack.includes(error.message) ? stack : `${error.name}: ${error.message}\n${stack}`;
  } catch {
    return `(a thrown ${typeof error} that cannot be shown as text)`;
  }
}
