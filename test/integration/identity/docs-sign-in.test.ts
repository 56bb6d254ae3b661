// Swagger UI at /docs in headless Chromium: a seeded demo customer signs in by authorization code + PKCE and tries an operation.
import { expect } from '@jest/globals';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import type { Knex } from 'knex';
import { chromium, type Browser } from 'playwright-core';
import { composeApi } from '../../../src/api/composition';
import { aliceDemoUser, demoUsers, seedDemoData } from '../../../src/db/seed';
import { emailLookup } from '../../../src/db/user-email';
import { createLogger } from '../../../src/logger';
import { temporalConnectionOptions } from '../../../src/security/temporal-connection';
import { isolatedTestCipher, openTestDatabase, testConfig } from '../../support/database';

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

describe('signing in from the docs page', () => {
  // Keys of its own, so the demo accounts it seeds have blind indexes no other suite meets, and can go again.
  const cipher = isolatedTestCipher('docsbrowser');
  let database: Knex;
  let server: http.Server;
  let connection: Connection;
  let baseUrl: string;
  let browser: Browser;

  beforeAll(async () => {
    if (!fs.existsSync(chromiumPath)) {
      throw new Error(`this suite drives Debian's chromium at ${chromiumPath}: apt-get install -y chromium`);
    }
    database = openTestDatabase({ poolSize: 4, applicationName: 'docs-sign-in-tests' });
    await seedDemoData(database, { cipher, today: '2027-10-04', days: 1 });
    let handler: http.RequestListener = (_request, response) => response.end();
    server = http.createServer((request, response) => handler(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const config = testConfig({ IDP_ISSUER: baseUrl, RATE_LIMIT_PER_IP: '100000' });
    // Never dialled: listing routes needs PostgreSQL only.
    connection = Connection.lazy(temporalConnectionOptions(config.temporal));
    const { app } = await composeApi(config, createLogger({ level: 'silent', name: 'docs-sign-in' }), {
      database,
      cipher,
      connection,
      temporal: new Client({ connection, namespace: config.temporal.namespace }),
    });
    const callback = app.callback();
    handler = (request, response) => void callback(request, response);
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: chromiumFlags });
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await connection?.close();
    if (database === undefined) return;
    await database('users')
      .whereIn(
        'email_lookup',
        demoUsers.map((user) => emailLookup(cipher, user.email)),
      )
      .delete();
    await database('identity_signing_keys').where({ issuer: baseUrl }).delete();
    await database.destroy();
  });

  it('authorizes with the oauth2 scheme in a popup, then "Try it out" on GET /v1/routes answers 200', async () => {
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
    await page.locator('.modal-ux .close-modal').first().click();

    const operation = page
      .locator('#operations-Routes-listRoutes, [id^="operations-"][id$="-listRoutes"]')
      .first();
    await operation.locator('.opblock-summary').click();
    await operation.locator('.try-out__btn').click();
    // Swagger UI fills each parameter with its example; the page token's is not a token of this listing.
    await operation.locator('tr[data-param-name="page_token"] input').fill('');
    await operation.locator('.execute').click();
    const status = operation.locator('.live-responses-table tr.response .response-col_status').first();
    await status.waitFor();
    expect((await status.innerText()).trim()).toBe('200');
    const curl = await operation.locator('.curl-command, .curl').first().innerText();
    expect(curl).toMatch(/Authorization: Bearer ey/);
    expect(blocked).toEqual([]);
    await context.close();
  });
});
