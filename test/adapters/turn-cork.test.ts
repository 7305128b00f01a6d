import { describe, expect, it } from 'vitest';
import { createTurnCork } from '../../adapters/turn-cork.js';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('createTurnCork', () => {
  it('holds answers ready in their arrival turn until the turn ends, then sends them in order', async () => {
    const cork = createTurnCork();
    const sent: string[] = [];
    const first = cork.arrival();
    const second = cork.arrival();
    expect(second).toBe(first);
    cork.send(first, () => sent.push('a'));
    await Promise.resolve(); // a microtask later is still the same turn
    cork.send(second, () => sent.push('b'));
    expect(sent).toEqual([]);
    await nextTurn();
    expect(sent).toEqual(['a', 'b']);
  });

  it('sends at once an answer that is ready only after its turn ended, and never holds it a further turn', async () => {
    const cork = createTurnCork();
    const sent: string[] = [];
    const turn = cork.arrival();
    // Like a SQLite group commit: scheduled after the request arrived, resolving at the end of the turn.
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        cork.send(turn, () => sent.push('committed'));
        expect(sent).toEqual(['committed']);
        resolve();
      }),
    );
    // A request arriving after that turn starts a new one.
    const later = cork.arrival();
    expect(later).not.toBe(turn);
    cork.send(later, () => sent.push('later'));
    expect(sent).toEqual(['committed']);
    await nextTurn();
    expect(sent).toEqual(['committed', 'later']);
  });
});
