// Authenticates the user behind a gRPC call from its `authorization` metadata and applies the method's policy.
import type { Metadata } from '@grpc/grpc-js';
import type { Actor } from '../../domain/actor';
import { unauthenticated } from '../../domain/errors';
import { authorizeGrpcMethod } from '../../security/policy';
import { parseBearerAuthorization } from '../../security/token-verifier';

/** Verifies a bare access token exactly as REST does (TokenVerifier.verifyAccessToken); UNAUTHENTICATED if bad. */
export type AccessTokenVerifier = (token: string) => Promise<Actor>;

/** Who made a call: the user whose token it carried, and the service whose client certificate opened it. */
export interface Caller {
  readonly actor?: Actor;
  /** The allow-listed name of the client certificate; absent on a plaintext development server. */
  readonly serviceIdentity?: string;
}

/** The bearer token of a call; undefined when the call has no `authorization` metadata at all. */
export function bearerTokenOf(metadata: Metadata): string | undefined {
  const values = metadata.get('authorization');
  if (values.length === 0) return undefined;
  if (values.length > 1) throw unauthenticated('Send exactly one authorization metadata entry');
  return parseBearerAuthorization(typeof values[0] === 'string' ? values[0] : undefined);
}

/**
 * The caller of the RPC at `methodPath`, checked against its proto option by the shared policy. Every token
 * present is verified; a call without one passes only where the method allows service-only calls and a verified
 * client certificate names the calling service.
 */
export async function authorizeCaller(
  metadata: Metadata,
  serviceIdentity: string | undefined,
  methodPath: string,
  verifyAccessToken: AccessTokenVerifier,
): Promise<Caller> {
  const token = bearerTokenOf(metadata);
  const caller: Caller = {
    ...(token === undefined ? {} : { actor: await verifyAccessToken(token) }),
    ...(serviceIdentity === undefined ? {} : { serviceIdentity }),
  };
  authorizeGrpcMethod(methodPath, caller);
  return caller;
}
