// gRPC's share of the API's metrics: an interceptor timing BookingService calls by method and status code, and the
// failures a call ends with (token failures, the open-hold cap) counted by reason.
import {
  ResponderBuilder,
  ServerInterceptingCall,
  ServerListenerBuilder,
  status,
  type ServerInterceptor,
} from '@grpc/grpc-js';
import type { DomainError } from '../../domain/errors';
import type { ApiMetrics } from '../../observability/metrics';
import { openHoldCapRefusalOf, tokenFailureReasonOf } from '../../observability/metrics-labels';

/** The status code's name as the label shows it (OK, NOT_FOUND, ...); an unknown number stays a number. */
export function grpcCodeLabel(code: number): string {
  return (status as unknown as Record<number, string | undefined>)[code] ?? String(code);
}

/**
 * Times each call of `serviceName` (health checks and reflection streams are not requests of the service) from
 * its arrival to its status, or to its cancellation. First in the server's list, so it also sees the calls the
 * interceptors after it refuse.
 */
export function callMetricsInterceptor(metrics: ApiMetrics, serviceName: string): ServerInterceptor {
  const servicePrefix = `/${serviceName}/`;
  return (methodDescriptor, call) => {
    if (!methodDescriptor.path.startsWith(servicePrefix)) return new ServerInterceptingCall(call);
    const method = methodDescriptor.path.slice(servicePrefix.length);
    const stopTimer = metrics.grpcRequestDuration.startTimer({ method });
    metrics.grpcRequestsInFlight.inc();
    let ended = false;
    const end = (code: number) => {
      if (ended) return;
      ended = true;
      metrics.grpcRequestsInFlight.dec();
      stopTimer({ code: grpcCodeLabel(code) });
    };
    const listener = new ServerListenerBuilder().withOnCancel(() => end(status.CANCELLED)).build();
    const responder = new ResponderBuilder()
      .withStart((next) => next(listener))
      .withSendStatus((statusObject, next) => {
        end(statusObject.code);
        next(statusObject);
      })
      .build();
    return new ServerInterceptingCall(call, responder);
  };
}

/** Counts what a failed BookingService call tells about its caller: a refused token, the open-hold cap. */
export function countingCallFailures(metrics: ApiMetrics): (error: DomainError) => void {
  return (error) => {
    if (error.code === 'UNAUTHENTICATED') {
      metrics.tokenVerificationFailures.inc({ reason: tokenFailureReasonOf(error) });
    }
    const refusal = openHoldCapRefusalOf(error);
    if (refusal !== undefined) metrics.requestRefusals.inc({ front: 'grpc', reason: refusal });
  };
}
