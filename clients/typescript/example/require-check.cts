// The package through require(): its CommonJS build and declarations, as a CommonJS program compiles and loads them.
import bookingClient = require('@bus-booking/client');

const client: bookingClient.BookingServiceClient = bookingClient.createBookingServiceClient({
  baseUrl: 'http://127.0.0.1:1',
  accessToken: bookingClient.createTokenSource({
    fetchToken: () => Promise.resolve({ accessToken: 'unused' }),
  }),
});
const answer = bookingClient.bookingAnswerOf({
  data: {
    id: '7b1e4c2a-9d3f-4a6b-8e5c-1f2a3b4c5d6e',
    status: 'PROCESSING',
    detail: 'being made',
    retry_after_seconds: 1,
  },
  response: new Response(null, {
    status: 202,
    headers: { location: '/v1/bookings/7b1e4c2a-9d3f-4a6b-8e5c-1f2a3b4c5d6e' },
  }),
});
const discover = typeof bookingClient.SignIn.discover;
console.log(
  `require-check: require('@bus-booking/client') gave ${Object.keys(bookingClient).length} exports, ` +
    `a client with ${typeof client.GET === 'function' ? 'GET' : 'no GET'}, SignIn.discover ${discover}, ` +
    `and read a 202 as ${answer.status === 202 ? answer.processing.status : 'a booking'}`,
);
