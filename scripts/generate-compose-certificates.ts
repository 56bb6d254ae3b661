// Makes a CA, an `api` server certificate and a `booking-cli` client certificate for the docker-compose run.
import path from 'node:path';
import {
  createCertificateAuthority,
  developmentClientIdentity,
  issueCertificate,
} from '../src/stack/development-certificates';

const directory = path.resolve(process.argv[2] ?? 'deploy/certs');
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
process.stdout.write(
  `certificates written to ${directory} (client identity: ${developmentClientIdentity})\n`,
);
