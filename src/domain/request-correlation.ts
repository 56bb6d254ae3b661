// The request id that follows one caller's request from the API through the booking workflow into its activities.

/** The Temporal header carrying it: API client → workflow start or update → each activity the work schedules. */
export const requestIdHeader = 'request-id';

const wellFormedRequestId = /^[!-~]{1,128}$/;

/** A caller's X-Request-Id (or gRPC request id) is kept when it is 1 to 128 printable ASCII characters, no spaces. */
export function isWellFormedRequestId(value: string): boolean {
  return wellFormedRequestId.test(value);
}
