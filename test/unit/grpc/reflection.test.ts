// Reflection refuses to start on a descriptor set that does not describe what the server serves.
import fs from 'node:fs';
import { healthServiceName } from '../../../src/api/grpc/health';
import { createReflectionService } from '../../../src/api/grpc/reflection';
import { bookingServiceName } from '../../../src/api/grpc/server';
import { descriptorSetPath } from '../../../src/contracts/proto-options';

const descriptorSet = fs.readFileSync(descriptorSetPath);

describe('reflection service', () => {
  it('starts from the committed descriptor set with BookingService and the health service', () => {
    expect(() =>
      createReflectionService([bookingServiceName, healthServiceName], descriptorSet),
    ).not.toThrow();
  });

  it('refuses to start when the descriptor set lacks a service the server serves, naming it', () => {
    expect(() =>
      createReflectionService([bookingServiceName, 'com.example.refunds.v1.RefundService'], descriptorSet),
    ).toThrow(/lacks com\.example\.refunds\.v1\.RefundService: run npm run generate/);
  });
});
