// A typed, promise-based BookingService client over mutual TLS that propagates the user's token.
import { credentials, Metadata, status, type ClientUnaryCall, type ServiceError } from '@grpc/grpc-js';
import {
  BookingServiceClient,
  CancelBookingRequest,
  CancelPassengersRequest,
  ConfirmPaymentRequest,
  CreateBookingRequest,
  GetBookingRequest,
  ListBookingsRequest,
  UpdateBookingRequest,
  type CancelBookingResponse,
  type CancelPassengersResponse,
  type ConfirmPaymentResponse,
  type CreateBookingResponse,
  type DeepPartial,
  type GetBookingResponse,
  type ListBookingsResponse,
  type UpdateBookingResponse,
} from '../../generated/com/example/bookings/v1/booking_service';
import {
  GetRefundQuoteRequest,
  QuoteRefundRequest,
  type GetRefundQuoteResponse,
  type QuoteRefundResponse,
} from '../../generated/com/example/bookings/v1/refund_quote';
import { decodeStatusDetails, type DecodedStatusDetails } from './status-details';

type Pem = string | Buffer;

export interface BookingClientOptions {
  /** `host:port` of the gRPC server. */
  readonly address: string;
  /** PEM of the CA that signed the server certificate. */
  readonly ca?: Pem;
  /** PEM client certificate and key, presented for mutual TLS. */
  readonly cert?: Pem;
  readonly key?: Pem;
  /** The user's access token, sent as `authorization: Bearer <token>` on every call unless a call overrides it. */
  readonly token?: string;
  /** Plaintext, for a server started with GRPC_INSECURE=true only. */
  readonly insecure?: boolean;
  /** Name to check the server certificate against when it differs from the address's host. */
  readonly serverName?: string;
}

export interface BookingCallOptions {
  /** Replaces the client's token for this call; `null` sends none. */
  readonly token?: string | null;
  /** Absolute deadline; wins over `timeoutMs`. */
  readonly deadline?: Date;
  readonly timeoutMs?: number;
}

/** A failed call, with the server's rich error details decoded. */
export class BookingServiceCallError extends Error {
  override readonly name = 'BookingServiceCallError';
  /** The gRPC status code, e.g. `status.FAILED_PRECONDITION`. */
  readonly code: status;
  /** The service's error code (`SEAT_UNAVAILABLE`…) from ErrorInfo; undefined when the server sent none. */
  readonly reason: string | undefined;
  readonly statusDetails: DecodedStatusDetails | undefined;

  constructor(error: ServiceError) {
    super(error.details || error.message, { cause: error });
    this.code = error.code;
    this.statusDetails = decodeStatusDetails(error.metadata);
    this.reason = this.statusDetails?.errorInfo?.reason;
  }

  get fieldViolations(): readonly { field: string; description: string }[] {
    return this.statusDetails?.fieldViolations ?? [];
  }
}

export interface BookingClient {
  createBooking(
    request: DeepPartial<CreateBookingRequest>,
    options?: BookingCallOptions,
  ): Promise<CreateBookingResponse>;
  getBooking(
    request: DeepPartial<GetBookingRequest>,
    options?: BookingCallOptions,
  ): Promise<GetBookingResponse>;
  updateBooking(
    request: DeepPartial<UpdateBookingRequest>,
    options?: BookingCallOptions,
  ): Promise<UpdateBookingResponse>;
  cancelBooking(
    request: DeepPartial<CancelBookingRequest>,
    options?: BookingCallOptions,
  ): Promise<CancelBookingResponse>;
  cancelPassengers(
    request: DeepPartial<CancelPassengersRequest>,
    options?: BookingCallOptions,
  ): Promise<CancelPassengersResponse>;
  confirmPayment(
    request: DeepPartial<ConfirmPaymentRequest>,
    options?: BookingCallOptions,
  ): Promise<ConfirmPaymentResponse>;
  listBookings(
    request: DeepPartial<ListBookingsRequest>,
    options?: BookingCallOptions,
  ): Promise<ListBookingsResponse>;
  quoteRefund(
    request: DeepPartial<QuoteRefundRequest>,
    options?: BookingCallOptions,
  ): Promise<QuoteRefundResponse>;
  getRefundQuote(
    request: DeepPartial<GetRefundQuoteRequest>,
    options?: BookingCallOptions,
  ): Promise<GetRefundQuoteResponse>;
  /** The generated grpc-js client underneath, for streaming or channel-level needs. */
  readonly raw: BookingServiceClient;
  close(): void;
}

function toBuffer(pem: Pem | undefined): Buffer | null {
  return pem === undefined ? null : Buffer.isBuffer(pem) ? pem : Buffer.from(pem);
}

type UnaryMethod<Request, Response> = (
  request: Request,
  metadata: Metadata,
  options: { deadline?: Date },
  callback: (error: ServiceError | null, response: Response) => void,
) => ClientUnaryCall;

export function createBookingClient(options: BookingClientOptions): BookingClient {
  const channelCredentials = options.insecure
    ? credentials.createInsecure()
    : credentials.createSsl(toBuffer(options.ca), toBuffer(options.key), toBuffer(options.cert));
  const raw = new BookingServiceClient(
    options.address,
    channelCredentials,
    options.serverName ? { 'grpc.ssl_target_name_override': options.serverName } : {},
  );

  function call<Request, Response>(
    method: UnaryMethod<Request, Response>,
    request: Request,
    callOptions: BookingCallOptions = {},
  ) {
    const metadata = new Metadata();
    const token = callOptions.token === undefined ? options.token : callOptions.token;
    if (token) metadata.set('authorization', `Bearer ${token}`);
    const deadline =
      callOptions.deadline ??
      (callOptions.timeoutMs === undefined ? undefined : new Date(Date.now() + callOptions.timeoutMs));
    return new Promise<Response>((resolve, reject) => {
      method(request, metadata, deadline ? { deadline } : {}, (error, response) => {
        if (error) reject(new BookingServiceCallError(error));
        else resolve(response);
      });
    });
  }

  return {
    createBooking: (request, callOptions) =>
      call(raw.createBooking.bind(raw), CreateBookingRequest.fromPartial(request), callOptions),
    getBooking: (request, callOptions) =>
      call(raw.getBooking.bind(raw), GetBookingRequest.fromPartial(request), callOptions),
    updateBooking: (request, callOptions) =>
      call(raw.updateBooking.bind(raw), UpdateBookingRequest.fromPartial(request), callOptions),
    cancelBooking: (request, callOptions) =>
      call(raw.cancelBooking.bind(raw), CancelBookingRequest.fromPartial(request), callOptions),
    cancelPassengers: (request, callOptions) =>
      call(raw.cancelPassengers.bind(raw), CancelPassengersRequest.fromPartial(request), callOptions),
    confirmPayment: (request, callOptions) =>
      call(raw.confirmPayment.bind(raw), ConfirmPaymentRequest.fromPartial(request), callOptions),
    listBookings: (request, callOptions) =>
      call(raw.listBookings.bind(raw), ListBookingsRequest.fromPartial(request), callOptions),
    quoteRefund: (request, callOptions) =>
      call(raw.quoteRefund.bind(raw), QuoteRefundRequest.fromPartial(request), callOptions),
    getRefundQuote: (request, callOptions) =>
      call(raw.getRefundQuote.bind(raw), GetRefundQuoteRequest.fromPartial(request), callOptions),
    raw,
    close: () => raw.close(),
  };
}
