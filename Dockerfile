# syntax=docker/dockerfile:1
# The service for production: compiled once, run as an unprivileged user with production
# dependencies only. (Node 20.19 is enough since file-type is overridden to 21; the image keeps
# the newer long-term release.)
ARG NODE_IMAGE=node:22-bookworm-slim

# Build: every dependency, then the TypeScript build.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund --no-save
COPY tsconfig.json tsconfig.build.json ormconfig.ts ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build

# Production dependencies only, from the same lock file.
# `npm ci --omit=dev` is what we want, but it refuses this lock: npm 11 writes the lock without the
# other platforms' optional bindings of jest's unrs-resolver (a dev dependency), and `npm ci`
# checks the whole tree, omitted or not, so it calls the lock out of sync. `npm install --omit=dev
# --no-save` installs the same locked versions and writes nothing back.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund --no-save && npm cache clean --force

# Runtime: root owns the files, the process runs as `node` and cannot change its own code.
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production PORT=3000
WORKDIR /app
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The Node flags of package.json's start script (src/node-flags.spec.ts holds the two equal).
CMD ["node", "--no-allocation-site-pretenuring", "--max-semi-space-size=32", "dist/src/main.js"]
