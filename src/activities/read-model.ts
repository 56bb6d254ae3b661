// RecordBooking: writes the workflow's booking snapshot to the read model the fronts read (db/booking-read-model).
import type { Knex } from 'knex';
import { writeBookingSnapshot } from '../db/booking-read-model';
import type { BookingState } from '../domain/booking';
import type { FieldCipher } from '../security/field-encryption';
import type { ReadModelActivities } from './interface';

export interface ReadModelActivityDependencies {
  database: Knex;
  cipher: FieldCipher;
}

export function createReadModelActivities(dependencies: ReadModelActivityDependencies): ReadModelActivities {
  const { database, cipher } = dependencies;
  return {
    async RecordBooking(snapshot: BookingState): Promise<void> {
      await database.transaction((transaction) => writeBookingSnapshot(transaction, snapshot, cipher));
    },
  };
}
