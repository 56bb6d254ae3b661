// Unit tests: which contracts go to the schema registry, in which order, and with which references.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { loadContracts, loadProtos } from '../../../scripts/schema-registry.js';

const repositoryRoot = path.join(__dirname, '../../..');

describe('loadProtos', () => {
  const protos = loadProtos(path.join(repositoryRoot, 'proto'));
  const names = protos.map((proto) => proto.name);

  it('takes the project’s contracts and the vendored files they import, nothing else', () => {
    expect(names).toContain('com/example/bookings/v1/booking_service.proto');
    expect(names).toContain('google/api/annotations.proto');
    expect(names.filter((name) => !name.startsWith('com/example/'))).toEqual([
      'google/api/http.proto',
      'google/api/annotations.proto',
    ]);
  });

  it('puts every file after the files it imports', () => {
    for (const [position, proto] of protos.entries()) {
      for (const imported of proto.imports) {
        expect(names.indexOf(imported)).toBeGreaterThanOrEqual(0);
        expect(names.indexOf(imported)).toBeLessThan(position);
      }
    }
    expect(protos.find((proto) => proto.name === 'com/example/bookings/v1/route.proto')?.imports).toEqual([
      'com/example/common/v1/money.proto',
    ]);
  });

  it('leaves the well-known types to the registry', () => {
    expect(
      protos.flatMap((proto) => proto.imports).filter((name) => name.startsWith('google/protobuf/')),
    ).toEqual([]);
  });

  it('names an import that is not there', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'registry-contracts-'));
    try {
      mkdirSync(path.join(root, 'com/example'), { recursive: true });
      writeFileSync(
        path.join(root, 'com/example/orphan.proto'),
        'syntax = "proto3";\npackage com.example;\nimport "com/example/gone.proto";\n',
      );
      expect(() => loadProtos(root)).toThrow(
        `contracts: com/example/orphan.proto imports com/example/gone.proto, which is not under ${root}`,
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('loadContracts', () => {
  it('carries the OpenAPI document as JSON of the same content', () => {
    const openApiFile = path.join(repositoryRoot, 'openapi/openapi.yaml');
    const contracts = loadContracts(path.join(repositoryRoot, 'proto'), openApiFile);
    expect(JSON.parse(contracts.openApiJson)).toEqual(parseYaml(readFileSync(openApiFile, 'utf8')));
  });
});
