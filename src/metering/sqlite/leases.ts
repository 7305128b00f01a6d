/**
 * Grouped leases of the SQLite meter. Every reservation a group transaction makes for the same
 * subscription, product, month, day and expiry shares ONE lease row, whose `units` is what its
 * members still hold; each reservation is a member of it (`<row lease>/<member>`). Commits are
 * settled in memory at once (no promise, no statement) and the row is updated or deleted in
 * the next group transaction, one statement per row however many members settled.
 *
 * What this keeps: the row always holds exactly the units of members not yet committed or
 * refunded as of the last group (the same moment a commit was written before grouping), so
 * an expired row gives back exactly what was never settled, and a `kill -9` costs what it did
 * with one row per reservation: the reservations not yet committed stay reserved until their
 * lease expires, then go back (not billed). A reservation is settled through the meter that
 * made it (the members live in its memory); a reservation of another process, or of a row that
 * expired, is ended already and settling it does nothing.
 */
import type Database from 'better-sqlite3';
import type { ProductId } from '../../products/catalog.js';
import { ALLOWANCE_ROW_MARK, isAllowanceLease } from './allowances.js';

interface LeaseRow {
  subscriptionId: string;
  expiresAt: number;
  /** The row's name, unique among every process on the file. */
  lease: string;
  product: ProductId;
  period: string;
  day: string;
  /** Units per member not yet settled. */
  members: Map<number, number>;
  lastMember: number;
  /** Units the row holds: the sum of `members`. */
  live: number;
  /** Whether the row exists in the file (as of the last committed group). */
  stored: boolean;
  /** Whether it holds an allowance's units (its name ends in the mark). */
  allowance: boolean;
}

/** A member's name and what it names (see LeaseBook.recent). */
interface MemberName {
  name: string;
  row: LeaseRow | undefined;
  member: number;
}

export interface LeaseStatements {
  insertLease: Database.Statement<[string, number, string, number, string, string, string]>;
  setLeaseUnits: Database.Statement<[number, string, number, string]>;
  deleteLease: Database.Statement<[string, number, string]>;
}

export class LeaseBook {
  /** Rows with members not yet settled, by name. */
  private readonly open = new Map<string, LeaseRow>();
  /** Rows opened by the group transaction running now, by what their members share. */
  private readonly forming = new Map<string, LeaseRow>();
  /** Rows whose units changed since the last committed group. */
  private readonly dirty = new Set<LeaseRow>();
  /** How to undo what the running transaction changed in memory, should it roll back. */
  private undo: (() => void)[] = [];
  private inTransaction = false;
  private lastRow = 0;
  private lastFound: LeaseRow | undefined;
  /**
   * The two member names made or read last, with what they name (the one used less recently is
   * replaced). A spend splits the allowance's unspent member, and a lookup answered at once
   * settles the new member in the same call, so the names asked for are nearly always these
   * very strings: found by `===` (a pointer check for the same string) instead of parsed again.
   */
  private readonly recent: [MemberName, MemberName] = [
    { name: '', row: undefined, member: 0 },
    { name: '', row: undefined, member: 0 },
  ];
  private nextRecent = 0;

  constructor(
    private readonly sql: LeaseStatements,
    /** This meter's random tag: row names are `<expiresAt>:<tag>:<n>`. */
    private readonly tag: string,
  ) {}

  /**
   * A new reservation of `units` (inside a group transaction): its lease name. An allowance's
   * unspent block gets a row of its own, marked (see allowances.ts): its units are not in usage.
   */
  reserve(subscriptionId: string, product: ProductId, period: string, day: string, expiresAt: number, units: number, allowance = false): string {
    const shared = `${subscriptionId}\u0000${product}\u0000${period}\u0000${day}\u0000${expiresAt}${allowance ? ALLOWANCE_ROW_MARK : ''}`;
    let row = this.forming.get(shared);
    if (!row) {
      row = {
        subscriptionId,
        expiresAt,
        lease: `${expiresAt}:${this.tag}:${++this.lastRow}${allowance ? ALLOWANCE_ROW_MARK : ''}`,
        product,
        period,
        day,
        members: new Map(),
        lastMember: 0,
        live: 0,
        stored: false,
        allowance,
      };
      this.forming.set(shared, row);
      this.open.set(row.lease, row);
      const opened = row;
      if (this.inTransaction) this.undo.push(() => this.open.delete(opened.lease));
    }
    const member = ++row.lastMember;
    this.settleInto(row, member, units);
    return this.named(row, member);
  }

  /**
   * End a reservation's membership: the units it still held, or undefined when it had ended
   * (settled, expired, unknown). Inside or outside a transaction; the row is written at the
   * next group.
   */
  settle(reservationLease: string, stillInFile?: (subscriptionId: string, expiresAt: number, lease: string) => boolean): number | undefined {
    const { row, member } = this.memberOf(reservationLease);
    const units = row?.members.get(member);
    if (row === undefined || units === undefined) return undefined;
    // Another process may have given the row back on expiry: then its members have ended.
    if (row.stored && stillInFile && !stillInFile(row.subscriptionId, row.expiresAt, row.lease)) {
      this.expired(row.lease);
      return undefined;
    }
    this.settleInto(row, member, undefined);
    return units;
  }

  /**
   * Move `units` of a member to a new member of the same row (an allowance spends from its
   * unspent member): the new member's name. The row's units do not change: nothing to write.
   */
  split(from: string, units: number): string {
    const { row, member } = this.memberOf(from);
    const held = row?.members.get(member);
    if (row === undefined || held === undefined || held < units) throw new Error(`lease member ${from} cannot give ${units} units`);
    const added = ++row.lastMember;
    row.members.set(member, held - units);
    row.members.set(added, units);
    if (this.inTransaction)
      this.undo.push(() => {
        row.members.set(member, held);
        row.members.delete(added);
      });
    return this.named(row, added);
  }

  /**
   * End a member, moving up to `units` of it into another member of its row (a refund back
   * into an allowance); the rest leave the row (answered). The member's units, or undefined
   * when either member has ended.
   */
  join(from: string, into: string, units: number): number | undefined {
    const source = this.memberOf(from);
    const target = this.memberOf(into);
    const row = source.row;
    if (row === undefined || row !== target.row) return undefined;
    const held = row.members.get(source.member);
    const before = row.members.get(target.member);
    if (held === undefined || before === undefined) return undefined;
    const moved = Math.min(units, held);
    row.members.delete(source.member);
    row.members.set(target.member, before + moved);
    if (moved < held) {
      row.live -= held - moved;
      this.dirty.add(row);
    }
    return held;
  }

  /** The row and member a reservation names: a recent name first, else parsed. */
  private memberOf(reservationLease: string): { row: LeaseRow | undefined; member: number } {
    for (let slot = 0; slot < 2; slot++) {
      const known = this.recent[slot];
      // Only while its row is open: a row given back on expiry has no members any more.
      if (known.name === reservationLease && known.row !== undefined && this.open.get(known.row.lease) === known.row) {
        // The other slot is the one a new name replaces: the unspent member and the newest stay.
        this.nextRecent = slot ^ 1;
        return { row: known.row, member: known.member };
      }
    }
    const found = this.parseMemberOf(reservationLease);
    if (found.row !== undefined) this.remember(reservationLease, found.row, found.member);
    return found;
  }

  /** The last row found is tried first: a busy allowance's members share one. */
  private parseMemberOf(reservationLease: string): { row: LeaseRow | undefined; member: number } {
    const slash = reservationLease.lastIndexOf('/');
    const member = Number(reservationLease.slice(slash + 1));
    if (slash < 0) return { row: undefined, member };
    const last = this.lastFound;
    if (last !== undefined && slash === last.lease.length && reservationLease.startsWith(last.lease) && this.open.get(last.lease) === last)
      return { row: last, member };
    const row = this.open.get(reservationLease.slice(0, slash));
    if (row !== undefined) this.lastFound = row;
    return { row, member };
  }

  /** The name of a row's member (`<row lease>/<member>`), remembered for memberOf. */
  private named(row: LeaseRow, member: number): string {
    const name = `${row.lease}/${member}`;
    this.remember(name, row, member);
    return name;
  }

  private remember(name: string, row: LeaseRow, member: number): void {
    const slot = this.recent[this.nextRecent];
    this.nextRecent ^= 1;
    slot.name = name;
    slot.row = row;
    slot.member = member;
  }

  /** True when `name` is a member of an allowance's row; a recent name's row answers without reading the name. */
  isAllowanceMember(name: string): boolean {
    const { row } = this.memberOf(name);
    return row !== undefined ? row.allowance : isAllowanceLease(name);
  }

  /** True when a commit or refund left rows to write: the next group writes them. */
  get hasChanges(): boolean {
    return this.dirty.size > 0;
  }

  /** The row's units per the rows in memory, or undefined when this meter does not hold it. */
  heldBy(lease: string): number | undefined {
    return this.open.get(lease)?.live;
  }

  /** A row given back on expiry (by any process): its members have ended. Inside a transaction. */
  expired(lease: string): void {
    const row = this.open.get(lease);
    if (!row) return;
    this.open.delete(lease);
    this.dirty.delete(row);
    if (this.inTransaction)
      this.undo.push(() => {
        this.open.set(lease, row);
        this.dirty.add(row);
      });
  }

  /** A group transaction begins. */
  begin(): void {
    this.inTransaction = true;
    this.undo = [];
  }

  /** Inside the transaction, last: write every changed row. */
  write(): void {
    for (const row of this.dirty) {
      if (!row.stored) {
        if (row.live > 0) this.sql.insertLease.run(row.subscriptionId, row.expiresAt, row.lease, row.live, row.product, row.period, row.day);
      } else if (row.live > 0) this.sql.setLeaseUnits.run(row.live, row.subscriptionId, row.expiresAt, row.lease);
      else this.sql.deleteLease.run(row.subscriptionId, row.expiresAt, row.lease);
    }
  }

  /** The transaction committed: the rows written are in the file now. */
  committed(): void {
    for (const row of this.dirty) {
      row.stored = true;
      if (row.live === 0) this.open.delete(row.lease);
    }
    this.dirty.clear();
    this.end();
  }

  /** The transaction rolled back: memory goes back to what the file holds (changed rows stay to write). */
  rolledBack(): void {
    for (let i = this.undo.length - 1; i >= 0; i--) this.undo[i]();
    this.end();
  }

  private end(): void {
    this.forming.clear();
    this.undo = [];
    this.inTransaction = false;
  }

  /** Set (units) or end (undefined) a member, remembering how to undo it inside a transaction. */
  private settleInto(row: LeaseRow, member: number, units: number | undefined): void {
    const before = row.members.get(member);
    const wasDirty = this.dirty.has(row);
    const wasOpen = this.open.has(row.lease);
    if (units === undefined) row.members.delete(member);
    else row.members.set(member, units);
    row.live += (units ?? 0) - (before ?? 0);
    this.dirty.add(row);
    if (!this.inTransaction) return;
    this.undo.push(() => {
      if (before === undefined) row.members.delete(member);
      else row.members.set(member, before);
      row.live += (before ?? 0) - (units ?? 0);
      if (!wasDirty) this.dirty.delete(row);
      if (!wasOpen) this.open.delete(row.lease);
    });
  }
}
