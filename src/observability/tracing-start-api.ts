// The API entry point's first import: tracing starts before Koa, pg and gRPC load, so the instrumentations patch them.
import { startTracingFromEnvironment } from './tracing';

startTracingFromEnvironment('bus-booking-api');
