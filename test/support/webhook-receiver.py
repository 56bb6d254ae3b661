# A partner's webhook receiver: verifies each POST with the official standardwebhooks package, one JSON line per request.
"""Usage: webhook-receiver.py SECRET [SECRET ...]

Listens on 127.0.0.1 on a port the system picks, and says which on stderr as `listening <port>`. Each request is
verified with Webhook(secret).verify(body, headers) for each secret given, valid when any one verifies: 204 when
valid, 400 when not. Each request writes one line to stdout:
{"id": <webhook-id>, "valid": true|false, "type": <the payload's type>, "error": <why not valid, or null>}.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from standardwebhooks import Webhook, WebhookVerificationError


def main() -> None:
    secrets = sys.argv[1:]
    if not secrets:
        sys.exit("usage: webhook-receiver.py SECRET [SECRET ...]")
    webhooks = [Webhook(secret) for secret in secrets]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            headers = {name.lower(): value for name, value in self.headers.items()}
            error = None
            for webhook in webhooks:
                # A malformed signature header (bad base64, no comma) trips the library with a ValueError.
                try:
                    webhook.verify(body, headers)
                    error = None
                    break
                except (WebhookVerificationError, ValueError) as failure:
                    error = f"{type(failure).__name__}: {failure}"
            event_type = None
            try:
                parsed = json.loads(body)
                if isinstance(parsed, dict):
                    event_type = parsed.get("type")
            except ValueError:
                pass
            line = {"id": headers.get("webhook-id"), "valid": error is None, "type": event_type, "error": error}
            sys.stdout.write(json.dumps(line) + "\n")
            sys.stdout.flush()
            self.send_response(204 if error is None else 400)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:  # the JSON lines are the log
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    sys.stderr.write(f"listening {server.server_address[1]}\n")
    sys.stderr.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
