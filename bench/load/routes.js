// k6: GET /api/routes with a bearer token, over a few searches a client makes (all, by origin, by date).
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import { baseUrl, constantLoad, signInPool, thresholds } from './common.js';

export const options = {
  scenarios: { routes: constantLoad() },
  thresholds: {
    ...thresholds('http_req_duration{name:GET /api/routes}', 200),
    'http_req_failed{scenario:routes}': ['rate<0.01'],
  },
};

const tomorrow = new Date(Date.now() + 86400000).toISOString().slice(0, 10);
const searches = ['', '?origin=LIS', '?destination=Madrid', `?date=${tomorrow}`, '?page_size=5'];

export function setup() {
  return { accounts: signInPool() };
}

export default function ({ accounts }) {
  const iteration = exec.scenario.iterationInTest;
  const account = accounts[iteration % accounts.length];
  const response = http.get(`${baseUrl}/api/routes${searches[iteration % searches.length]}`, {
    headers: { authorization: `Bearer ${account.token}` },
    tags: { name: 'GET /api/routes' },
  });
  check(response, {
    'routes answered 200 with a page': (answer) =>
      answer.status === 200 && Array.isArray(answer.json('routes')),
  });
}
