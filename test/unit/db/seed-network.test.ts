// Demo data sanity: real time zones, consistent stops, plausible timetables, layouts and fares.
import { demoLayouts, demoRoutes, demoStops, demoUsers, premiumFareMinor } from '../../../dev/seed';

const currencyByCountry: Record<string, string> = {
  PT: 'EUR',
  ES: 'EUR',
  FR: 'EUR',
  BE: 'EUR',
  NL: 'EUR',
  DE: 'EUR',
  AT: 'EUR',
  IT: 'EUR',
  CZ: 'CZK',
  HU: 'HUF',
  CH: 'CHF',
  GB: 'GBP',
  PL: 'PLN',
};

const stopsByCode = new Map(demoStops.map((stop) => [stop.code, stop]));

describe('demo network', () => {
  it('has unique stops in IANA time zones that Intl knows', () => {
    expect(stopsByCode.size).toBe(demoStops.length);
    for (const stop of demoStops) {
      expect(stop.code).toMatch(/^[A-Z0-9]{2,12}$/);
      expect(stop.countryCode).toMatch(/^[A-Z]{2}$/);
      expect(new Intl.DateTimeFormat('en', { timeZone: stop.timeZone }).resolvedOptions().timeZone).toBe(
        stop.timeZone,
      );
    }
  });

  it('has at least 20 uniquely coded routes between known stops', () => {
    expect(demoRoutes.length).toBeGreaterThanOrEqual(20);
    expect(new Set(demoRoutes.map((route) => route.code)).size).toBe(demoRoutes.length);
    for (const route of demoRoutes) {
      expect(route.code).toBe(`${route.originStopCode}-${route.destinationStopCode}`);
      expect(stopsByCode.has(route.originStopCode)).toBe(true);
      expect(stopsByCode.has(route.destinationStopCode)).toBe(true);
      const stopCodes = route.intermediateStops.map((stop) => stop.stopCode);
      expect(stopCodes.every((code) => stopsByCode.has(code))).toBe(true);
      expect(new Set([route.originStopCode, route.destinationStopCode, ...stopCodes]).size).toBe(
        stopCodes.length + 2,
      );
      const minutes = route.intermediateStops.map((stop) => stop.minutesFromOrigin);
      expect([...minutes].sort((left, right) => left - right)).toEqual(minutes);
      expect(minutes.every((minute) => minute > 0 && minute < route.typicalDurationMinutes)).toBe(true);
    }
  });

  it('has coach-like speeds and 2 to 4 departures a day outside the DST switch hour', () => {
    for (const route of demoRoutes) {
      const averageSpeed = route.distanceKm / (route.typicalDurationMinutes / 60);
      expect(averageSpeed).toBeGreaterThan(40);
      expect(averageSpeed).toBeLessThan(100);
      expect(route.departureTimes.length).toBeGreaterThanOrEqual(2);
      expect(route.departureTimes.length).toBeLessThanOrEqual(4);
      for (const time of route.departureTimes) {
        expect(time).toMatch(/^([01]\d|2[0-3]):[0-5]\d$/);
        expect(time.startsWith('02:')).toBe(false);
      }
    }
  });

  it('prices each route in the currency of its origin country, premium above standard', () => {
    for (const route of demoRoutes) {
      expect(route.currency).toBe(currencyByCountry[stopsByCode.get(route.originStopCode)!.countryCode]);
      expect(Number.isSafeInteger(route.standardFareMinor)).toBe(true);
      expect(premiumFareMinor(route.standardFareMinor)).toBeGreaterThan(route.standardFareMinor);
    }
  });

  it('uses known layouts of 40 to 56 seats with some premium rows', () => {
    const layoutCodes = new Set(demoLayouts.map((layout) => layout.code));
    expect(demoRoutes.every((route) => layoutCodes.has(route.layoutCode))).toBe(true);
    for (const layout of demoLayouts) {
      const seatCount = layout.rowCount * layout.seatsPerRow;
      expect(seatCount).toBeGreaterThanOrEqual(40);
      expect(seatCount).toBeLessThanOrEqual(56);
      expect(layout.premiumRowCount).toBeGreaterThan(0);
      expect(layout.premiumRowCount).toBeLessThan(layout.rowCount);
    }
  });

  it('has one demo account per role, two customers, distinct emails', () => {
    expect(demoUsers.map((user) => user.role).sort()).toEqual([
      'admin',
      'agent',
      'customer',
      'customer',
      'driver',
    ]);
    expect(new Set(demoUsers.map((user) => user.email)).size).toBe(demoUsers.length);
  });
});
