// Tracing reads the standard OTEL_* variables through the settings table (src/config): off unless configured, bad values named.
import { ConfigError, loadTracingConfig } from '../../../src/config';

function configErrorOf(environment: Record<string, string>): ConfigError {
  try {
    loadTracingConfig(environment);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('loadTracingConfig accepted the environment');
}

describe('tracing configuration', () => {
  it('is off when no OTEL_* variable asks for it', () => {
    expect(loadTracingConfig({})).toMatchObject({
      enabled: false,
      endpoint: 'http://localhost:4318/v1/traces',
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
      headers: {},
      resourceAttributes: {},
    });
  });

  it('is on with OTEL_TRACES_EXPORTER=otlp, exporting to the default OTLP/HTTP endpoint', () => {
    expect(loadTracingConfig({ OTEL_TRACES_EXPORTER: 'otlp' })).toMatchObject({
      enabled: true,
      endpoint: 'http://localhost:4318/v1/traces',
    });
  });

  it('is on when an OTLP endpoint is set; the base endpoint gets /v1/traces, the traces endpoint is taken as is', () => {
    expect(loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318/' })).toMatchObject({
      enabled: true,
      endpoint: 'http://jaeger:4318/v1/traces',
    });
    expect(
      loadTracingConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector.example/custom/traces',
      }),
    ).toMatchObject({ enabled: true, endpoint: 'https://collector.example/custom/traces' });
  });

  it('stays off with OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true, whatever else is set', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318' };
    expect(loadTracingConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).enabled).toBe(false);
    expect(
      loadTracingConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }).enabled,
    ).toBe(false);
  });

  it('reads the service name, resource attributes and export headers, percent-decoded', () => {
    const config = loadTracingConfig({
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=staging,service.version=1.2.3',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc,x-tenant=one',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=two',
    });
    expect(config.serviceName).toBeUndefined();
    expect(config.resourceAttributes).toEqual({
      'deployment.environment': 'staging',
      'service.version': '1.2.3',
    });
    expect(config.headers).toEqual({ authorization: 'Bearer abc', 'x-tenant': 'two' });
    expect(loadTracingConfig({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attributes' }).serviceName).toBe(
      'from-attributes',
    );
    expect(
      loadTracingConfig({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=x', OTEL_SERVICE_NAME: 'bookings-eu' })
        .serviceName,
    ).toBe('bookings-eu');
  });

  it('reads the sampler and its ratio', () => {
    expect(
      loadTracingConfig({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }),
    ).toMatchObject({ sampler: 'parentbased_traceidratio', samplerRatio: 0.25 });
  });

  it.each([
    [{ OTEL_TRACES_EXPORTER: 'jaeger' }, 'OTEL_TRACES_EXPORTER'],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL'],
    [{ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' }, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'jaeger:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://collector' }, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'],
    [{ OTEL_EXPORTER_OTLP_HEADERS: 'no-equals-sign' }, 'OTEL_EXPORTER_OTLP_HEADERS'],
    [{ OTEL_RESOURCE_ATTRIBUTES: 'key=%E0%A4%A' }, 'OTEL_RESOURCE_ATTRIBUTES'],
    [{ OTEL_TRACES_SAMPLER: 'sometimes' }, 'OTEL_TRACES_SAMPLER'],
    [{ OTEL_TRACES_SAMPLER_ARG: '1.5' }, 'OTEL_TRACES_SAMPLER_ARG'],
    [{ OTEL_TRACES_SAMPLER_ARG: 'half' }, 'OTEL_TRACES_SAMPLER_ARG'],
    [{ OTEL_SDK_DISABLED: 'maybe' }, 'OTEL_SDK_DISABLED'],
  ])('refuses %j, naming %s', (environment, variable) => {
    expect(configErrorOf(environment).variable).toBe(variable);
  });
});
