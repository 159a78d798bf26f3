# The service as a container image: compiled in one stage, run from a small one as a non-root user.
#
#   docker build -t tool-orchestration-service .
#   docker run --read-only --tmpfs /tmp -p 3000:3000 tool-orchestration-service
#
# BASE_IMAGE is where both stages start: any image with Node.js >= 20.19, npm and a POSIX shell.
# The tests build one locally from the host's own node (nothing can be pulled there): docs/deploy.md.
ARG BASE_IMAGE=node:20-bookworm-slim
# Where the compile stage starts (npm, registry access); the same image unless told otherwise.
ARG BUILD_IMAGE=${BASE_IMAGE}

FROM ${BUILD_IMAGE} AS build
WORKDIR /app
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
COPY package.json package-lock.json ./
# The SDK's manifest: the `file:` dev dependency npm links as node_modules/@tos/sdk (sources only; the build links its own).
COPY src/tools/sdk/package.json ./src/tools/sdk/
# No install scripts: the root postinstall prepares the conformance tests, and no dependency needs one.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ormconfig.ts ./
# The build's last step, run again once the dev dependencies are gone: the name @tos/sdk for the built service.
COPY scripts/link-sdk.js scripts/stale-output.js ./scripts/
COPY src ./src
COPY tools ./tools
# Then only what runs: production dependencies without source maps and type declarations
# (typescript/lib stays whole: the console is compiled by the service itself).
RUN npm run build \
 && rm -f dist/*.tsbuildinfo \
 && npm prune --omit=dev --ignore-scripts \
 && node scripts/link-sdk.js \
 && find node_modules ! -path 'node_modules/typescript/lib/*' -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) -exec rm -f {} + \
 && mkdir -p /volume/data

FROM ${BASE_IMAGE}
LABEL org.opencontainers.image.title="Tool Orchestration Service" \
      org.opencontainers.image.description="Developer-ops tools over REST (/v1) and MCP (/v1/mcp)"
WORKDIR /app
# Everything the service writes goes to /data (the embedded database, WORKSPACE_ROOT) or /tmp
# (workspace unpacking, tools' scratch files), so the root file system can be read-only.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    HEALTH_PORT=8081 \
    DATA_DIR=/data/db \
    WORKSPACE_ROOT=/data/workspace \
    HOME=/tmp
# Owned by root and read-only to the service: it cannot change its own code.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY console ./console
# 1000 is the `node` user of the official images; numeric, so Kubernetes' runAsNonRoot can check it.
COPY --from=build --chown=1000:1000 /volume/data /data
VOLUME ["/data"]
USER 1000:1000
EXPOSE 3000 8081
# HEALTH_PORT answers /healthz in every role (a worker has no other HTTP) and stays plain HTTP under TLS_CERT.
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.HEALTH_PORT || process.env.PORT) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# --role api | worker | all (the default, one process doing everything): README "Running API and worker processes".
CMD ["node", "dist/src/main.js"]
