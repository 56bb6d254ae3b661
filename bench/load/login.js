// k6: POST /api/auth/login, account after account through the seed's load-test pool, so the per-account login
// throttle never sees one account often enough to matter.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import { accountEmail, baseUrl, constantLoad, password, thresholds } from './common.js';

export const options = {
  scenarios: { login: constantLoad() },
  thresholds: {
    ...thresholds('http_req_duration{name:POST /api/auth/login}', 1500),
    'http_req_failed{scenario:login}': ['rate<0.01'],
  },
};

export default function () {
  const response = http.post(
    `${baseUrl}/api/auth/login`,
    JSON.stringify({ email: accountEmail(exec.scenario.iterationInTest), password }),
    { headers: { 'content-type': 'application/json' }, tags: { name: 'POST /api/auth/login' } },
  );
  check(response, {
    'login answered 200 with a token': (answer) =>
      answer.status === 200 && typeof answer.json('access_token') === 'string',
  });
}
