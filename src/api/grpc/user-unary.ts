// Unary handlers of the services that act for a user token's caller: authorization, request ids, logs, status.
import { randomUUID } from 'node:crypto';
import { status, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import type { Actor } from '../../domain/actor';
import { isWellFormedRequestId } from '../../domain/request-correlation';
import { toDomainError, unauthenticated, type DomainError } from '../../domain/errors';
import type { Logger } from '../../logger';
import { runWithRequestId } from '../../observability/request-context';
import { assertWellFormedRequest } from './booking-mapper';
import { authorizeCaller, type AccessTokenVerifier } from './caller-authorization';
import { grpcStatusOf } from './status-details';

export interface UserCallDependencies {
  readonly verifyAccessToken: AccessTokenVerifier;
  readonly logger: Logger;
  readonly serviceIdentityOf: (call: ServerUnaryCall<unknown, unknown>) => string | undefined;
  readonly onCallFailure?: (error: DomainError) => void;
}

/** proto3 has no "unset" for scalars: '' and 0 mean "not given" where the contract says so. */
export function given<T extends string | number>(value: T): T | undefined {
  return value === '' || value === 0 ? undefined : value;
}

function requestIdOf(call: ServerUnaryCall<unknown, unknown>): string {
  const [offered] = call.metadata.get('x-request-id');
  return typeof offered === 'string' && isWellFormedRequestId(offered) ? offered : randomUUID();
}

/**
 * A unary handler running `run` for the caller a user token names (`service` says whose operations need one), once
 * the method's authorization option allows it.
 */
export function userUnaryHandlers(dependencies: UserCallDependencies, service: string) {
  const { logger } = dependencies;
  return function unary<Request, Response>(
    method: { readonly path: string },
    run: (actor: Actor, request: Request) => Promise<Response>,
  ) {
    const methodName = method.path.slice(method.path.lastIndexOf('/') + 1);
    const handle = (call: ServerUnaryCall<Request, Response>, callback: sendUnaryData<Response>): void => {
      const startedAt = Date.now();
      const serviceIdentity = dependencies.serviceIdentityOf(call);
      let userId: string | undefined;
      const work = async (): Promise<Response> => {
        const caller = await authorizeCaller(
          call.metadata,
          serviceIdentity,
          method.path,
          dependencies.verifyAccessToken,
        );
        // What these services make and read is the caller's a token names; a certificate alone names no one.
        if (!caller.actor) throw unauthenticated(`${service} operations need a user token`);
        userId = caller.actor.userId;
        assertWellFormedRequest(call.request as object);
        return run(caller.actor, call.request);
      };
      work().then(
        (response) => {
          logger.info(
            { method: methodName, code: 'OK', durationMs: Date.now() - startedAt, userId },
            'gRPC call',
          );
          callback(null, response);
        },
        (error: unknown) => {
          const domainError = toDomainError(error);
          const grpcStatus = grpcStatusOf(domainError);
          dependencies.onCallFailure?.(domainError);
          const line = {
            method: methodName,
            code: status[grpcStatus.code],
            durationMs: Date.now() - startedAt,
            serviceIdentity,
            userId,
          };
          if (grpcStatus.code === status.INTERNAL) logger.error({ ...line, err: error }, 'gRPC call failed');
          else logger.info(line, 'gRPC call');
          callback(grpcStatus);
        },
      );
    };
    return (call: ServerUnaryCall<Request, Response>, callback: sendUnaryData<Response>): void =>
      runWithRequestId(requestIdOf(call), () => handle(call, callback));
  };
}
