// Every migration, in order, imported statically so jest, tsx and compiled dist/ all see the same list.
import type { Knex } from 'knex';
import * as initialSchema from './20261122_001_initial_schema';
import * as paymentSimulatorLedger from './20261122_002_payment_simulator_ledger';
import * as identityProvider from './20261122_003_identity_provider';
import * as externalIdentities from './20261122_004_external_identities';
import * as bookingHoldClaims from './20261122_005_booking_hold_claims';
import * as idempotencyReservedIds from './20261122_006_idempotency_reserved_ids';
import * as refusedCreateFingerprints from './20261123_007_refused_create_fingerprints';
import * as routeAvailabilityNotifications from './20261123_008_route_availability_notifications';
import * as bookingStartIntents from './20261127_009_booking_start_intents';
import * as oauthAuthorizationServer from './20261127_010_oauth_authorization_server';
import * as claimBookingHoldFunction from './20261127_011_claim_booking_hold_function';
import * as seatAllocationLegs from './20261127_012_seat_allocation_legs';
import * as tickets from './20261128_013_tickets';
import * as passengerBoarding from './20261128_014_passenger_boarding';
import * as tripCancellation from './20261128_015_trip_cancellation';
import * as tripCancellationBookings from './20261129_016_trip_cancellation_bookings';
import * as holdClaimStates from './20261129_017_hold_claim_states';
import * as bookingPaymentAction from './20261129_018_booking_payment_action';
import * as paymentEvents from './20261129_019_payment_events';
import * as partnerWebhooks from './20261129_020_partner_webhooks';
import * as fares from './20261129_021_fares';
import * as refundQuotes from './20261129_022_refund_quotes';
import * as cancelledPassengers from './20261129_023_cancelled_passengers';
import * as passengerTypesOnPassengers from './20261129_024_passenger_types_on_passengers';

export interface NamedMigration {
  /** Recorded in knex_migrations; never rename an applied migration. */
  name: string;
  migration: Knex.Migration;
}

export const migrations: readonly NamedMigration[] = [
  { name: '20261122_001_initial_schema', migration: initialSchema },
  { name: '20261122_002_payment_simulator_ledger', migration: paymentSimulatorLedger },
  { name: '20261122_003_identity_provider', migration: identityProvider },
  { name: '20261122_004_external_identities', migration: externalIdentities },
  { name: '20261122_005_booking_hold_claims', migration: bookingHoldClaims },
  { name: '20261122_006_idempotency_reserved_ids', migration: idempotencyReservedIds },
  { name: '20261123_007_refused_create_fingerprints', migration: refusedCreateFingerprints },
  { name: '20261123_008_route_availability_notifications', migration: routeAvailabilityNotifications },
  { name: '20261127_009_booking_start_intents', migration: bookingStartIntents },
  { name: '20261127_010_oauth_authorization_server', migration: oauthAuthorizationServer },
  { name: '20261127_011_claim_booking_hold_function', migration: claimBookingHoldFunction },
  { name: '20261127_012_seat_allocation_legs', migration: seatAllocationLegs },
  { name: '20261128_013_tickets', migration: tickets },
  { name: '20261128_014_passenger_boarding', migration: passengerBoarding },
  { name: '20261128_015_trip_cancellation', migration: tripCancellation },
  { name: '20261129_016_trip_cancellation_bookings', migration: tripCancellationBookings },
  { name: '20261129_017_hold_claim_states', migration: holdClaimStates },
  { name: '20261129_018_booking_payment_action', migration: bookingPaymentAction },
  { name: '20261129_019_payment_events', migration: paymentEvents },
  { name: '20261129_020_partner_webhooks', migration: partnerWebhooks },
  { name: '20261129_021_fares', migration: fares },
  { name: '20261129_022_refund_quotes', migration: refundQuotes },
  { name: '20261129_023_cancelled_passengers', migration: cancelledPassengers },
  { name: '20261129_024_passenger_types_on_passengers', migration: passengerTypesOnPassengers },
];
