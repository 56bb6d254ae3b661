// The OAuth client `npm start` registers for the REST example: a native app that signs people in with PKCE, no secret.

/** The example's client id and the redirect URI its sign-in comes back to (a private-use scheme, as an app has). */
export const exampleAppClient = {
  clientId: 'bus-booking-example',
  redirectUri: 'com.example.busbooking.example:/oauth2redirect',
} as const;

/** IDP_CLIENTS of the development stack when none is set: the example app only. */
export const developmentOAuthClients = JSON.stringify([
  { client_id: exampleAppClient.clientId, kind: 'native', redirect_uris: [exampleAppClient.redirectUri] },
]);
