// Swagger UI at /docs in headless Chromium: a seeded demo customer signs in by authorization code + PKCE and tries operations.
import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type Locator } from 'playwright-core';
import { composeApi } from '../../../src/api/composition';
import { aliceDemoUser, demoUsers, seedDemoData } from '../../../dev/seed';
import { emailLookup } from '../../../src/db/user-email';
import { createLogger } from '../../../src/logger';
import { isolatedEncryptionEnvironment } from '../../support/database';
import { startSagaEnvironment, type SagaEnvironment } from '../../support/saga';
import { createTrip, restBookingBody, type TestTrip } from '../../support/trips';

const chromiumPath = '/usr/bin/chromium';
const chromiumFlags = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const stepTimeoutMs = 20_000;
const seededDay = '2027-10-04';
const screenshotDirectory = path.resolve(__dirname, '../../../.data/screenshots');

// The documented responses of an operation run to thousands of pixels; the answer the page got is what counts.
const documentedResponsesHidden = '.responses-table:not(.live-responses-table) { display: none !important; }';

/** Saves a screenshot under .data/screenshots and names it in the test output, where a reviewer looks for it. */
async function saveScreenshot(target: Locator, name: string): Promise<void> {
  fs.mkdirSync(screenshotDirectory, { recursive: true });
  const file = path.join(screenshotDirectory, `docs-sign-in-${name}.png`);
  await target.screenshot({ path: file, style: documentedResponsesHidden });
  process.stdout.write(`screenshot: ${file}\n`);
}

describe('signing in from the docs page', () => {
  let saga: SagaEnvironment;
  let trip: TestTrip;
  let server: http.Server;
  let baseUrl: string;
  let browser: Browser;

  beforeAll(async () => {
    if (!fs.existsSync(chromiumPath)) {
      throw new Error(`this suite drives Debian's chromium at ${chromiumPath}: apt-get install -y chromium`);
    }
    // Real workers hold the seats, so a create from the page answers 201 with the booking held.
    // Keys of this file only, so the demo accounts it seeds have blind indexes no other suite meets, and can go again.
    saga = await startSagaEnvironment({ environment: isolatedEncryptionEnvironment('docsbrowser') });
    await seedDemoData(saga.database, { cipher: saga.cipher, today: seededDay, days: 1 });
    trip = await createTrip(saga.database);
    let handler: http.RequestListener = (_request, response) => response.end();
    server = http.createServer((request, response) => handler(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const config = saga.configWith({ IDP_ISSUER: baseUrl, RATE_LIMIT_PER_IP: '100000' });
    const { app } = await composeApi(
      config,
      createLogger({ level: 'silent', name: 'docs-sign-in' }),
      { database: saga.database, cipher: saga.cipher, connection: saga.connection, temporal: saga.client },
      { taskQueues: saga.taskQueueNames, timings: saga.timings },
    );
    const callback = app.callback();
    handler = (request, response) => void callback(request, response);
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: chromiumFlags });
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    if (saga === undefined) return;
    // The booking's saga ends with the workers; its rows go with the trip, before the demo customer who made it.
    await saga.stopWorkers();
    await trip?.remove();
    await saga
      .database('users')
      .whereIn(
        'email_lookup',
        demoUsers.map((user) => emailLookup(saga.cipher, user.email)),
      )
      .delete();
    await saga.database('identity_signing_keys').where({ issuer: baseUrl }).delete();
    await saga.stop();
  });

  it('authorizes with the oauth2 scheme in a popup, then "Try it out" answers 200 on GET /v1/routes and 201 on POST /v1/bookings', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(stepTimeoutMs);
    const blocked: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
    });
    await page.goto(`${baseUrl}/docs`);
    await page.locator('.auth-wrapper .btn.authorize').click();

    const codeFlow = page
      .locator('.auth-container')
      .filter({ hasText: 'oauth2 (OAuth2, authorizationCode with PKCE)' });
    const clientId = codeFlow
      .locator('input#client_id_authorizationCode, input[data-name="clientId"]')
      .first();
    expect(await clientId.inputValue()).toBe('bus-booking-docs');
    const [popup] = await Promise.all([
      context.waitForEvent('page'),
      codeFlow.locator('.btn.modal-btn.auth.authorize').click(),
    ]);
    popup.setDefaultTimeout(stepTimeoutMs);
    await popup.getByLabel('Email').fill(aliceDemoUser.email);
    await popup.getByLabel('Password').fill(aliceDemoUser.password);
    await Promise.all([popup.waitForEvent('close'), popup.getByRole('button', { name: 'Sign in' }).click()]);

    await codeFlow.locator('button', { hasText: 'Logout' }).waitFor();
    await saveScreenshot(codeFlow, 'signed-in');
    await page.locator('.modal-ux .close-modal').first().click();

    const operation = page
      .locator('#operations-Routes-listRoutes, [id^="operations-"][id$="-listRoutes"]')
      .first();
    await operation.locator('.opblock-summary').click();
    await operation.locator('.try-out__btn').click();
    // Swagger UI fills each parameter with its example; the page token's is not a token of this listing.
    await operation.locator('tr[data-param-name="page_token"] input').fill('');
    // The day this file seeds, so the listing shows the seeded Lisbon to Porto route rather than an empty page.
    await operation.locator('tr[data-param-name="date"] input').fill(seededDay);
    await operation.locator('.execute').click();
    const status = operation.locator('.live-responses-table tr.response .response-col_status').first();
    await status.waitFor();
    expect((await status.innerText()).trim()).toBe('200');
    const routesBody = await operation
      .locator('.live-responses-table .response-col_description pre')
      .first()
      .innerText();
    expect(routesBody).toContain('"code": "LIS-POR"');
    const curl = await operation.locator('.curl-command, .curl').first().innerText();
    expect(curl).toMatch(/Authorization: Bearer ey/);
    await saveScreenshot(operation, 'list-routes-200');

    // The trip is this file's own, so its first seat is free.
    const create = page
      .locator('#operations-Bookings-createBooking, [id^="operations-"][id$="-createBooking"]')
      .first();
    await create.locator('.opblock-summary').click();
    await create.locator('.try-out__btn').click();
    await create.locator('tr[data-param-name="Idempotency-Key"] input').fill(randomUUID());
    await create
      .locator('.body-param__text')
      .fill(JSON.stringify(restBookingBody(trip, trip.seatNumbers[0]), null, 2));
    await create.locator('.execute').click();
    const createStatus = create.locator('.live-responses-table tr.response .response-col_status').first();
    await createStatus.waitFor();
    expect((await createStatus.innerText()).trim()).toBe('201');
    const createdBody = await create
      .locator('.live-responses-table .response-col_description pre')
      .first()
      .innerText();
    expect(createdBody).toContain(trip.tripId);
    expect(createdBody).toMatch(/"status": "PENDING_PAYMENT"/);
    await saveScreenshot(create, 'create-booking-201');
    expect(blocked).toEqual([]);
    await context.close();
  });
});
