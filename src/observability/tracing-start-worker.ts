// The worker entry point's first import: tracing starts before pg loads, so the activities' queries are traced.
import { startTracingFromEnvironment } from './tracing';

startTracingFromEnvironment('bus-booking-worker');
