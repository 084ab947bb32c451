# syntax=docker/dockerfile:1
# svc-gateway image: docs/deploy.md. Build: docker build -t svc-gateway:0.1.0 .
# Run:   docker run -p 8080:8080 -v svc-data:/data --stop-timeout 35 svc-gateway:0.1.0

ARG NODE_VERSION=22

# --- build: dev dependencies, the postgres patch, TypeScript -> dist/, then production dependencies only ---
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
# Scripts are run by hand, in order: `postinstall` (patch-package) needs patches/, and `prepare` (the
# build) needs src/, which is copied later so that a source change does not redo the install layer.
# No dependency has install scripts of its own (libsql ships prebuilt binaries as optional packages).
COPY package.json package-lock.json ./
COPY patches ./patches
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && ./node_modules/.bin/patch-package --error-on-fail
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# prune keeps the patched node_modules/postgres (a production dependency) as it is.
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# --- runtime: only what runs, as the unprivileged `node` user (uid 1000) ---
FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0 \
    SVC_DATABASE_URL=sqlite:/data/svc-gateway.db
WORKDIR /app
# Owned by root and read-only to the gateway: the process can write only /data (and /tmp).
# package.json is needed at run time ("type": "module" makes dist/*.js ES modules).
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY bin ./bin
# The embedded SQLite file lives here (single instance). With PostgreSQL (SVC_DATABASE_URL=postgres://...)
# nothing is written to it.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 8080
# The gateway drains on SIGTERM: in-flight completions get server.shutdown_grace_ms (20 s by default), then
# up to 12 s to settle and flush (docs/operations.md). `docker stop` waits only 10 s before SIGKILL: give it
# --stop-timeout 35 (Compose: stop_grace_period: 35s). Exec form below, so node is PID 1 and gets the signal.
STOPSIGNAL SIGTERM
# Liveness only (/healthz: the process answers). Readiness (/readyz: store reachable, migrations applied, not
# draining) is for orchestrators and load balancers. No curl in slim images: node's own fetch.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "bin/svc-gateway.js"]
CMD ["serve"]
