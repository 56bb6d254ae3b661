// Stops what global-setup started, so a test run leaves no process behind.
export default async function globalTeardown() {
  const servers = globalThis.__bookingTestServers;
  if (!servers) return;
  await Promise.allSettled([servers.temporal.stop(), servers.postgres.stop(), servers.localstripe?.stop()]);
}
