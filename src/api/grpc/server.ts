// The gRPC server: BookingService, WebhookService, FareService, health and reflection over mutual TLS, with limits.
import fs from 'node:fs';
import {
  Server,
  ServerCredentials,
  ServerInterceptingCall,
  ServerListenerBuilder,
  ResponderBuilder,
  type ServerInterceptor,
  type ServerUnaryCall,
} from '@grpc/grpc-js';
import type { BookingApplication } from '../../application/interface';
import type { TicketApplication } from '../../application/tickets';
import type { BoardingApplication } from '../../application/boarding';
import type { RefundQuoteApplication } from '../../application/refund-quotes';
import type { PartnerWebhookApplication } from '../../application/partner-webhooks';
import type { FareApplication } from '../../application/fares';
import type { ReadinessCheck } from '../../application/readiness';
import { ConfigError, type Config } from '../../config';
import { permissionDenied, unauthenticated } from '../../domain/errors';
import { BookingServiceService } from '../../generated/com/example/bookings/v1/booking_service';
import { WebhookServiceService } from '../../generated/com/example/bookings/v1/webhook_service';
import { FareServiceService } from '../../generated/com/example/bookings/v1/fare_service';
import type { Logger } from '../../logger';
import type { ApiMetrics } from '../../observability/metrics';
import { PortInUseError } from '../../runtime/process';
import { createBookingServiceHandlers } from './booking-service';
import { createWebhookServiceHandlers } from './webhook-service';
import { createFareServiceHandlers } from './fare-service';
import type { AccessTokenVerifier } from './caller-authorization';
import { healthServiceName, startHealthReporting, type HealthReporter } from './health';
import { checkPeer } from './peer-identity';
import { createReflectionService } from './reflection';
import { grpcStatusOf } from './status-details';
import { callMetricsInterceptor, countingCallFailures } from './call-metrics';

/** Fully qualified name of BookingService, as health checks and reflection name it. */
export const bookingServiceName = BookingServiceService.createBooking.path.split('/')[1];

/** Fully qualified name of WebhookService. */
export const webhookServiceName = WebhookServiceService.createWebhookEndpoint.path.split('/')[1];

/** Fully qualified name of FareService. */
export const fareServiceName = FareServiceService.createDiscountCode.path.split('/')[1];

export type GrpcTransport =
  | {
      readonly kind: 'mutual-tls';
      readonly certificateAuthority: Buffer;
      readonly certificateChain: Buffer;
      readonly privateKey: Buffer;
      readonly allowedClients: readonly string[];
    }
  | { readonly kind: 'insecure' };

export interface GrpcServerSettings {
  readonly host: string;
  /** 0 picks a free port; RunningGrpcServer.port says which. */
  readonly port: number;
  readonly transport: GrpcTransport;
  readonly maxReceiveMessageBytes: number;
  readonly maxSendMessageBytes: number;
  readonly keepaliveTimeMs: number;
  readonly keepaliveTimeoutMs: number;
  readonly shutdownGraceMs: number;
  readonly healthCheckIntervalMs: number;
}

export interface GrpcServerDependencies {
  readonly application: BookingApplication;
  readonly tickets: TicketApplication;
  readonly boarding: BoardingApplication;
  readonly refundQuotes: RefundQuoteApplication;
  readonly webhooks: PartnerWebhookApplication;
  readonly fares: FareApplication;
  readonly verifyAccessToken: AccessTokenVerifier;
  readonly checkReadiness: ReadinessCheck;
  readonly logger: Logger;
  /** Where the BookingService calls are timed and their refusals counted; none in tests that do not look. */
  readonly metrics?: ApiMetrics;
}

export interface RunningGrpcServer {
  readonly port: number;
  readonly health: HealthReporter;
  /** Reports NOT_SERVING, refuses new calls, lets calls in flight finish for the grace period, then cuts off. */
  stop(): Promise<void>;
}

function readPem(file: string, variable: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (error) {
    throw new ConfigError(variable, `names ${file}, which cannot be read: ${(error as Error).message}`);
  }
}

/** Settings from the configuration, reading the TLS files; fails by variable name when mutual TLS is incomplete. */
export function grpcServerSettingsFromConfig(config: Config): GrpcServerSettings {
  const { grpc } = config;
  let transport: GrpcTransport;
  if (grpc.insecure) {
    transport = { kind: 'insecure' };
  } else {
    if (!grpc.tls)
      throw new ConfigError(
        'GRPC_TLS_CA',
        'and GRPC_TLS_CERT, GRPC_TLS_KEY are required unless GRPC_INSECURE=true',
      );
    if (grpc.allowedClients.length === 0) {
      throw new ConfigError(
        'GRPC_ALLOWED_CLIENTS',
        'must name the client certificates (CN or SAN) allowed to call',
      );
    }
    transport = {
      kind: 'mutual-tls',
      certificateAuthority: readPem(grpc.tls.caFile, 'GRPC_TLS_CA'),
      certificateChain: readPem(grpc.tls.certificateFile, 'GRPC_TLS_CERT'),
      privateKey: readPem(grpc.tls.keyFile, 'GRPC_TLS_KEY'),
      allowedClients: grpc.allowedClients,
    };
  }
  return {
    host: grpc.host,
    port: grpc.port,
    transport,
    maxReceiveMessageBytes: grpc.maxReceiveMessageBytes,
    maxSendMessageBytes: grpc.maxSendMessageBytes,
    keepaliveTimeMs: grpc.keepaliveTimeMs,
    keepaliveTimeoutMs: grpc.keepaliveTimeoutMs,
    shutdownGraceMs: grpc.shutdownGraceMs,
    healthCheckIntervalMs: grpc.healthCheckIntervalMs,
  };
}

/**
 * Refuses every call, on every service (health and reflection included), whose client certificate names no
 * allow-listed service. TLS has already proved the certificate chains to our CA; this decides who may call.
 */
function allowListInterceptor(allowedClients: readonly string[], logger: Logger): ServerInterceptor {
  return (methodDescriptor, call) => {
    const listener = new ServerListenerBuilder()
      .withOnReceiveMetadata((metadata, next) => {
        const check = checkPeer(call.getAuthContext(), allowedClients);
        if (check.outcome === 'allowed') {
          next(metadata);
          return;
        }
        logger.warn({ method: methodDescriptor.path, peer: call.getPeer(), check }, 'gRPC client refused');
        call.sendStatus(
          grpcStatusOf(
            check.outcome === 'no-certificate'
              ? unauthenticated('A client certificate is required')
              : permissionDenied('This client certificate is not allowed to call this server'),
          ),
        );
      })
      .build();
    return new ServerInterceptingCall(
      call,
      new ResponderBuilder().withStart((next) => next(listener)).build(),
    );
  };
}

function bind(
  server: Server,
  address: string,
  credentials: ServerCredentials,
  port: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, credentials, (error, boundPort) => {
      if (!error) return resolve(boundPort);
      reject(
        /EADDRINUSE|address already in use/i.test(error.message)
          ? new PortInUseError(port, 'GRPC_PORT')
          : error,
      );
    });
  });
}

function shutdown(server: Server, graceMs: number, logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      logger.warn({ graceMs }, 'gRPC calls still running after the grace period; cutting them off');
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export async function startGrpcServer(
  settings: GrpcServerSettings,
  dependencies: GrpcServerDependencies,
): Promise<RunningGrpcServer> {
  const { transport } = settings;
  const { logger } = dependencies;
  // Before anything starts: a missing or stale descriptor set stops the start-up with nothing left running.
  const reflection = createReflectionService([
    bookingServiceName,
    webhookServiceName,
    fareServiceName,
    healthServiceName,
  ]);
  const server = new Server({
    'grpc.max_receive_message_length': settings.maxReceiveMessageBytes,
    'grpc.max_send_message_length': settings.maxSendMessageBytes,
    'grpc.keepalive_time_ms': settings.keepaliveTimeMs,
    'grpc.keepalive_timeout_ms': settings.keepaliveTimeoutMs,
    // The metrics interceptor first: it also times the calls the allow-list refuses.
    interceptors: [
      ...(dependencies.metrics === undefined
        ? []
        : [callMetricsInterceptor(dependencies.metrics, bookingServiceName)]),
      ...(transport.kind === 'mutual-tls' ? [allowListInterceptor(transport.allowedClients, logger)] : []),
    ],
  });

  const serviceIdentityOf = (call: ServerUnaryCall<unknown, unknown>): string | undefined => {
    if (transport.kind !== 'mutual-tls') return undefined;
    const check = checkPeer(call.getAuthContext(), transport.allowedClients);
    return check.outcome === 'allowed' ? check.identity : undefined;
  };
  server.addService(
    BookingServiceService,
    createBookingServiceHandlers({
      application: dependencies.application,
      tickets: dependencies.tickets,
      boarding: dependencies.boarding,
      refundQuotes: dependencies.refundQuotes,
      verifyAccessToken: dependencies.verifyAccessToken,
      logger,
      serviceIdentityOf,
      ...(dependencies.metrics === undefined
        ? {}
        : { onCallFailure: countingCallFailures(dependencies.metrics) }),
    }),
  );
  server.addService(
    WebhookServiceService,
    createWebhookServiceHandlers({
      webhooks: dependencies.webhooks,
      verifyAccessToken: dependencies.verifyAccessToken,
      logger,
      serviceIdentityOf,
      ...(dependencies.metrics === undefined
        ? {}
        : { onCallFailure: countingCallFailures(dependencies.metrics) }),
    }),
  );
  server.addService(
    FareServiceService,
    createFareServiceHandlers({
      fares: dependencies.fares,
      verifyAccessToken: dependencies.verifyAccessToken,
      logger,
      serviceIdentityOf,
      ...(dependencies.metrics === undefined
        ? {}
        : { onCallFailure: countingCallFailures(dependencies.metrics) }),
    }),
  );
  const health = startHealthReporting({
    checkReadiness: dependencies.checkReadiness,
    intervalMs: settings.healthCheckIntervalMs,
    serviceNames: [bookingServiceName, webhookServiceName, fareServiceName],
    logger,
  });
  health.implementation.addToServer(server);
  reflection.addToServer(server);

  const credentials =
    transport.kind === 'mutual-tls'
      ? ServerCredentials.createSsl(
          transport.certificateAuthority,
          [{ private_key: transport.privateKey, cert_chain: transport.certificateChain }],
          true,
        )
      : ServerCredentials.createInsecure();
  let port: number;
  try {
    port = await bind(server, `${settings.host}:${settings.port}`, credentials, settings.port);
  } catch (error) {
    health.stop();
    server.forceShutdown();
    throw error;
  }
  if (transport.kind === 'insecure') {
    logger.warn(
      { port },
      'gRPC is serving PLAINTEXT without client certificates (GRPC_INSECURE=true): development only',
    );
  }

  let stopping: Promise<void> | undefined;
  return {
    port,
    health,
    stop() {
      stopping ??= (async () => {
        health.stop();
        await shutdown(server, settings.shutdownGraceMs, logger);
      })();
      return stopping;
    },
  };
}
