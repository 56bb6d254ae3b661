# syntax=docker/dockerfile:1
# One image for the booking API, the Temporal worker and the migration job; docker-compose.yml picks the command.

# The runtime base, and the build stage's (which needs npm too). Both default to the official Node 24 LTS image (the
# line of package.json's engines and scripts/node-runtime.cjs); a base without npm takes a NODE_BUILD_IMAGE that has it.
ARG NODE_IMAGE=node:24-bookworm-slim
ARG NODE_BUILD_IMAGE=${NODE_IMAGE}

FROM ${NODE_BUILD_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# The lock names the client workspace; npm ci needs its manifest, nothing else of it.
COPY clients/typescript/package.json ./clients/typescript/
# Install scripts stay off, as on the dev machines: the native parts (Temporal core bridge, swc, argon2)
# ship prebuilt in platform packages, and no dependency needs a postinstall step.
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
# The build's last step writes dist/workflow-bundle.js, which workers start from instead of bundling at start.
COPY scripts/prune-stale-output.cjs scripts/build-workflow-bundle.cjs ./scripts/
RUN npm run build && npm prune --omit=dev --ignore-scripts
# Production workers refuse to bundle at start: the image build fails here instead if pruning the dev packages
# removed or changed a file the bundle was made from.
RUN node -e "const found = require('./dist/src/worker/workflow-bundle.js').findPrebuiltWorkflowBundle(); \
  if (found.kind !== 'prebuilt') { console.error(found.reason); process.exit(1); }"

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# package.json marks the project root that the code resolves openapi/ and dist/ from.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The API serves the OpenAPI document at /openapi.yaml straight from this file.
COPY openapi ./openapi
# proto/reflection/descriptor-set.binpb, read at start: the contracts' options (API and worker), gRPC reflection.
COPY proto ./proto
# Files stay root-owned and the processes run as the image's unprivileged user, so they cannot rewrite their own code.
# The official image has `node` (uid 1000); a plain Debian base gets the same account, so mounted keys owned by uid
# 1000 are readable on either.
RUN id -u node >/dev/null 2>&1 || useradd --uid 1000 --user-group --no-create-home --shell /usr/sbin/nologin node
USER node
EXPOSE 8080 50051
CMD ["node", "--max-semi-space-size=64", "dist/src/api/main.js"]
