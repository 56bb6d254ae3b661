// gRPC's repeated requests: nothing stored; the id a call makes is a name-based UUID of the caller and its request_id.
import { v5 as uuidFromName } from 'uuid';

// Namespaces of the name-based ids; changing one would make retries in flight create a second booking or payment.
const bookingIdNamespace = 'b3f0c0de-5a7e-4b1e-9c2a-6d8e4f1a2b3c';
const paymentAttemptIdNamespace = '8b2e0e0c-5e65-423e-b320-d21b53ce677a';
const commandIdNamespace = '4f6d3a1e-2c7b-4e58-9a0d-1b5c8e7f2a96';

function nameOf(caller: { readonly userId: string }, requestId: string): string {
  return `${caller.userId.toLowerCase()}\n${requestId}`;
}

/** The booking a create with this request id makes: the same caller and request id always name the same one. */
export function bookingIdForRequest(caller: { readonly userId: string }, requestId: string): string {
  return uuidFromName(nameOf(caller, requestId), bookingIdNamespace);
}

/** The change or cancellation a call with this request id sends, the same for every retry of it. */
export function commandIdForRequest(caller: { readonly userId: string }, requestId: string): string {
  return uuidFromName(nameOf(caller, requestId), commandIdNamespace);
}

/** The payment attempt a ConfirmPayment with this request id makes, the same for every retry of it. */
export function paymentAttemptIdForRequest(caller: { readonly userId: string }, requestId: string): string {
  return uuidFromName(nameOf(caller, requestId), paymentAttemptIdNamespace);
}
