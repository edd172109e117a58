# product-sync: one image for the worker, the console, the CLI and the sandbox (pick with the command).
# Build stage: full install, typecheck and compile src/ to dist/ (a broken tree fails the image build); run stage:
# production dependencies only, non-root, running dist/ (bin/product-sync.mjs runs dist/cli.js with source maps on and
# Node's compile cache). Node: the current LTS (26).
FROM node:26-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` (the build) needs the sources, copied below; no dependency needs its install script here.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json vitest.config.ts ./
COPY scripts ./scripts
COPY src ./src
COPY test ./test
COPY bench ./bench
RUN npm run typecheck && npm run build

FROM node:26-trixie-slim AS run
ENV NODE_ENV=production \
    REPORT_DIR=/data/reports \
    UPLOAD_DIR=/data/uploads
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY --from=build /app/dist ./dist
COPY mappings ./mappings
# The mapping JSON Schema the mapping files (and `mapping init`'s drafts) name on their first line.
COPY schemas ./schemas
COPY jobs ./jobs
COPY samples ./samples
RUN mkdir -p /data/reports /data/uploads && chown -R node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080 4010
HEALTHCHECK --interval=30s --timeout=5s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/health').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(0))"
ENTRYPOINT ["node", "--max-semi-space-size=8", "bin/product-sync.mjs"]
CMD ["worker"]
