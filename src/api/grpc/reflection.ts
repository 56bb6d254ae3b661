// Server reflection (grpcurl, Postman, grpc-js clients) over the same .proto files the generated code comes from.
import path from 'node:path';
import { loadSync } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { projectRoot } from '../../project-root';

/** The protos served, relative to their include folders: ours under proto/, health's inside its package. */
const bookingServiceProto = 'com/example/bookings/v1/booking_service.proto';
const healthProto = 'health/v1/health.proto';

/** Reflection for BookingService and grpc.health.v1.Health, read from the proto/ folder at start-up. */
export function createReflectionService(protoDirectory = path.join(projectRoot, 'proto')): ReflectionService {
  const healthIncludeDirectory = path.resolve(path.dirname(healthProtoPath), '..', '..');
  const packageDefinition = loadSync([bookingServiceProto, healthProto], {
    includeDirs: [protoDirectory, healthIncludeDirectory],
  });
  return new ReflectionService(packageDefinition);
}
