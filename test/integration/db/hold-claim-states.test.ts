// A hold claim's state in PostgreSQL: rows converted from the old timestamps, moves only along the domain's table.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createOpenHoldClaims } from '../../../src/db/booking-hold-claims';
import { migrateToLatest, migrationConfig } from '../../../src/db/migrate';
import { holdClaimMoves } from '../../../src/domain/hold-claims';
import {
  openScratchDatabase,
  openTestDatabase,
  testCipher,
  withScratchDatabase,
} from '../../support/database';
import { createCustomer } from '../../support/users';

const cipher = testCipher();
const hour = 3600 * 1000;
// Undone and applied by name: later migrations stay where they are.
const holdClaimStatesMigration = '20261129_017_hold_claim_states';

let admin: Knex;
// Claims of their own: promised claims with no workflow behind them must not meet another file's start reconciler.
let scratch: Awaited<ReturnType<typeof openScratchDatabase>>;
let database: Knex;
let customerId: string;

beforeAll(async () => {
  admin = openTestDatabase({ poolSize: 2, applicationName: 'hold-claim-state-tests' });
  scratch = await openScratchDatabase(admin, 'hold_claim_states');
  await migrateToLatest(scratch.url);
  database = scratch.database;
  customerId = (await createCustomer(database, cipher)).userId;
});

afterAll(async () => {
  await scratch?.drop();
  await admin?.destroy();
});

const claims = () =>
  createOpenHoldClaims({
    database,
    maximumOpenHolds: 100,
    claimDurationMs: hour,
    keepForMs: 24 * hour,
    now: () => new Date(),
  });

async function claimed(state: 'CLAIMED' | 'PROMISED' | 'STARTED' | 'RELEASED'): Promise<string> {
  const bookingId = randomUUID();
  await claims().claim(customerId, bookingId, 'sealed');
  if (state === 'PROMISED' || state === 'STARTED') await claims().promise(bookingId);
  if (state === 'STARTED') await claims().markStarted(bookingId);
  if (state === 'RELEASED') await claims().release(bookingId);
  return bookingId;
}

async function stateOf(bookingId: string): Promise<string | undefined> {
  return (await claims().find(bookingId))?.state;
}

describe('migration 017', () => {
  it('gives each existing claim the state its timestamps meant, and is undone without loss', async () => {
    await withScratchDatabase(admin, 'bookings_hold_claims', async (scratch, scratchUrl) => {
      await migrateToLatest(scratchUrl);
      await scratch.migrate.down({ ...migrationConfig, name: holdClaimStatesMigration });
      const owner = (await createCustomer(scratch, cipher)).userId;
      const at = new Date('2026-11-28T10:00:00Z');
      const row = (columns: Record<string, unknown>) => ({
        booking_id: randomUUID(),
        customer_id: owner,
        claimed_at: at,
        expires_at: new Date(at.getTime() + hour),
        start_request: 'sealed',
        ...columns,
      });
      const rows = {
        CLAIMED: row({}),
        PROMISED: row({ acknowledged_at: at }),
        STARTED: row({ acknowledged_at: at, started_at: at }),
        RELEASED: row({ acknowledged_at: at, released_at: at }),
        REFUSED: row({ start_request: null, released_at: at, refused_request_fingerprint: 'fingerprint' }),
      };
      await scratch('booking_hold_claims').insert(Object.values(rows));

      await scratch.migrate.up({ ...migrationConfig, name: holdClaimStatesMigration });

      for (const [state, { booking_id: bookingId }] of Object.entries(rows)) {
        expect(await scratch('booking_hold_claims').where({ booking_id: bookingId }).first('state')).toEqual({
          state,
        });
      }
      await scratch.migrate.down({ ...migrationConfig, name: holdClaimStatesMigration });
      expect(
        await scratch('booking_hold_claims')
          .where({ booking_id: rows.STARTED.booking_id })
          .first('released_at', 'acknowledged_at', 'started_at'),
      ).toEqual({ released_at: null, acknowledged_at: at, started_at: at });
    });
  });
});

describe('the moves', () => {
  it('the database lets through are the domain table’s', async () => {
    const rows = await database('booking_hold_claim_moves')
      .select<{ from_state: string; to_state: string }[]>('from_state', 'to_state')
      .orderBy(['from_state', 'to_state']);
    expect(rows.map((move) => [move.from_state, move.to_state])).toEqual(holdClaimMoves());
  });

  it('refuse any other change of state, such as reviving a released claim', async () => {
    const bookingId = await claimed('RELEASED');
    await expect(
      database('booking_hold_claims').where({ booking_id: bookingId }).update({ state: 'PROMISED' }),
    ).rejects.toMatchObject({ code: '23514' });
    expect(await stateOf(bookingId)).toBe('RELEASED');
  });

  it('leave a released claim released when a promise comes after it', async () => {
    const bookingId = await claimed('RELEASED');
    expect(await claims().promise(bookingId)).toBe(false);
    expect(await stateOf(bookingId)).toBe('RELEASED');
  });

  it('keep a promised or started claim when its create withdraws it', async () => {
    for (const state of ['PROMISED', 'STARTED'] as const) {
      const bookingId = await claimed(state);
      expect(await claims().withdraw(bookingId)).toBe(false);
      expect(await stateOf(bookingId)).toBe(state);
    }
    const withdrawn = await claimed('CLAIMED');
    expect(await claims().withdraw(withdrawn)).toBe(true);
    expect(await stateOf(withdrawn)).toBe('RELEASED');
  });

  it('take a refused id when its create claims it again', async () => {
    const bookingId = randomUUID();
    await claims().recordRefusal(customerId, bookingId, 'fingerprint');
    expect(await stateOf(bookingId)).toBe('REFUSED');
    await claims().claim(customerId, bookingId, 'sealed');
    expect(await claims().find(bookingId)).toMatchObject({ state: 'CLAIMED', sealedStart: 'sealed' });
  });

  it('turn the timestamp writes of a process from before the state column into the move they meant', async () => {
    const promised = await claimed('CLAIMED');
    await database('booking_hold_claims')
      .where({ booking_id: promised })
      .whereNull('released_at')
      .update({ acknowledged_at: new Date() });
    expect(await stateOf(promised)).toBe('PROMISED');

    // That release's acknowledge un-released a claim; now the claim stays released, and says so.
    const released = await claimed('RELEASED');
    await database('booking_hold_claims')
      .where({ booking_id: released })
      .update({ acknowledged_at: new Date(), released_at: null });
    expect(await stateOf(released)).toBe('RELEASED');
    const timestamps = await database('booking_hold_claims')
      .where({ booking_id: released })
      .first<{ released_at: Date | null } | undefined>('released_at');
    expect(timestamps?.released_at).toBeInstanceOf(Date);
  });
});
