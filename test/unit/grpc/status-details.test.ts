// Unit tests: every error code becomes its gRPC status with ErrorInfo, BadRequest and RetryInfo details.
import { Metadata, status } from '@grpc/grpc-js';
import {
  decodeStatusDetails,
  detailTypeUrls,
  errorDomain,
  grpcStatusOf,
  statusDetailsKey,
} from '../../../src/api/grpc/status-details';
import {
  DomainError,
  errorCodeMappings,
  errorCodes,
  rateLimited,
  seatUnavailable,
  validationFailed,
} from '../../../src/domain/errors';
import { Status } from '../../../src/generated/google/rpc/status';

describe('grpcStatusOf', () => {
  it.each(errorCodes)('maps %s to the gRPC status of the error table', (code) => {
    const grpcStatus = grpcStatusOf(new DomainError(code, 'something happened'));
    expect(status[grpcStatus.code]).toBe(errorCodeMappings[code].grpcStatus);
    const details = decodeStatusDetails(grpcStatus.metadata);
    expect(details?.errorInfo?.reason).toBe(code);
    expect(details?.errorInfo?.domain).toBe(errorDomain);
    expect(details?.code).toBe(grpcStatus.code);
    expect(details?.message).toBe('something happened');
  });

  it('packs the details as Any with the googleapis type URLs', () => {
    const grpcStatus = grpcStatusOf(
      validationFailed([{ field: 'passengers[0].email', message: 'must be a valid email address' }]),
    );
    const raw = grpcStatus.metadata.get(statusDetailsKey)[0] as Buffer;
    expect(Status.decode(raw).details.map((detail) => detail.typeUrl)).toEqual([
      'type.googleapis.com/google.rpc.ErrorInfo',
      'type.googleapis.com/google.rpc.BadRequest',
    ]);
    expect(detailTypeUrls.errorInfo).toBe('type.googleapis.com/google.rpc.ErrorInfo');
  });

  it('lists every field violation in BadRequest', () => {
    const details = decodeStatusDetails(
      grpcStatusOf(
        validationFailed([
          { field: 'trip_id', message: 'must be a UUID' },
          { field: 'passengers[1].seat_number', message: 'must be a seat number such as 12C' },
        ]),
      ).metadata,
    );
    expect(status[details!.code]).toBe('INVALID_ARGUMENT');
    expect(details?.fieldViolations).toEqual([
      { field: 'trip_id', description: 'must be a UUID' },
      { field: 'passengers[1].seat_number', description: 'must be a seat number such as 12C' },
    ]);
  });

  it('carries the error details as ErrorInfo metadata strings', () => {
    const details = decodeStatusDetails(grpcStatusOf(seatUnavailable(['3A', '3B'])).metadata);
    expect(details?.errorInfo?.metadata).toEqual({ seatNumbers: '["3A","3B"]' });
    expect(details?.fieldViolations).toEqual([]);
  });

  it('adds RetryInfo when the error says when to retry', () => {
    const details = decodeStatusDetails(grpcStatusOf(rateLimited(7)).metadata);
    expect(status[details!.code]).toBe('RESOURCE_EXHAUSTED');
    expect(details?.retryDelayMs).toBe(7000);
  });

  it('decodes nothing from trailers without details', () => {
    expect(decodeStatusDetails(new Metadata())).toBeUndefined();
    expect(decodeStatusDetails(undefined)).toBeUndefined();
  });
});
