// Baseline HTTP process: a bare Koa app answering the service's own response bodies, and a bare argon2 login.
// Run as `node --import tsx bench/baselines/bare-koa.ts`; reads BARE_KOA_PORT and BARE_KOA_BODIES (a JSON file
// mapping a path to the body to answer), prints one JSON line when listening.
import fs from 'node:fs';
import { hash, verify } from '@node-rs/argon2';
import Koa from 'koa';

const port = Number(process.env.BARE_KOA_PORT ?? 0);
const bodies = JSON.parse(
  fs.readFileSync(process.env.BARE_KOA_BODIES ?? '/dev/null', 'utf8') || '{}',
) as Record<string, string>;
const loginPassword = 'bare-login-password';

function readBody(request: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

async function main(): Promise<void> {
  // Hashed like a user's password (the same library and defaults), so a login costs one real argon2 verification.
  const passwordHash = await hash(loginPassword);
  const app = new Koa();
  app.use(async (context) => {
    if (context.method === 'POST' && context.path === '/login') {
      const { password } = JSON.parse(await readBody(context.req)) as { password?: string };
      const matched = await verify(passwordHash, password ?? '');
      context.status = matched ? 200 : 401;
      context.body = { access_token: matched ? 'x'.repeat(700) : null, token_type: 'Bearer' };
      return;
    }
    const body = bodies[context.path];
    context.type = 'application/json';
    context.body = body ?? '{"ok":true}';
  });
  const server = app.listen(port, '127.0.0.1', () => {
    const address = server.address();
    const listening = typeof address === 'object' && address !== null ? address.port : port;
    process.stdout.write(`${JSON.stringify({ ready: true, port: listening, loginPassword })}\n`);
  });
  const stop = () => server.close(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `bare koa failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
