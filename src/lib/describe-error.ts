/** Message, stack and the chain of causes (a meter failure wraps the store's own error), for a log line. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const stack = error.stack ?? '';
  let text = stack.includes(error.message) ? stack : `${error.name}: ${error.message}\n${stack}`;
  if (error.cause !== undefined) text += `\ncaused by: ${describeError(error.cause)}`;
  return text;
}
