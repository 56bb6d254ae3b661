// k6: gRPC CreateBooking over mutual TLS (the stack's development client certificate), descriptors by server
// reflection; each booking is then paid over gRPC, so no load-test account reaches its open-hold cap.
/* global __ENV, open */
import grpc from 'k6/net/grpc';
import { check } from 'k6';
import exec from 'k6/execution';
import {
  bookingArrivals,
  everyArrivalServed,
  findFreeSeats,
  signInPool,
  thresholds,
  uuid,
} from './common.js';

const address = __ENV.GRPC_ADDRESS || 'localhost:50051';
const certificateDirectory = __ENV.GRPC_CERT_DIR || '.data/certs';
// open() reads files in the init context only; paths are relative to this script unless absolute.
const tls = {
  cacerts: [open(`${certificateDirectory}/ca.crt`)],
  cert: open(`${certificateDirectory}/client.crt`),
  key: open(`${certificateDirectory}/client.key`),
};
const service = 'com.example.bookings.v1.BookingService';
const client = new grpc.Client();

export const options = {
  scenarios: { grpc_bookings: bookingArrivals() },
  thresholds: { ...everyArrivalServed, ...thresholds('grpc_req_duration{name:CreateBooking}', 1000) },
};

export function setup() {
  const accounts = signInPool();
  return { accounts, seats: findFreeSeats(accounts[0].token, Number(__ENV.SEATS || 4000)) };
}

let connected = false;

export default function ({ accounts, seats }) {
  if (!connected) {
    client.connect(address, { reflect: true, tls, timeout: '10s' });
    connected = true;
  }
  const iteration = exec.scenario.iterationInTest;
  if (iteration >= seats.length)
    exec.test.abort(`ran out of free seats after ${seats.length} bookings; set SEATS higher`);
  const seat = seats[iteration];
  const account = accounts[iteration % accounts.length];
  const metadata = { authorization: `Bearer ${account.token}` };
  const created = client.invoke(
    `${service}/CreateBooking`,
    {
      request_id: uuid(),
      trip_id: seat.tripId,
      passengers: [
        {
          first_name: 'Load',
          last_name: 'Test',
          email: account.email,
          seat_number: seat.seatNumber,
          fare_class: seat.fareClass,
        },
      ],
      contact_email: account.email,
    },
    { metadata, tags: { name: 'CreateBooking' }, timeout: '15s' },
  );
  const held = check(created, {
    'CreateBooking answered OK': (response) => response.status === grpc.StatusOK,
  });
  if (!held) return;
  const paid = client.invoke(
    `${service}/ConfirmPayment`,
    { booking_id: created.message.booking.id, payment_token: 'tok_visa', request_id: uuid() },
    { metadata, tags: { name: 'ConfirmPayment' }, timeout: '15s' },
  );
  check(paid, {
    'ConfirmPayment confirmed the booking': (response) =>
      response.status === grpc.StatusOK && response.message.booking.status === 'BOOKING_STATUS_CONFIRMED',
  });
}
