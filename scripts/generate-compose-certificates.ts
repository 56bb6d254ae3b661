// Makes the docker-compose run's certificates: gRPC mutual TLS for the API, and mutual TLS to the Temporal frontend.
import fs from 'node:fs';
import path from 'node:path';
import {
  createCertificateAuthority,
  developmentClientIdentity,
  issueCertificate,
} from '../dev/stack/development-certificates';

/** The client certificate identity the API, the workers, the admin jobs and the Web UI present to Temporal. */
const temporalClientIdentity = 'bus-booking';

const directory = path.resolve(process.argv[2] ?? 'deploy/certs');

// gRPC: the API's server certificate and the `booking-cli` client certificate, under the compose CA.
const authority = createCertificateAuthority(directory, { name: 'ca', commonName: 'Bus Booking Compose CA' });
issueCertificate(authority, directory, {
  name: 'server',
  commonName: 'api',
  usage: 'server',
  // `api` for other containers on the compose network, localhost for clients on the host.
  dnsNames: ['api', 'localhost'],
  ipAddresses: ['127.0.0.1'],
});
issueCertificate(authority, directory, {
  name: 'client',
  commonName: developmentClientIdentity,
  usage: 'client',
});

// Temporal has a CA of its own, so a gRPC client certificate is no key to Temporal and the other way round.
const temporalDirectory = path.join(directory, 'temporal');
const temporalAuthority = createCertificateAuthority(temporalDirectory, {
  name: 'ca',
  commonName: 'Bus Booking Compose Temporal CA',
});
issueCertificate(temporalAuthority, temporalDirectory, {
  name: 'server',
  commonName: 'temporal',
  // The server's services present this certificate to each other too (internode mutual TLS).
  usage: 'server-and-client',
  // `temporal` for the containers, localhost for the CLI on the host (the frontend is published on loopback).
  dnsNames: ['temporal', 'localhost'],
  ipAddresses: ['127.0.0.1'],
});
issueCertificate(temporalAuthority, temporalDirectory, {
  name: 'client',
  commonName: temporalClientIdentity,
  usage: 'client',
});
// The Web UI has an identity of its own: its key is owned by another account (see below).
issueCertificate(temporalAuthority, temporalDirectory, {
  name: 'ui-client',
  commonName: 'temporal-ui',
  usage: 'client',
});

/**
 * Keys stay mode 0600; each belongs to the account that reads it inside its container: the booking image's
 * `node` and the Temporal server's `temporal` user are uid 1000, the Temporal UI's user is uid 5000. Only root
 * may hand files to another account; anyone else gets the commands to run.
 */
const owners: { path: string; uid: number }[] = [
  { path: path.join(directory, 'server.key'), uid: 1000 },
  { path: path.join(temporalDirectory, 'server.key'), uid: 1000 },
  { path: path.join(temporalDirectory, 'client.key'), uid: 1000 },
  { path: path.join(temporalDirectory, 'ui-client.key'), uid: 5000 },
];
for (const folder of [directory, temporalDirectory]) fs.chmodSync(folder, 0o755);
if (process.getuid?.() === 0) {
  for (const owner of owners) fs.chownSync(owner.path, owner.uid, owner.uid);
} else {
  const commands = owners
    .filter((owner) => fs.statSync(owner.path).uid !== owner.uid)
    .map((owner) => `sudo chown ${owner.uid}:${owner.uid} ${owner.path}`);
  if (commands.length > 0) {
    process.stderr.write(`the containers cannot read these keys yet; run:\n${commands.join('\n')}\n`);
  }
}

process.stdout.write(
  `certificates written to ${directory} (gRPC client identity: ${developmentClientIdentity}); ` +
    `Temporal's in ${temporalDirectory} (client identity: ${temporalClientIdentity})\n`,
);
