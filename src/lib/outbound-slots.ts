/**
 * One cap on the sockets lookups open to other hosts (TLS handshakes, WHOIS on port 43, RDAP
 * over HTTP), shared by every product of a `createLookup`. Each socket is an open file: without
 * a cap, a burst of lookups to slow hosts can use up the process's open-files limit, and then
 * serve can neither accept a client nor open a DNS socket.
 *
 * A connection takes a slot before it connects and gives it back when its socket closes. A
 * lookup that finds none free waits, within its own deadline, in a bounded queue (first come,
 * first served); it fails like any upstream failure when no slot frees in time or the queue is
 * full, so the product answers it as its usual 502 `lookup_failed`.
 */
import type { Socket } from 'node:net';
import { invalidOption, SeclookupError } from '../errors.js';
import { describeValue } from './option-checks.js';

/** Lookups that may wait for a slot, per slot: past that, a slot would rarely free in time anyway. */
export const WAITING_PER_SLOT = 8;

export interface OutboundSlots {
  /** Most sockets open at once; Infinity when there is no cap. */
  readonly limit: number;
  /** Most connections waiting for a slot at once (`limit` × 8); more fail at once. */
  readonly maxWaiting: number;
  /** Slots held now. */
  readonly inUse: number;
  /** Connections waiting for a slot now. */
  readonly waiting: number;
  /**
   * A slot for one socket: at once when one is free, else the first to free within `waitMs`.
   * Rejects with SeclookupError `timeout` when none frees in time, or `upstream_failed` when
   * `maxWaiting` connections wait already.
   */
  acquire(waitMs: number): Promise<OutboundSlot>;
  /**
   * Refuse every connection waiting for a slot, and any asked for later (the lookup was closed):
   * `upstream_failed` at once, rather than a socket opened after close. Slots held stay held
   * until their sockets close.
   */
  close(): void;
}

/** One held slot: given back once, by whichever of these comes first. */
export interface OutboundSlot {
  release(): void;
  /** Give the slot back when `socket` has closed (its file is then free). */
  releaseOnClose(socket: Socket): void;
}

/** `maxSockets`, checked: a whole number of sockets >= 1, or Infinity. TypeError `invalid_option`. */
export function checkMaxSockets(value: unknown): number {
  if (value === Number.POSITIVE_INFINITY || (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1)) return value;
  throw invalidOption(`maxSockets must be a whole number of sockets >= 1, or Infinity (got ${describeValue(value)})`);
}

interface Waiter {
  grant(slot: OutboundSlot): void;
  refuse(error: Error): void;
  timer: NodeJS.Timeout;
  /** Granted or given up: left in the queue array until passed over. */
  settled: boolean;
}

export function createOutboundSlots(maxSockets: number = Number.POSITIVE_INFINITY): OutboundSlots {
  const limit = checkMaxSockets(maxSockets);
  const maxWaiting = limit * WAITING_PER_SLOT;
  let inUse = 0;
  let waiting = 0;
  // A FIFO with a moving head: shift() would cost O(n) per grant with thousands waiting.
  let queue: Waiter[] = [];
  let head = 0;
  let closed = false;
  const closedError = () => new SeclookupError('upstream_failed', 'the lookup was closed: no new outbound connection');

  function newSlot(): OutboundSlot {
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      handOn();
    };
    return {
      release,
      releaseOnClose(socket) {
        if (socket.closed) release();
        else socket.once('close', release);
      },
    };
  }

  /** A freed slot goes straight to the oldest waiter, so `inUse` falls only when none waits. */
  function handOn(): void {
    while (head < queue.length) {
      const next = queue[head++];
      if (next.settled) continue;
      next.settled = true;
      waiting--;
      clearTimeout(next.timer);
      compact();
      next.grant(newSlot());
      return;
    }
    compact();
    inUse--;
  }

  /** Drop the entries passed over or given up, once they are most of the array. */
  function compact(): void {
    if (head === queue.length) {
      queue = [];
      head = 0;
    } else if (queue.length > 2 * maxWaiting || head > 1024) {
      queue = queue.slice(head).filter((waiter) => !waiter.settled);
      head = 0;
    }
  }

  function wait(waitMs: number): Promise<OutboundSlot> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: resolve,
        refuse: reject,
        settled: false,
        timer: setTimeout(() => {
          waiter.settled = true;
          waiting--;
          reject(new SeclookupError('timeout', `no outbound connection free within ${waitMs} ms (${limit} open at once, the most allowed); retry later`));
        }, waitMs),
      };
      waiting++;
      queue.push(waiter);
      compact();
    });
  }

  return {
    limit,
    maxWaiting,
    get inUse() {
      return inUse;
    },
    get waiting() {
      return waiting;
    },
    acquire(waitMs) {
      if (closed) return Promise.reject(closedError());
      if (inUse < limit) {
        inUse++;
        return Promise.resolve(newSlot());
      }
      if (waiting >= maxWaiting)
        return Promise.reject(
          new SeclookupError('upstream_failed', `too many outbound connections at once (${limit} open, ${waiting} waiting, the most allowed); retry later`),
        );
      return wait(Math.max(1, Math.floor(waitMs)));
    },
    close() {
      closed = true;
      for (const waiter of queue.slice(head)) {
        if (waiter.settled) continue;
        waiter.settled = true;
        clearTimeout(waiter.timer);
        waiter.refuse(closedError());
      }
      queue = [];
      head = 0;
      waiting = 0;
    },
  };
}
